#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Defaults.HistoryEntry.Author {
    /// This process: its identifier now, and the user, program and host looked up once.
    package static var current: Defaults.HistoryEntry.Author {
        var author = lookedUp
        author.processID = getpid()
        return author
    }

    /// The user, program and host of this process, looked up on first use.
    private static let lookedUp = Defaults.HistoryEntry.Author(
        processID: 0, user: userName(), program: ProcessInfo.processInfo.processName, host: hostName())

    /// The effective user's name from the user database, else its number.
    private static func userName() -> String {
        let uid = geteuid()
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        // The entry's strings point into the buffer: read them while it is lent.
        let name = buffer.withUnsafeMutableBufferPointer { buffer -> String? in
            guard getpwuid_r(uid, &entry, buffer.baseAddress!, buffer.count, &found) == 0, found != nil,
                let name = entry.pw_name
            else { return nil }
            return String(cString: name)
        }
        return name ?? String(uid)
    }

    /// The machine's host name, or `localhost` when it cannot be read.
    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let status = buffer.withUnsafeMutableBufferPointer { gethostname($0.baseAddress!, $0.count - 1) }
        guard status == 0 else { return "localhost" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
