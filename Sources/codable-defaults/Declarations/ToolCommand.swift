/// A command of the tool: one type, in one file, that declares what it takes and runs itself.
///
/// The declaration (``configuration``) is the one source of the command's usage line, its help, its line in
/// the tool's help and its place in the lists there (the commands that take `--etcd` or layer options, those of
/// each exit status, those `defaults(1)` does not have), and the usage errors the scanner finds on its own (an
/// unknown option, an option missing its value, a type flag for a command that takes none, an argument that is
/// not UTF-8, a FILE given together with `--suite`). ``init(parsing:)`` takes what the scanner found, in the
/// order of the usage line, and checks what only the command knows; ``run(in:)`` does the work. A usage error
/// thrown by either is shown with this command's usage line.
///
/// To add a command: write its type in `Commands/<Name>Command.swift` and add it to ``Commands/all``.
protocol ToolCommand: Sendable {
    /// The command's name, arguments, options and help.
    static var configuration: CommandConfiguration { get }

    /// The command as the command line asks for it.
    ///
    /// - Parameter arguments: What the scanner found after the command's name; the command takes its
    ///   positional arguments from it (what it leaves is an unexpected argument).
    /// - Throws: A usage error naming what is wrong.
    init(parsing arguments: inout ScannedArguments) throws(ToolError)

    /// Does what the command was asked, with the stores and output of `tool`.
    ///
    /// - Throws: The failure that ends the command, with its exit status.
    func run(in tool: Tool) throws(ToolError)
}
