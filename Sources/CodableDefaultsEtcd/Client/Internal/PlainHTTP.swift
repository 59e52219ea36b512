import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP/1.0 POST over a plain TCP socket, for the `http://` endpoints' unary calls.
///
/// Why not URLSession: etcd 3.4's gateway (grpc-gateway 1.9) answers every error with a chunked body followed by
/// an HTTP trailer (`Grpc-Trailer-Content-Type`), and swift-corelibs-foundation's URLSession (Swift 6.3 on
/// Linux) stops the process on a response with a trailer ("Transfer completed, but there's no response",
/// swift-corelibs-foundation issue 5285). A request in HTTP/1.0 gets no chunking and so no trailer: the answer
/// is the status line, the headers, and the body up to the end of the connection.
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

    /// Posts `body` to `path` of `host:port` and returns the answer.
    ///
    /// - Throws: ``EtcdError/Code/unreachable`` (connection refused, timed out, host not found, connection
    ///   lost) naming `endpoint`.
    static func post(
        host: String, port: Int, path: String, body: Data, headers: [(String, String)],
        connectTimeout: TimeInterval = .infinity, timeout: TimeInterval, maximumAnswerSize: Int, endpoint: String
    ) throws -> Answer {
        do throws(Failure) {
            let deadline = Date().addingTimeInterval(timeout)
            let connected = Date().addingTimeInterval(min(connectTimeout, timeout))
            let socket = try PlainSocket.open(host: host, port: port, deadline: connected)
            defer { close(socket) }
            var head = "POST \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            try PlainSocket.sendAll(Array(head.utf8) + Array(body), on: socket, deadline: deadline)
            return try parse(try receiveAll(on: socket, deadline: deadline, limit: maximumAnswerSize))
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

    /// The whole answer, up to the end of the connection: at most `limit` bytes, of which at most
    /// ``maximumHeadSize`` before the blank line that ends the headers.
    private static func receiveAll(on socket: Int32, deadline: Date, limit: Int) throws(Failure) -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var headIsWhole = false
        while true {
            guard try PlainSocket.wait(socket, for: Int16(POLLIN), deadline: deadline) else {
                throw Failure(reason: "timed out waiting for the answer")
            }
            guard let count = try PlainSocket.receive(into: &chunk, on: socket) else { continue }
            if count == 0 { return data }
            data.append(contentsOf: chunk[..<count])
            guard data.count <= limit else {
                throw Failure(reason: "the answer is over \(limit) bytes, more than etcd sends", code: .badResponse)
            }
            if !headIsWhole {
                headIsWhole = data.firstRange(of: Data("\r\n\r\n".utf8)) != nil
                guard headIsWhole || data.count <= maximumHeadSize else {
                    throw Failure(
                        reason: "the answer's headers are over \(maximumHeadSize) bytes, more than etcd sends",
                        code: .badResponse)
                }
            }
        }
    }

    /// The status and body of a whole HTTP/1.x answer without chunking.
    private static func parse(_ raw: Data) throws(Failure) -> Answer {
        guard let end = raw.firstRange(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(reason: raw.isEmpty ? "the server closed the connection without an answer" : "cut-off answer")
        }
        let head = String(decoding: raw[raw.startIndex..<end.lowerBound], as: UTF8.self)
        let statusLine = head.prefix { $0 != "\r" }
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]) else {
            throw Failure(reason: "not an HTTP answer: \"\(statusLine.prefix(100))\"")
        }
        return Answer(status: status, body: Data(raw[end.upperBound...]))
    }
}
