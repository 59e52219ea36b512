/// `help [COMMAND]` (and `--help [COMMAND]`, `-h`): the help of the tool or of a command.
struct HelpCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "help", origin: .defaults, abstract: "Show the help of the tool or of a command.",
        arguments: [.value("COMMAND", .optional)], examples: ["codable-defaults help write"], isAboutTheTool: true)

    /// The command whose help to show, or `nil` for the tool's.
    let topic: CommandConfiguration?

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        let name = arguments.takeOptional()
        try arguments.refuseUnexpected()
        topic = try name.map { (name) throws(ToolError) in try Self.command(named: name) }
    }

    /// The declaration of the command named `name`.
    ///
    /// - Throws: A usage error when no command has that name.
    private static func command(named name: String) throws(ToolError) -> CommandConfiguration {
        guard let command = Commands.named(name) else {
            let hint = ArgumentScanner.suggestion(for: name, among: Commands.all.map { $0.configuration.name })
            throw .usage("no help for '\(name)': it is not a command\(hint)")
        }
        return command.configuration
    }

    func run(in tool: Tool) throws(ToolError) {
        if let topic {
            try Output.print(HelpText.text(for: topic))
        } else {
            try Output.print(HelpText.general + "\n")
        }
    }
}
