import CodableDefaults
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The tool's exit statuses, as documented in its help.
enum ExitStatus: Int32, Sendable {
    /// The command did what it was asked.
    case success = 0
    /// Anything else failed: writing the store, the export file or the output.
    case failure = 1
    /// The command line is wrong.
    case usage = 2
    /// `read` (or `delete` without `--force`) was given a key with no stored value.
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
    /// The command whose usage line and help follow a usage error.
    var command: Command?

    /// Makes an error.
    init(_ status: ExitStatus, _ message: String?, command: Command? = nil) {
        self.status = status
        self.message = message
        self.command = command
    }

    /// Makes the error of a failed library call, with the exit status its code calls for.
    init(_ error: DefaultsError) {
        // Codes being added to the library are matched by name, so the tool builds with and without them.
        switch error.code {
        case .readFailed, .invalidJSON, .fileTooLarge, .notARegularFile, .decodingFailed,
            DefaultsError.Code(rawValue: "unsupportedSchemaVersion"):
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

    /// A usage error: the message is followed by the command's usage line and where to find its help.
    static func usage(_ message: String, command: Command?) -> ToolError {
        ToolError(.usage, message, command: command)
    }

    /// The text for standard error: `codable-defaults: message`, plus the usage hint of a usage error.
    var rendered: String {
        guard let message else { return "" }
        var text = "codable-defaults: \(message)\n"
        if status == .usage {
            if let command, command != .help {
                text += "Usage: \(CommandSpec.spec(for: command).usage)\n"
                text += "See 'codable-defaults help \(command.rawValue)'.\n"
            } else {
                text += "See 'codable-defaults --help'.\n"
            }
        }
        return text
    }
}

/// Writing to standard output and standard error, unbuffered, with errors reported.
enum Output {
    /// Writes `text` to standard output.
    ///
    /// - Throws: A failure when the output cannot be written (a closed pipe, a full disk).
    static func print(_ text: String) throws(ToolError) {
        if let code = writeAll(text, to: STDOUT_FILENO) {
            throw ToolError(.failure, "cannot write to standard output: \(String(cString: strerror(code)))")
        }
    }

    /// Writes `text` to standard error. A failure is ignored: there is nowhere left to report it.
    static func printError(_ text: String) {
        _ = writeAll(text, to: STDERR_FILENO)
    }

    /// Writes all of `text` to `descriptor`, retrying interrupted and short writes.
    ///
    /// - Returns: `nil`, or the `errno` of the failed write.
    static func writeAll(_ text: String, to descriptor: Int32) -> Int32? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }
}

/// Receives the errors a store cannot throw (a stored value that does not decode, a change on disk that
/// does not parse while watching): prints each and remembers that one happened.
final class ErrorReporter: Sendable {
    /// How many errors were reported, behind the package's lock (`Mutex` needs newer Apple systems than the
    /// package's).
    private let reported = Locked(0)

    /// How many errors were reported.
    var count: Int { reported.withLock { $0 } }

    /// Whether any error was reported.
    var hasReported: Bool { count > 0 }

    /// The handler to install as a store's `onError`.
    var handler: @Sendable (DefaultsError) -> Void {
        { error in
            self.reported.withLock { $0 += 1 }
            Output.printError("codable-defaults: \(error)\n")
        }
    }
}

/// The JSON texts the tool prints.
enum JSONText {
    /// The value as compact JSON with sorted keys, on one line.
    static func compact(_ value: JSONValue) -> String {
        value.description
    }

    /// A store's top-level members pretty-printed, in the order given: nested members sorted by key (by UTF-8
    /// bytes), two spaces per level, as `jq` does. A list rather than a `JSONValue.object`: the dictionary's
    /// `String` keys would merge two names that differ only in Unicode normalization, which the store keeps
    /// apart.
    static func pretty(members: [(key: String, value: JSONValue)]) -> String {
        guard !members.isEmpty else { return "{}" }
        var text = "{\n"
        for (index, member) in members.enumerated() {
            text += (index == 0 ? "" : ",\n") + "  " + compact(.string(member.key)) + ": "
            appendPretty(member.value, indent: "  ", to: &text)
        }
        return text + "\n}"
    }

    /// The store file's format, written by the library's own writer: one member per line, sorted by key (by
    /// UTF-8 bytes), each value compact, a final newline.
    static func storeFile(_ members: [(key: String, value: JSONValue)]) -> String {
        let image = FileImage(members: members.lazy.map { (name: $0.key, value: Array(compact($0.value).utf8)) })
        return String(decoding: image.bytes, as: UTF8.self)
    }

    /// The keys of `members` in the store file's order: by UTF-8 bytes.
    static func sortedKeys(_ members: [String: JSONValue]) -> [String] {
        members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func appendPretty(_ value: JSONValue, indent: String, to text: inout String) {
        let inner = indent + "  "
        switch value {
        case .object(let members) where !members.isEmpty:
            text += "{\n"
            for (index, key) in sortedKeys(members).enumerated() {
                text += (index == 0 ? "" : ",\n") + inner + compact(.string(key)) + ": "
                appendPretty(members[key]!, indent: inner, to: &text)
            }
            text += "\n" + indent + "}"
        case .array(let elements) where !elements.isEmpty:
            text += "[\n"
            for (index, element) in elements.enumerated() {
                text += (index == 0 ? "" : ",\n") + inner
                appendPretty(element, indent: inner, to: &text)
            }
            text += "\n" + indent + "]"
        default:
            text += compact(value)
        }
    }
}
