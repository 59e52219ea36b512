import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP/1.0 POST over a plain TCP socket, for the `http://` endpoints' unary calls, on a connection kept alive
/// between calls (``PlainConnectionPool``).
///
/// Why not URLSession: etcd 3.4's gateway (grpc-gateway 1.9) answers every error with a chunked body followed by
/// an HTTP trailer (`Grpc-Trailer-Content-Type`), and swift-corelibs-foundation's URLSession (Swift 6.3 on
/// Linux) stops the process on a response with a trailer ("Transfer completed, but there's no response",
/// swift-corelibs-foundation issue 5285). A request in HTTP/1.0 gets no chunking and so no trailer: the answer
/// is the status line, the headers, and the body. With `Connection: keep-alive` (HTTP/1.0's keep-alive) etcd's
/// server answers with a `Content-Length` and `Connection: keep-alive` when it knows the body's length (every
/// answer but the largest ranges), and the connection serves the next call; without them the body runs to the end
/// of the connection, which is then closed.
///
/// Blocking I/O on the calling thread, bounded by `timeout` from connect to the end of the answer; it needs no
/// other thread, so a caller that holds one of the limited threads that Swift's cooperative pool and the global
/// queues share cannot starve it.
enum PlainHTTP {
    /// An answer: the HTTP status and the body.
    struct Answer {
        var status: Int
        var body: Data
    }

    /// Posts `body` to `path` of `host:port` and returns the answer, on an idle connection of `pool` when one
    /// waits (giving it back after a whole answer the server keeps the connection open for), else on a new one.
    ///
    /// An idle connection the server closed while it waited is found closed before the request is sent (it polls
    /// readable, see ``PlainConnectionPool``), or refuses the request's first bytes: the request then goes on a new
    /// connection. Once any of it was sent, it is never sent again: a server (or a proxy in front of it) may have
    /// acted on it, and a connection that ends without an answer is then an ``EtcdError/Code/unreachable`` error,
    /// which the store treats as an answer lost (it reads back what happened before it writes again).
    ///
    /// - Throws: ``EtcdError/Code/unreachable`` (connection refused, timed out, host not found, connection
    ///   lost) naming `endpoint`.
    static func post(
        host: String, port: Int, path: String, body: Data, headers: [(String, String)],
        connectTimeout: TimeInterval = .infinity, timeout: TimeInterval, maximumAnswerSize: Int, endpoint: String,
        pool: PlainConnectionPool? = nil
    ) throws -> Answer {
        do throws(Failure) {
            let deadline = Date().addingTimeInterval(timeout)
            var head = "POST \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
            if pool != nil { head += "Connection: keep-alive\r\n" }
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            let request = Array(head.utf8) + Array(body)
            let key = "\(host):\(port)"
            if let pool, let socket = pool.take(key) {
                if let answer = try exchange(request, on: socket, deadline: deadline, limit: maximumAnswerSize) {
                    if answer.reusable { pool.giveBack(socket, key) } else { close(socket) }
                    return answer.answer
                }
                close(socket)  // Closed by the server before it took any of the request: sent again below.
            }
            let connected = Date().addingTimeInterval(min(connectTimeout, deadline.timeIntervalSinceNow))
            let socket = try PlainSocket.open(host: host, port: port, deadline: connected)
            pool?.recordOpened()
            guard let answer = try exchange(request, on: socket, deadline: deadline, limit: maximumAnswerSize) else {
                close(socket)
                throw Failure(reason: "the server closed the connection before taking the request")
            }
            if answer.reusable, let pool { pool.giveBack(socket, key) } else { close(socket) }
            return answer.answer
        } catch {
            throw EtcdError(error.code, endpoint: endpoint, message: error.reason)
        }
    }

    /// The most bytes the status line and headers of an answer may take.
    static let maximumHeadSize = 64 << 10

    /// Why the exchange failed, in words (``PlainSocket/Failure``): the endpoint did not answer
    /// (``EtcdError/Code/unreachable``, the next endpoint is tried), or answered what no etcd sends
    /// (``EtcdError/Code/badResponse``).
    typealias Failure = PlainSocket.Failure

    /// Sends `request` on `socket` and reads the answer: at most `limit` bytes, of which at most
    /// ``maximumHeadSize`` before the blank line that ends the headers; the body is `Content-Length` bytes when
    /// the answer says so, else what comes until the end of the connection.
    ///
    /// - Returns: The answer, and whether the connection may carry the next request; `nil` when the connection
    ///   refused the request's first bytes (closed by the server), so that nothing of it was sent.
    /// - Throws: A ``Failure`` when anything else goes wrong (a timeout; the connection lost once part of the request
    ///   was sent; an answer cut off or over its limits). The socket is closed then.
    private static func exchange(
        _ request: [UInt8], on socket: Int32, deadline: Date, limit: Int
    ) throws(Failure) -> (answer: Answer, reusable: Bool)? {
        do throws(Failure) {
            guard try PlainSocket.sendAll(request, on: socket, deadline: deadline) else { return nil }
            return try receive(on: socket, deadline: deadline, limit: limit)
        } catch {
            close(socket)
            throw error
        }
    }

    /// Reads an answer on `socket` (see ``exchange(_:on:deadline:limit:)``).
    private static func receive(
        on socket: Int32, deadline: Date, limit: Int
    ) throws(Failure) -> (answer: Answer, reusable: Bool) {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var parsed: (head: Head, bodyStart: Int)?
        while true {
            if let (head, bodyStart) = parsed, let length = head.contentLength, data.count - bodyStart >= length {
                guard data.count - bodyStart == length else {
                    throw Failure(reason: "the answer runs past its Content-Length", code: .badResponse)
                }
                return (Answer(status: head.status, body: Data(data[bodyStart...])), head.keepsAlive)
            }
            guard try PlainSocket.wait(socket, for: Int16(POLLIN), deadline: deadline) else {
                throw Failure(reason: "timed out waiting for the answer")
            }
            guard let count = try PlainSocket.receive(into: &chunk, on: socket) else { continue }
            if count == 0 {
                guard let (head, bodyStart) = parsed else {
                    throw Failure(
                        reason: data.isEmpty ? "the server closed the connection without an answer" : "cut-off answer")
                }
                if let length = head.contentLength, data.count - bodyStart < length {
                    throw Failure(reason: "cut-off answer (\(data.count - bodyStart) of \(length) bytes)")
                }
                return (Answer(status: head.status, body: Data(data[bodyStart...])), false)
            }
            data.append(contentsOf: chunk[..<count])
            guard data.count <= limit else {
                throw Failure(reason: "the answer is over \(limit) bytes, more than etcd sends", code: .badResponse)
            }
            if parsed == nil {
                if let end = data.firstRange(of: Data("\r\n\r\n".utf8)) {
                    parsed = (try Head(data[data.startIndex..<end.lowerBound]), end.upperBound)
                } else if data.count > maximumHeadSize {
                    throw Failure(
                        reason: "the answer's headers are over \(maximumHeadSize) bytes, more than etcd sends",
                        code: .badResponse)
                }
            }
        }
    }

    /// The status line and the headers of an answer, as far as a call needs them.
    private struct Head {
        var status: Int
        /// The body's length, when the answer says it.
        var contentLength: Int?
        /// Whether the server keeps the connection open after the body: `Connection: keep-alive`, which HTTP/1.0
        /// needs, and a length, without which the body ends with the connection.
        var keepsAlive: Bool

        init(_ bytes: Data) throws(Failure) {
            let text = String(decoding: bytes, as: UTF8.self)
            let lines = text.components(separatedBy: "\r\n")
            let statusLine = lines[0]
            let fields = statusLine.split(separator: " ")
            guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else {
                throw Failure(reason: "not an HTTP answer: \"\(statusLine.prefix(100))\"")
            }
            self.status = status
            var keepAlive = false
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                switch name {
                case "content-length":
                    guard let length = Int(value), length >= 0 else {
                        throw Failure(
                            reason: "a Content-Length that is not a length: \"\(value.prefix(40))\"",
                            code: .badResponse)
                    }
                    contentLength = length
                case "connection":
                    keepAlive = value.lowercased().split(separator: ",").contains {
                        $0.trimmingCharacters(in: .whitespaces) == "keep-alive"
                    }
                default:
                    continue
                }
            }
            keepsAlive = keepAlive && contentLength != nil
        }
    }
}
