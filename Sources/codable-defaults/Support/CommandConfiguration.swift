/// What a command declares: its name, the arguments and options it takes, and its help.
///
/// The usage line, the command's help and its line in the tool's help are made from it, and so are the usage
/// errors the scanner finds on its own.
struct CommandConfiguration: Sendable {
    /// The command's name: the first argument.
    let name: String
    /// One line saying what the command does.
    let abstract: String
    /// The positional arguments, in order (the store's FILE first, for a command that works on a store).
    let arguments: [ArgumentDeclaration]
    /// The options the command accepts (besides `--help`), in the order of its help: the option groups first.
    let options: [OptionDeclaration]
    /// Paragraphs that explain the command; a paragraph that starts with two spaces is laid out already.
    let discussion: [String]
    /// Example command lines.
    let examples: [String]
    /// Whether the command is about the tool rather than a store (`help`): its help lists no exit statuses,
    /// its usage errors point to the tool's help, and its arguments (names it compares, never uses) are not
    /// refused when they are not UTF-8.
    let isAboutTheTool: Bool

    /// Declares a command.
    init(
        name: String, abstract: String, arguments: [ArgumentDeclaration], options: [OptionDeclaration] = [],
        discussion: [String] = [], examples: [String] = [], isAboutTheTool: Bool = false
    ) {
        self.name = name
        self.abstract = abstract
        self.arguments = arguments
        self.options = options
        self.discussion = discussion
        self.examples = examples
        self.isAboutTheTool = isAboutTheTool
    }

    /// The arguments after the command's name, as in its usage line: the positional arguments, then the
    /// options that must be given (`FILE KEY --add N`).
    var synopsis: String {
        let required = options.filter(\.isRequired).map(\.synopsis)
        return (arguments.map(\.synopsis) + required).joined(separator: " ")
    }

    /// The usage line: `codable-defaults COMMAND SYNOPSIS [OPTIONS]`.
    var usage: String {
        "codable-defaults \(name) \(synopsis)" + (options.isEmpty ? "" : " [OPTIONS]")
    }

    /// Whether the command works on a store: its first argument is FILE (or `--suite`, `--standard`...).
    var takesStore: Bool {
        arguments.first?.kind == .store
    }

    /// Whether the command takes a type flag of `defaults(1)` (`-int 5`): its last argument is the flag's values.
    var takesTypeFlag: Bool {
        arguments.contains { $0.arity == .typedValues }
    }

    /// The declared option named `name` (without its leading `--`).
    func option(named name: String) -> OptionDeclaration? {
        options.first { $0.name == name }
    }
}
