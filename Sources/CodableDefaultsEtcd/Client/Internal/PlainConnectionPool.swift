import CodableDefaults
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The idle keep-alive connections of a client's `http://` calls (``PlainHTTP``), at most
/// ``maximumIdlePerEndpoint`` per endpoint, so that a call does not pay a TCP connection each time.
///
/// A call takes an idle connection of its endpoint (or opens one) and gives it back only when its answer was whole
/// and the server said it keeps the connection open; a connection whose exchange failed is closed ("closed on
/// errors"). A connection idle for longer than ``maximumIdleTime``, or that the server closed while it waited (it
/// polls readable: an end of stream, or bytes no request asked for), is closed instead of handed out. More
/// concurrent calls than idle connections open connections of their own; what is given back past the bound is
/// closed. Thread-safe.
final class PlainConnectionPool: Sendable {
    /// The most idle connections kept per endpoint.
    static let maximumIdlePerEndpoint = 4

    /// How long a connection may wait idle and still be used, in seconds: shorter than the idle timeouts that
    /// servers and proxies commonly keep, so that a call rarely meets a connection closed under it.
    static let maximumIdleTime: TimeInterval = 20

    private struct Idle {
        var socket: Int32
        var since: Date
    }

    private let idle = Locked<[String: [Idle]]>([:])
    private let opened = Locked(0)

    /// How many connections the client's calls opened.
    var connectionsOpened: Int { opened.withLock { $0 } }

    /// How many connections wait idle.
    var idleCount: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    /// Counts a connection a call opened.
    func recordOpened() { opened.withLock { $0 += 1 } }

    /// An idle connection of `endpoint` still open and fresh, or `nil` when none waits; the stale ones met on the
    /// way are closed.
    func take(_ endpoint: String) -> Int32? {
        while let entry = idle.withLock({ $0[endpoint]?.popLast() }) {
            if -entry.since.timeIntervalSinceNow < Self.maximumIdleTime && Self.isQuiet(entry.socket) {
                return entry.socket
            }
            close(entry.socket)
        }
        return nil
    }

    /// Keeps `socket` for the next call to `endpoint`, or closes it when enough wait.
    func giveBack(_ socket: Int32, _ endpoint: String) {
        let kept = idle.withLock { idle in
            guard idle[endpoint, default: []].count < Self.maximumIdlePerEndpoint else { return false }
            idle[endpoint, default: []].append(Idle(socket: socket, since: Date()))
            return true
        }
        if !kept { close(socket) }
    }

    /// Closes every idle connection: the client is going away.
    func drain() {
        let all = idle.withLock { idle in
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        for entry in all { close(entry.socket) }
    }

    deinit { drain() }

    /// Whether nothing waits to be read on the idle `socket`: a server that closed it, or sent what no request
    /// asked for, makes it readable, and it is of no more use.
    private static func isQuiet(_ socket: Int32) -> Bool {
        var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 0)
        return ready == 0
    }
}
