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
        host: String, port: Int, path: String, body: Data, headers: [(String, String)], timeout: TimeInterval,
        maximumAnswerSize: Int, endpoint: String
    ) throws -> Answer {
        do {
            let deadline = Date().addingTimeInterval(timeout)
            let socket = try openConnection(host: host, port: port, deadline: deadline)
            defer { close(socket) }
            var head = "POST \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            try sendAll(Data(head.utf8) + body, on: socket, deadline: deadline)
            return try parse(try receiveAll(on: socket, deadline: deadline, limit: maximumAnswerSize))
        } catch let failure as Failure {
            throw EtcdError(failure.code, endpoint: endpoint, message: failure.reason)
        }
    }

    /// The most bytes the status line and headers of an answer may take.
    static let maximumHeadSize = 64 << 10

    /// Why the exchange failed, in words: the endpoint did not answer (``EtcdError/Code/unreachable``, the
    /// next endpoint is tried), or answered what no etcd sends (``EtcdError/Code/badResponse``).
    struct Failure: Error {
        var reason: String
        var code = EtcdError.Code.unreachable
    }

    /// A connected socket to the first address of `host:port` that accepts.
    private static func openConnection(host: String, port: Int, deadline: Date) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw Failure(reason: "host not found (\(String(cString: gai_strerror(resolved))))")
        }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard descriptor >= 0 else {
                reason = describe(errno)
                continue
            }
            let flags = fcntl(descriptor, F_GETFL, 0)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            var result = connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            if result != 0 && errno == EINPROGRESS {
                if try wait(descriptor, for: Int16(POLLOUT), deadline: deadline) {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
                    result = error == 0 ? 0 : -1
                    errno = error
                } else {
                    close(descriptor)
                    throw Failure(reason: "timed out connecting")
                }
            }
            if result == 0 { return descriptor }
            reason = describe(errno)
            close(descriptor)
        }
        throw Failure(reason: reason)
    }

    /// Waits until `descriptor` is ready for `events`; `false` when the deadline passed first.
    private static func wait(_ descriptor: Int32, for events: Int16, deadline: Date) throws -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { throw Failure(reason: describe(errno)) }
        }
    }

    private static func sendAll(_ data: Data, on socket: Int32, deadline: Date) throws {
        var offset = 0
        while offset < data.count {
            guard try wait(socket, for: Int16(POLLOUT), deadline: deadline) else {
                throw Failure(reason: "timed out sending the request")
            }
            let written = data.withUnsafeBytes {
                sendWithoutSignal(socket, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(reason: "connection lost sending the request (\(describe(errno)))")
            }
            offset += written
        }
    }

    /// The whole answer, up to the end of the connection: at most `limit` bytes, of which at most
    /// ``maximumHeadSize`` before the blank line that ends the headers.
    private static func receiveAll(on socket: Int32, deadline: Date, limit: Int) throws -> Data {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var headIsWhole = false
        while true {
            guard try wait(socket, for: Int16(POLLIN), deadline: deadline) else {
                throw Failure(reason: "timed out waiting for the answer")
            }
            let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress!, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(reason: "connection lost reading the answer (\(describe(errno)))")
            }
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
    private static func parse(_ raw: Data) throws -> Answer {
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

    /// Sends bytes; a peer that closed the connection is an error (`EPIPE`), never a `SIGPIPE` that would end
    /// the process.
    private static func sendWithoutSignal(_ socket: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
            return send(socket, bytes, count, 0)
        #else
            return send(socket, bytes, count, Int32(MSG_NOSIGNAL))
        #endif
    }

    /// An errno in words.
    private static func describe(_ code: Int32) -> String {
        let meaning =
            switch code {
            case ECONNREFUSED: "connection refused"
            case ETIMEDOUT: "timed out"
            case ECONNRESET: "connection reset"
            case EHOSTUNREACH, ENETUNREACH: "no route to host"
            default: String(cString: strerror(code))
            }
        return "\(meaning) (errno \(code))"
    }
}
