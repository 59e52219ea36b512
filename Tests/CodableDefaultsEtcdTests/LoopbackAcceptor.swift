import CodableDefaults
import CodableDefaultsTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listener on a free port of 127.0.0.1 for the tests' small servers and proxies: its thread accepts connections
/// and hands each to `handle` on a thread of its own, until ``stop()`` (the thread then closes the listener; a
/// connection's handler closes its connection).
final class LoopbackAcceptor: Sendable {
    /// The port listened on.
    let port: Int
    private let stopped = Locked(false)

    /// Listens, and accepts on a thread of its own.
    ///
    /// - Throws: ``ChildProcessError`` naming `what` when the socket cannot listen.
    init(_ what: String, handle: @escaping @Sendable (Int32) -> Void) throws {
        let listener = tcpSocket()
        guard listener >= 0, bindLoopback(listener, port: 0) == 0, listen(listener, 16) == 0,
            let port = boundPort(listener)
        else { throw ChildProcessError(description: "\(what) cannot listen: errno \(errno)") }
        self.port = port
        let stopped = self.stopped
        Thread.detachNewThread {
            while !stopped.withLock({ $0 }) {
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 100) > 0 else { continue }
                let connection = withoutSigpipe(accept(listener, nil, nil))
                guard connection >= 0 else { continue }
                Thread.detachNewThread { handle(connection) }
            }
            close(listener)
        }
    }

    /// Ends the accepting (within a tenth of a second).
    func stop() { stopped.withLock { $0 = true } }
}

/// The next whole HTTP message (its head and `Content-Length` bytes of body) read from `descriptor`, with what
/// arrived past it kept in `buffer` for the next; `nil` when the connection ends first.
func readHTTPMessage(from descriptor: Int32, buffer: inout [UInt8]) -> [UInt8]? {
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
            let head = String(decoding: buffer[..<end], as: UTF8.self)
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            if buffer.count >= end + length {
                defer { buffer.removeFirst(end + length) }
                return Array(buffer[..<(end + length)])
            }
        }
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { return nil }
        buffer += chunk[..<count]
    }
}

/// Writes every byte of `bytes` to `descriptor`; `false` when the connection fails first.
func writeAllBytes(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let count = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { return false }
        offset += count
    }
    return true
}
