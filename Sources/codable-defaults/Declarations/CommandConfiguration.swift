/// What a command declares: its name, the arguments and options it takes, and its help.
///
/// The usage line, the command's help and its line in the tool's help are made from it, and so are the usage
/// errors the scanner finds on its own, and every list of commands in the tool's help (which commands take
/// `--etcd`, which take layer options, which exit with which status, which are not in `defaults(1)`).
struct CommandConfiguration: Sendable {
    /// Whether a command is a verb of macOS `defaults(1)`, as the tool's help lists the commands it adds.
    enum Origin: Sendable, Equatable {
        /// A verb of `defaults(1)` (`read`, `write`, `delete`...).
        case defaults
        /// A command `defaults(1)` does not have; `note`, when given, follows its name in the list of added
        /// commands: "update (an atomic --add)".
        case added(note: String? = nil)
    }

    /// A case of an exit status that is the command's own, as the EXIT STATUS section of the help lists it.
    ///
    /// The section names, for each status, the commands that exit with it and when; each case is a phrase of
    /// that list, in the list's words. Failures every command shares (the output cannot be written, a usage
    /// error, an unreadable or invalid store file) are not declared.
    enum ExitCase: Sendable, Equatable {
        /// Exit 0 when the command finds no difference, 1 when it finds one (`diff`, as diff(1) exits): a
        /// difference is an answer, not a failure.
        case difference
        /// Exit 1: the stored value is of another type than the command changes ("-array-add, -dict-add").
        case wrongType(String)
        /// Exit 1: another failure of the command's own ("update's sum overflows").
        case failure(String)
        /// Exit 3: a key the command needs has no value ("read KEY", "delete KEY without --force").
        case keyNotFound(String)
        /// Exit 4: a file the command needs is missing ("a missing SOURCE for import").
        case missingFile(String)
        /// Exit 4: a file the command reads is not valid where it needs it, as the user left it ("an edited copy
        /// that does not parse, for edit").
        case invalidFile(String)
        /// Exit 4: on etcd, a key's text is not JSON where the command reads it ("the whole store's read").
        case etcdTextNotJSON(String)
        /// Exit 5: the command writes the store, so its change may be written but not confirmed durable.
        case notDurable
    }

    /// The command's name: the first argument.
    let name: String
    /// Whether the command is a verb of `defaults(1)`.
    let origin: Origin
    /// One line saying what the command does.
    let abstract: String
    /// For a command that works on a store, the option groups it takes (``StoreGroups``); `nil` for one that does not.
    let store: StoreGroups?
    /// The positional arguments, in order (the store's FILE first, for a command that works on a store).
    let arguments: [ArgumentDeclaration]
    /// The options the command accepts (besides `--help`), in the order of its help: the store's groups first,
    /// `--dry-run` last.
    let options: [OptionDeclaration]
    /// Paragraphs that explain the command; a paragraph that starts with two spaces is laid out already.
    let discussion: [String]
    /// Example command lines.
    let examples: [String]
    /// The cases of exit statuses that are the command's own, in the order of each status's list.
    let exitCases: [ExitCase]
    /// Whether the command is about the tool rather than a store (`help`): its help lists no exit statuses,
    /// its usage errors point to the tool's help, and its arguments (names it compares, never uses) are not
    /// refused when they are not UTF-8.
    let isAboutTheTool: Bool

    /// Declares a command. `arguments` and `options` are the command's own; a command that works on a store names
    /// in `store` the option groups it takes besides the store's location: FILE then comes before `arguments`, and
    /// the groups' options around `options` (``StoreGroups/options(around:)``).
    init(
        name: String, origin: Origin, abstract: String, store: StoreGroups? = nil,
        arguments: [ArgumentDeclaration] = [],
        options: [OptionDeclaration] = [], discussion: [String] = [], examples: [String] = [],
        exitCases: [ExitCase] = [], isAboutTheTool: Bool = false
    ) {
        self.name = name
        self.origin = origin
        self.abstract = abstract
        self.store = store
        self.arguments = (store == nil ? [] : [.store]) + arguments
        self.options = store?.options(around: options) ?? options
        self.discussion = discussion
        self.examples = examples
        self.exitCases = exitCases
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

    /// Whether the command takes a type flag of `defaults(1)` (`-int 5`): its last argument is the flag's values.
    var takesTypeFlag: Bool {
        arguments.contains { $0.arity == .typedValues }
    }

    /// Whether the command works on a store and takes the option group `group`.
    func takes(_ group: StoreGroups) -> Bool {
        store?.contains(group) ?? false
    }

    /// The declared option named `name` (without its leading `--`).
    func option(named name: String) -> OptionDeclaration? {
        options.first { $0.name == name }
    }
}
