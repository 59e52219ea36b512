import CodableDefaults
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
