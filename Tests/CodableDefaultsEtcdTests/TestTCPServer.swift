import CodableDefaultsTestSupport
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP server on a free port of 127.0.0.1 for the etcd tests, one thread per connection, stopped when the value
/// goes away: Swift may release it right after its last use, so a test whose last use is its `url` keeps it with
/// `withExtendedLifetime` until its client is done (else a request may meet a closed listener). What it does with a connection is its ``Behavior``:
///
/// - ``Behavior/answer(_:)``: reads the request (headers and `Content-Length` body) and sends the bytes given,
///   then closes: a server that is not etcd.
/// - ``Behavior/closeEarly``: reads a little of the request and closes: a peer that goes away while a request is
///   still being sent.
/// - ``Behavior/proxy(to:)``: forwards both ways to `127.0.0.1:port`, a request at a time (a connection kept alive
///   carries several). After ``hold(_:)``, the answer of a request whose first line contains one of the texts given is
///   held back (the request still reaches etcd) until ``release()``; ``waitUntilHolding()`` returns once such an answer
///   has arrived and is held.
final class TestTCPServer: @unchecked Sendable {
    enum Behavior {
        case answer([UInt8])
        case closeEarly
        case proxy(to: Int)
    }

    /// The server's port.
    let port: Int
    /// `http://127.0.0.1:PORT`.
    var url: String { "http://127.0.0.1:\(port)" }
    private let listener: Listener
    private let behavior: Behavior
    private let lock = NSLock()
    private var firstLines: [String] = []
    private var holding: [String] = []
    private let held = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// Starts listening and accepting.
    init(_ behavior: Behavior) throws {
        self.behavior = behavior
        let listener = tcpSocket()
        guard listener >= 0 else { throw ChildProcessError(description: "socket: errno \(errno)") }
        guard bindLoopback(listener, port: 0) == 0, listen(listener, 64) == 0, let port = boundPort(listener) else {
            close(listener)
            throw ChildProcessError(description: "bind or listen: errno \(errno)")
        }
        self.port = port
        let shared = Listener(listener)
        self.listener = shared
        Thread.detachNewThread { [weak self] in
            defer { shared.closeDescriptor() }
            while !shared.isStopped {
                // A short wait at a time, so that a stop is seen where `shutdown` does not wake a waiting `accept`.
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, 100)
                if ready == 0 || (ready < 0 && errno == EINTR) { continue }
                guard ready > 0, !shared.isStopped else { return }
                let connection = withoutSigpipe(accept(listener, nil, nil))
                if connection < 0 && (errno == EINTR || errno == ECONNABORTED) { continue }
                guard connection >= 0 else { return }  // The listener was shut down.
                guard let self else {
                    close(connection)
                    return
                }
                Thread.detachNewThread { self.serve(connection) }
            }
        }
    }

    deinit {
        listener.stop()
        released.signal()
    }

    /// The first line of every request received so far, in order.
    var requests: [String] { lock.withLock { firstLines } }

    /// Waits (up to 30 s) until the answer of a held request has arrived; returns whether it did.
    func waitUntilHolding() -> Bool { held.wait(timeout: .now() + 30) == .success }

    /// Holds the answers of the requests whose first line contains one of `texts` from now on.
    func hold(_ texts: [String]) {
        lock.withLock { holding = texts }
    }

    /// Sends the held answers on, and holds no more answers.
    func release() {
        lock.withLock { holding = [] }
        released.signal()
    }

    private func serve(_ connection: Int32) {
        defer {
            // Shut down first: another thread of this connection may still wait in `read`, and while it does,
            // `close` alone neither ends the connection nor wakes it.
            shutdown(connection, Int32(SHUT_RDWR))
            close(connection)
        }
        switch behavior {
        case .answer(let bytes):
            let request = readRequest(connection)
            record(request)
            writeAll(connection, bytes)
        case .closeEarly:
            var buffer = [UInt8](repeating: 0, count: 1024)
            _ = read(connection, &buffer, buffer.count)
            shutdown(connection, Int32(SHUT_RDWR))
        case .proxy(let upstreamPort):
            proxy(connection, to: upstreamPort)
        }
    }

    /// Forwards the client's requests one at a time (a connection the client keeps alive carries several), each
    /// answer back after it; an answer with a `Content-Length` ends there and the next request may follow, one
    /// without (a watch's stream, an answer ending with the connection) goes on until either side closes.
    private func proxy(_ connection: Int32, to upstreamPort: Int) {
        let upstream = tcpSocket()
        defer {
            shutdown(upstream, Int32(SHUT_RDWR))
            close(upstream)
        }
        let connected = connectLoopback(upstream, port: upstreamPort)
        guard connected == 0 else { return }
        let client = BufferedSocket(connection)
        let server = BufferedSocket(upstream)
        while let head = client.readHead() {
            let line = firstLine(head[...])
            record(line)
            let holds = lock.withLock { holding.contains { line.contains($0) } }
            guard let body = client.read(count: Self.contentLength(of: head) ?? 0) else { return }
            writeAll(upstream, head + body)
            guard let answerHead = server.readHead() else { return }
            if holds {
                held.signal()
                released.wait()
                released.signal()  // Every held answer goes on once released.
            }
            writeAll(connection, answerHead)
            if let length = Self.contentLength(of: answerHead) {
                guard let answerBody = server.read(count: length) else { return }
                writeAll(connection, answerBody)
                continue
            }
            // An answer that runs until the connection ends: the client's further bytes go up as they come, on a
            // thread that ends before either socket is closed (a closed number may already name another test's
            // socket).
            let forwarded = DispatchSemaphore(value: 0)
            defer {
                shutdown(connection, Int32(SHUT_RDWR))  // Wakes the thread if it still waits for the client.
                forwarded.wait()
            }
            Thread.detachNewThread {
                while let bytes = client.readAvailable() { self.writeAll(upstream, bytes) }
                shutdown(upstream, Int32(SHUT_WR))
                forwarded.signal()
            }
            while let bytes = server.readAvailable() { writeAll(connection, bytes) }
            return
        }
    }

    /// The `Content-Length` of a request's or an answer's head, if it says one.
    private static func contentLength(of head: [UInt8]) -> Int? {
        String(decoding: head, as: UTF8.self).split(separator: "\r\n").first {
            $0.lowercased().hasPrefix("content-length:")
        }.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }

    private func record(_ line: String) {
        lock.withLock { firstLines.append(line) }
    }

    /// The request's first line, after reading its headers and `Content-Length` bytes of body.
    private func readRequest(_ connection: Int32) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let text = String(decoding: data, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound]
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if data.count - text.utf8.distance(from: text.startIndex, to: end.upperBound) >= length { break }
            }
            let count = readRetrying(connection, &buffer)
            if count <= 0 { break }
            data += buffer[..<count]
        }
        return firstLine(data[...])
    }

    /// The text of `bytes` up to the first line break.
    private func firstLine(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
    }

    private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress!, $0.count, sendFlags) }
            if written < 0 && errno == EINTR { continue }  // A signal (a child of another test ending), not the end.
            if written <= 0 { return }
            offset += written
        }
    }
}

/// The listening socket of a ``TestTCPServer``, which its accept thread alone closes, when it ends: were it closed
/// under that thread, another test's new socket could take the descriptor's number before the thread's next
/// `accept`, which would then take, and close unanswered, a connection meant for that other test.
private final class Listener: @unchecked Sendable {
    /// The socket.
    let descriptor: Int32
    private let lock = NSLock()
    private var stopped = false
    private var closed = false

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { lock.withLock { stopped } }

    /// Tells the accept thread to end, and wakes an `accept` that waits (where `shutdown` does: Linux).
    func stop() {
        lock.withLock {
            stopped = true
            if !closed { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the socket: the accept thread's last act.
    func closeDescriptor() {
        lock.withLock {
            closed = true
            close(descriptor)
        }
    }
}

/// A socket read a message at a time: the head of a request or an answer, a body of a known length, or what comes.
/// Each is used by one thread at a time.
private final class BufferedSocket: @unchecked Sendable {
    let descriptor: Int32
    private var pending: [UInt8] = []

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    /// The bytes up to and with the blank line that ends a head; `nil` when the connection ends first.
    func readHead() -> [UInt8]? {
        while true {
            if let end = pending.indices.dropLast(3).first(where: {
                pending[$0] == 0x0D && pending[$0 + 1] == 0x0A && pending[$0 + 2] == 0x0D && pending[$0 + 3] == 0x0A
            }) {
                let head = Array(pending[..<(end + 4)])
                pending.removeFirst(end + 4)
                return head
            }
            guard fill() else { return nil }
        }
    }

    /// The next `count` bytes; `nil` when the connection ends first.
    func read(count: Int) -> [UInt8]? {
        while pending.count < count { guard fill() else { return nil } }
        defer { pending.removeFirst(count) }
        return Array(pending[..<count])
    }

    /// What has arrived (waiting for it when nothing has); `nil` at the end of the connection.
    func readAvailable() -> [UInt8]? {
        if pending.isEmpty { guard fill() else { return nil } }
        defer { pending = [] }
        return pending
    }

    private func fill() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = readRetrying(descriptor, &buffer)
        guard count > 0 else { return false }
        pending += buffer[..<count]
        return true
    }
}

/// `read` into `buffer`, again when a signal interrupted it (a child process of another test ending).
private func readRetrying(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Int {
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        return count
    }
}

/// Flags of `send` that turn a closed peer into an error instead of a `SIGPIPE`: none on Apple platforms, whose
/// sockets of the tests have `SO_NOSIGPIPE` (``withoutSigpipe(_:)``).
#if canImport(Darwin)
    private let sendFlags: Int32 = 0
#else
    private let sendFlags = Int32(MSG_NOSIGNAL)
#endif
