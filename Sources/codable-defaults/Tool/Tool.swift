import CodableDefaults
import Foundation

/// One run of the tool: finds the command the command line names, has it take its arguments, runs it, and
/// knows how to exit.
///
/// Stores are opened with the `.manual` save mode and saved by an explicit `save()`, so a failed save is
/// reported and sets the exit status. The stores stay open until the process exits.
final class Tool {
    /// The tool's version.
    static let version = "0.1.0"

    /// The stores this run opened (``open(_:writes:)``), kept alive until the process exits.
    var openStores: [OpenedStore] = []
    /// Receives the errors the stores cannot throw.
    let reporter = ErrorReporter()

    /// Runs the command given by `arguments` (without the program's name).
    ///
    /// - Parameters:
    ///   - arguments: The arguments.
    ///   - notUTF8: The arguments (by index) whose bytes are not valid UTF-8, shown with `\xNN` escapes.
    /// - Returns: The exit status.
    func run(_ arguments: [String], notUTF8: [Int: String] = [:]) -> ExitStatus {
        do throws(ToolError) {
            try runCommandLine(arguments, notUTF8: notUTF8)
        } catch {
            Output.printError(error.rendered)
            return error.status
        }
        return reporter.hasReported ? .failure : .success
    }

    /// Ends the process with `status`.
    func exit(with status: ExitStatus) -> Never {
        Foundation.exit(status.rawValue)
    }

    /// Finds the command of the first argument and runs it; `--help`, `-h` and `--version` come before any.
    private func runCommandLine(_ arguments: [String], notUTF8: [Int: String]) throws(ToolError) {
        guard let first = arguments.first else {
            throw .usage("missing command")
        }
        if first == "--help" || first == "-h" {
            // `help [COMMAND]`, its arguments taken as they are.
            let arguments = ScannedArguments(
                configuration: HelpCommand.configuration, positionals: Array(arguments.dropFirst()))
            return try run(HelpCommand.self, arguments)
        }
        if first == "--version" {
            if arguments.count > 1 {
                throw .usage("unexpected argument '\(arguments[1])' after --version")
            }
            return try Output.print("codable-defaults \(Self.version)\n")
        }
        if ArgumentScanner.looksLikeOption(first) {
            throw ArgumentScanner.unknownTopLevelOption(first)
        }
        guard let command = Commands.named(first) else {
            let hint = ArgumentScanner.suggestion(for: first, among: Commands.all.map { $0.configuration.name })
            throw .usage("unknown command '\(first)'\(hint)")
        }
        let configuration = command.configuration
        let shifted = Dictionary(uniqueKeysWithValues: notUTF8.compactMap { $0.key > 0 ? ($0.key - 1, $0.value) : nil })
        let scanned: ScannedArguments?
        do throws(ToolError) {
            scanned = try ArgumentScanner.scan(Array(arguments.dropFirst()), notUTF8: shifted, for: configuration)
        } catch {
            throw error.shown(with: configuration)
        }
        guard let scanned else {
            return try Output.print(HelpText.text(for: configuration))
        }
        try run(command, scanned)
    }

    /// Has `command` take its arguments from `arguments`, and runs it. A usage error thrown while taking them
    /// or running is shown with the command's usage line.
    private func run(_ command: any ToolCommand.Type, _ arguments: ScannedArguments) throws(ToolError) {
        var arguments = arguments
        // A dry run's changes are discarded when it ends, however it ends: nothing writes them, at exit either.
        defer {
            for store in openStores where store.isDryRun { store.defaults.discardUnsavedChanges() }
        }
        do throws(ToolError) {
            try arguments.refuseNotUTF8()
            let parsed = try command.init(parsing: &arguments)
            try arguments.refuseUnexpected()
            try parsed.run(in: self)
        } catch {
            throw error.shown(with: command.configuration)
        }
    }
}

extension ToolError {
    /// The error, shown with the usage line of `command` when it is a usage error that names no command yet.
    fileprivate func shown(with command: CommandConfiguration) -> ToolError {
        var error = self
        if error.status == .usage && error.command == nil { error.command = command }
        return error
    }
}
