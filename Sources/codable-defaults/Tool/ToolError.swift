import CodableDefaults

/// The tool's exit statuses, as documented in its help.
enum ExitStatus: Int32, Sendable {
    /// The command did what it was asked.
    case success = 0
    /// Anything else failed: writing the store, the export file or the output.
    case failure = 1
    /// The command line is wrong.
    case usage = 2
    /// A key the command needs has no value (`read KEY`; each command declares it in its `exitCases`).
    case keyNotFound = 3
    /// The store file (or the import source) is missing where it must exist, unreadable, or not valid.
    case badFile = 4
    /// The change was written to the store file, but flushing its directory failed: it may not survive a
    /// power loss. A warning, not a failure: the file holds the change.
    case notDurable = 5
}

/// A failure that ends the command: an exit status and the message for standard error.
struct ToolError: Error, Sendable {
    /// The exit status.
    var status: ExitStatus
    /// The message, without the `codable-defaults: ` prefix; `nil` when it was already printed.
    var message: String?
    /// The command whose usage line and help follow a usage error; `nil` for an error found before the
    /// command was known (and until the command that throws it is known: the tool fills it in).
    var command: CommandConfiguration?
    /// Whether a usage error is followed by the command's usage line: not for a value a schema refuses
    /// (``refused(_:)``), which is no mistake in the command line's form.
    var showsUsage = true

    /// Makes an error.
    init(_ status: ExitStatus, _ message: String?, command: CommandConfiguration? = nil) {
        self.status = status
        self.message = message
        self.command = command
    }

    /// Makes the error of a failed library call, with the exit status its code calls for.
    init(_ error: DefaultsError) {
        // Codes being added to the library are matched by name, so the tool builds with and without them.
        switch error.code {
        case .readFailed, .invalidJSON, .fileTooLarge, .notARegularFile, .decodingFailed,
            DefaultsError.Code(rawValue: "unsupportedSchemaVersion"), .encryptionKeyMissing, .encryptionKeyMismatch:
            self.init(.badFile, error.description)
        case .invalidArgument, DefaultsError.Code(rawValue: "reservedKey"):
            self.init(.usage, error.description)
        case .notDurable:
            self.init(
                .notDurable,
                "warning: the change was written but is not confirmed durable: \(error.description)")
        default:
            self.init(.failure, error.description)
        }
    }

    /// A value the schema refuses (exit status 2, as a usage error, without the usage line).
    static func refused(_ message: String) -> ToolError {
        var error = ToolError(.usage, message)
        error.showsUsage = false
        return error
    }

    /// A usage error: the message is followed by the command's usage line and where to find its help (the
    /// command is filled in by the tool, or the tool's help is named before a command is known).
    static func usage(_ message: String) -> ToolError {
        ToolError(.usage, message)
    }

    /// The text for standard error: `codable-defaults: message`, plus the usage hint of a usage error.
    var rendered: String {
        guard let message else { return "" }
        var text = "codable-defaults: \(message)\n"
        if status == .usage && showsUsage {
            if let command, !command.isAboutTheTool {
                text += "Usage: \(command.usage)\n"
                text += "See 'codable-defaults help \(command.name)'.\n"
            } else {
                text += "See 'codable-defaults --help'.\n"
            }
        }
        return text
    }
}

extension ToolError {
    /// The error of a store file that did not open. A key in the file over the length limit makes the file
    /// one the tool cannot read: exit status 4, like invalid JSON (a KEY argument over the limit is refused
    /// earlier, as a usage error).
    init(opening error: DefaultsError) {
        if error.code == .keyTooLong {
            self.init(.badFile, error.description)
        } else {
            self.init(error)
        }
    }
}
