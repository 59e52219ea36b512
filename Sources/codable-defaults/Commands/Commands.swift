/// The tool's commands, in the order of its help.
///
/// Adding a command is one new file and one line here: a type in `Commands/<Name>Command.swift` that conforms
/// to ``ToolCommand`` (its name, arguments, options and help declared in its `configuration`, its arguments
/// taken in `init(parsing:)`, its work in `run(in:)`), and its name in this list. Nothing else switches over the
/// commands: the scanner, the usage errors and the help (with its lists of commands: which take `--etcd` or
/// layer options, which exit with which status, which `defaults(1)` does not have) are made from the declarations.
enum Commands {
    /// Every command, in the order of the tool's help.
    ///
    /// Read a declaration with a closure (`all.map { $0.configuration }`), not a key path: Swift 6.3's compiler
    /// crashes lowering a key path to a static member through `any ToolCommand.Type`.
    static let all: [any ToolCommand.Type] = [
        ReadCommand.self,
        ReadTypeCommand.self,
        WriteCommand.self,
        UpdateCommand.self,
        EditCommand.self,
        RenameCommand.self,
        DeleteCommand.self,
        KeysCommand.self,
        CheckCommand.self,
        DescribeCommand.self,
        WatchCommand.self,
        ImportCommand.self,
        ExportCommand.self,
        DiffCommand.self,
        ExplainCommand.self,
        HistoryCommand.self,
        UndoCommand.self,
        RekeyCommand.self,
        HelpCommand.self,
    ]

    /// The command named `name`, or `nil` when there is none.
    static func named(_ name: String) -> (any ToolCommand.Type)? {
        all.first { $0.configuration.name == name }
    }
}
