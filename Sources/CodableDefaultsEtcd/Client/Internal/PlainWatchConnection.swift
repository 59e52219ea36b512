import CodableDefaults
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One streaming POST to `/v3/watch` of an `http://` endpoint, in HTTP/1.0 over a socket that a thread of its
/// own reads: the gateway's messages (one JSON object a line) as they arrive, decoded. It behaves as
/// ``WatchConnection`` does (the same errors, in the same cases), for Linux.
///
/// Why not URLSession there: swift-corelibs-foundation's URLSession (Swift 6.3 on Linux) keeps a thread busy
/// while a streaming answer is open and silent (its dispatch source of the socket fires again and again): each
/// watch burned most of a core, the whole time the store was open. A watch is silent most of its life; this
/// one waits in `poll`. An HTTP/1.0 request also gets an answer without chunking, so without the trailer that
/// URLSession stops the process on (see ``PlainHTTP``).
///
/// `messages` ends when the server ends the answer, and throws ``EtcdError`` when the connection fails or stays
/// silent longer than the idle timeout (``EtcdError/Code/unreachable``), the answer is not HTTP 200 (etcd's
/// error), or a line is not the gateway's JSON or is over the size limit (``EtcdError/Code/badResponse``).
/// ``cancel()`` ends it from any thread (the socket is shut down, which wakes the reading thread).
final class PlainWatchConnection: WatchTransport {
    /// The messages of the watch, in order.
    let messages: AsyncThrowingStream<Wire.WatchMessage, any Error>
    private let continuation: AsyncThrowingStream<Wire.WatchMessage, any Error>.Continuation
    private let endpoint: URL
    private let socket = Locked(Socket())

    /// The connection's descriptor, as the reading thread and ``cancel()`` share it.
    private struct Socket {
        /// The open descriptor, or -1 before the connection and after it was closed.
        var descriptor: Int32 = -1
        /// Whether ``cancel()`` was called.
        var cancelled = false
    }

    /// The most bytes the status line and headers of the answer may take.
    static let maximumHeadSize = 64 << 10

    /// Starts the request on a thread of its own: connecting within `connectTimeout` (and `requestTimeout`), sending
    /// within `requestTimeout`, then reading
    /// until the end of the answer, each wait for data bounded by `idleTimeout`. A message (or an error answer)
    /// over `maximumMessageSize` bytes ends the watch with ``EtcdError/Code/badResponse`` instead of growing
    /// without bound.
    init(
        endpoint: URL, host: String, port: Int, body: Data, token: String?, connectTimeout: TimeInterval = .infinity,
        requestTimeout: TimeInterval, idleTimeout: TimeInterval, maximumMessageSize: Int
    ) {
        (messages, continuation) = AsyncThrowingStream.makeStream(of: Wire.WatchMessage.self)
        self.endpoint = endpoint
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head =
            "POST /v3/watch HTTP/1.0\r\nHost: \(hostField)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\n"
        if let token { head += "Authorization: \(token)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + Array(body)
        continuation.onTermination = { [socket] _ in Self.shutDown(socket) }
        let thread = Thread { [self] in
            run(
                host: host, port: port, request: request, connectTimeout: min(connectTimeout, requestTimeout),
                requestTimeout: requestTimeout, idleTimeout: idleTimeout, limit: maximumMessageSize)
        }
        thread.name = "CodableDefaultsEtcd.watch"
        thread.start()
    }

    /// Ends the request; `messages` then ends with an error.
    func cancel() { Self.shutDown(socket) }

    /// Marks the connection cancelled and shuts its socket down, which wakes the thread reading it.
    private static func shutDown(_ socket: Locked<Socket>) {
        socket.withLock { socket in
            socket.cancelled = true
            if socket.descriptor >= 0 { _ = shutdown(socket.descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// The reading thread: the exchange, then the end of `messages` with its outcome.
    private func run(
        host: String, port: Int, request: [UInt8], connectTimeout: TimeInterval, requestTimeout: TimeInterval,
        idleTimeout: TimeInterval, limit: Int
    ) {
        do throws(PlainSocket.Failure) {
            let descriptor = try PlainSocket.open(
                host: host, port: port, deadline: Date().addingTimeInterval(connectTimeout))
            let adopted = socket.withLock { socket in
                if !socket.cancelled { socket.descriptor = descriptor }
                return !socket.cancelled
            }
            guard adopted else {
                close(descriptor)
                throw PlainSocket.Failure(reason: "cancelled")
            }
            defer {
                socket.withLock { socket in
                    close(socket.descriptor)
                    socket.descriptor = -1
                }
            }
            guard try PlainSocket.sendAll(request, on: descriptor, deadline: Date().addingTimeInterval(requestTimeout))
            else { throw PlainSocket.Failure(reason: "the server closed the connection before taking the request") }
            try read(descriptor, idleTimeout: idleTimeout, limit: limit)
        } catch let failure {
            let reason = socket.withLock { $0.cancelled } ? "cancelled" : failure.reason
            continuation.finish(throwing: EtcdError(failure.code, endpoint: endpoint.absoluteString, message: reason))
        }
    }

    /// Reads the answer to its end: its messages handed on as they arrive, or its error answer whole.
    private func read(_ descriptor: Int32, idleTimeout: TimeInterval, limit: Int) throws(PlainSocket.Failure) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var pending: [UInt8] = []
        // The bytes of `pending` before `start` are handed on already.
        var start = 0
        var status: Int?
        while true {
            guard try PlainSocket.wait(descriptor, for: Int16(POLLIN), deadline: Date().addingTimeInterval(idleTimeout))
            else {
                throw PlainSocket.Failure(reason: "timed out: no message in \(Int(idleTimeout)) s")
            }
            guard let count = try PlainSocket.receive(into: &buffer, on: descriptor) else { continue }
            if count == 0 { break }
            if socket.withLock({ $0.cancelled }) { throw PlainSocket.Failure(reason: "cancelled") }
            pending.append(contentsOf: buffer[..<count])
            if status == nil {
                guard let end = Self.endOfHead(pending) else {
                    guard pending.count <= Self.maximumHeadSize else {
                        throw PlainSocket.Failure(
                            reason: "the answer's headers are over \(Self.maximumHeadSize) bytes, more than etcd sends",
                            code: .badResponse)
                    }
                    continue
                }
                status = try Self.status(of: pending[..<end])
                start = end + 4
            }
            if status == 200 {
                while let newline = pending[start...].firstIndex(of: 0x0A) {
                    guard deliver(pending[start..<newline]) else { return }
                    start = newline + 1
                }
                // What is handed on goes, once it is a good part of the buffer.
                if start > 0 && start >= pending.count / 2 {
                    pending.removeFirst(start)
                    start = 0
                }
            }
            // A message waits for its line break, an error body for the end: either is bounded.
            if pending.count - start > limit {
                let what = status == 200 ? "a message" : "the error answer"
                throw PlainSocket.Failure(
                    reason: "/v3/watch: \(what) is over \(limit) bytes, more than etcd sends", code: .badResponse)
            }
        }
        if socket.withLock({ $0.cancelled }) { throw PlainSocket.Failure(reason: "cancelled") }
        guard let status else {
            throw PlainSocket.Failure(
                reason: pending.isEmpty ? "the server closed the connection without an answer" : "cut-off answer")
        }
        guard status == 200 else {
            continuation.finish(
                throwing: EtcdError.answer(
                    Data(pending[start...]), status: status, endpoint: endpoint, path: "/v3/watch"))
            return
        }
        if deliver(pending[start...]) { continuation.finish() }
    }

    /// Decodes one line and hands it on; a line that is not the gateway's JSON ends the stream with an error
    /// (and `false`). A blank line is skipped.
    private func deliver(_ line: ArraySlice<UInt8>) -> Bool {
        guard line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x0A && $0 != 0x09 }) else { return true }
        let data = Data(line)
        do {
            continuation.yield(try Wire.decoder().decode(Wire.WatchMessage.self, from: data))
            return true
        } catch {
            continuation.finish(
                throwing: EtcdError.undecodable(data, path: "/v3/watch", endpoint: endpoint, error: error))
            return false
        }
    }

    /// The index of the blank line (`\r\n\r\n`) that ends the head of `bytes`, if it has arrived.
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
            return index
        }
        return nil
    }

    /// The status of the status line that starts `head`.
    private static func status(of head: ArraySlice<UInt8>) throws(PlainSocket.Failure) -> Int {
        let statusLine = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self)
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else {
            throw PlainSocket.Failure(reason: "not an HTTP answer: \"\(statusLine.prefix(100))\"")
        }
        return status
    }
}
