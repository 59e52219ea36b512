import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The etcd case's references: what a plain client gets from etcd's JSON gateway, with none of the library. A
/// request body is JSON made before the clock starts; a call is one HTTP/1.0 POST, over a ``Connection`` kept alive
/// between calls (its answer read to its `Content-Length`), or with ``post(port:path:body:)`` over a fresh blocking
/// socket to 127.0.0.1, read to the end of the connection (as `curl` does it); a watch is one streaming POST whose
/// answer is read by a thread, an event being the arrival of a line that has `"events"` and the key watched for in
/// it (nothing is decoded).
enum RawEtcd {
    /// The JSON of a transaction that puts each of `puts` (key, value), without compares.
    static func transaction(_ puts: [(key: String, value: String)]) -> [UInt8] {
        let operations = puts.map { put in
            "{\"request_put\":{\"key\":\"\(base64(put.key))\",\"value\":\"\(base64(put.value))\"}}"
        }
        return Array("{\"success\":[\(operations.joined(separator: ","))]}".utf8)
    }

    /// The JSON of a put of `value` under `key`.
    static func put(_ key: String, _ value: String) -> [UInt8] {
        Array("{\"key\":\"\(base64(key))\",\"value\":\"\(base64(value))\"}".utf8)
    }

    /// The JSON of a range of every key that starts with `prefix` (its last byte below 0xFF).
    static func range(prefix: String) -> [UInt8] {
        var end = Array(prefix.utf8)
        end[end.count - 1] += 1
        return Array("{\"key\":\"\(base64(prefix))\",\"range_end\":\"\(Data(end).base64EncodedString())\"}".utf8)
    }

    /// The JSON of a watch of every key that starts with `prefix`, from the next change on.
    static func watch(prefix: String) -> [UInt8] {
        var end = Array(prefix.utf8)
        end[end.count - 1] += 1
        return Array(
            "{\"create_request\":{\"key\":\"\(base64(prefix))\",\"range_end\":\"\(Data(end).base64EncodedString())\"}}"
                .utf8)
    }

    fileprivate static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// POSTs `body` to `path` on `127.0.0.1:port` and returns the answer's bytes (status line, headers, body).
    ///
    /// - Throws: ``BenchmarkError`` when the connection fails or the answer is not HTTP 200.
    @discardableResult
    static func post(port: Int, path: String, body: [UInt8]) throws -> [UInt8] {
        let descriptor = try openConnection(port: port)
        defer { close(descriptor) }
        try send(head(path, port: port, length: body.count) + body, on: descriptor)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count == 0 { break }
            guard count > 0 else { throw BenchmarkError("raw etcd client: read failed (errno \(errno))") }
            answer.append(contentsOf: buffer[..<count])
        }
        guard answer.starts(with: Array("HTTP/1.0 200".utf8)) || answer.starts(with: Array("HTTP/1.1 200".utf8)) else {
            throw BenchmarkError("raw etcd client: \(path): \(String(decoding: answer.prefix(300), as: UTF8.self))")
        }
        return answer
    }

    /// A connection to `127.0.0.1:port` kept alive between calls (HTTP/1.0's `Connection: keep-alive`, which etcd
    /// honors when it knows an answer's length), opened again when the server closes it. Used by one thread.
    final class Connection {
        private let port: Int
        private var descriptor: Int32?

        init(port: Int) { self.port = port }

        deinit { if let descriptor { close(descriptor) } }

        /// POSTs `body` to `path` and returns the answer's bytes (status line, headers, body).
        ///
        /// - Throws: ``BenchmarkError`` when the connection fails or the answer is not HTTP 200.
        @discardableResult
        func post(path: String, body: [UInt8]) throws -> [UInt8] {
            let socket = try descriptor ?? RawEtcd.openConnection(port: port)
            descriptor = socket
            do {
                var head = head(path, port: port, length: body.count)
                head.insert(contentsOf: Array("Connection: keep-alive\r\n".utf8), at: head.count - 2)
                try RawEtcd.send(head + body, on: socket)
                var answer: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 256 << 10)
                var expected: Int?
                var keepsAlive = false
                while expected.map({ answer.count < $0 }) ?? true {
                    let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress!, $0.count) }
                    if count == 0 && expected == nil { break }
                    guard count > 0 else { throw BenchmarkError("raw etcd client: read failed (errno \(errno))") }
                    answer.append(contentsOf: buffer[..<count])
                    if expected == nil, let end = answer.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                        let fields = String(decoding: answer[..<end], as: UTF8.self).lowercased()
                        keepsAlive = fields.contains("\r\nconnection: keep-alive")
                        if let line = fields.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                            let length = Int(
                                line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                        {
                            expected = end + length
                        }
                    }
                }
                if !keepsAlive || expected == nil {
                    close(socket)
                    descriptor = nil
                }
                guard answer.starts(with: Array("HTTP/1.0 200".utf8)) else {
                    throw BenchmarkError(
                        "raw etcd client: \(path): \(String(decoding: answer.prefix(300), as: UTF8.self))")
                }
                return answer
            } catch {
                if descriptor != nil {
                    close(socket)
                    descriptor = nil
                }
                throw error
            }
        }
    }

    /// A streaming watch: ``waitForEvent(timeout:)`` returns when the next line with events arrives, and when.
    final class Watch: @unchecked Sendable {
        // The descriptor is set before the thread starts and closed after it ends; the arrival times go through
        // `lock`.
        private let descriptor: Int32
        private let lock = NSCondition()
        private var arrivals: [UInt64] = []
        private var ended = false

        /// Starts a watch of `prefix` on `127.0.0.1:port` and waits for etcd to say it is created; its events are
        /// the messages that change `key` (others are left out).
        init(port: Int, prefix: String, key: String) throws {
            descriptor = try RawEtcd.openConnection(port: port)
            let body = RawEtcd.watch(prefix: prefix)
            try RawEtcd.send(RawEtcd.head("/v3/watch", port: port, length: body.count) + body, on: descriptor)
            let started = DispatchSemaphore(value: 0)
            let thread = Thread { [descriptor, lock] in
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                var line: [UInt8] = []
                var created = false
                let events = Array("\"events\"".utf8)
                let changed = Array("\"\(RawEtcd.base64(key))\"".utf8)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
                    guard count > 0 else { break }
                    let now = monotonicNanoseconds()
                    for byte in buffer[..<count] {
                        guard byte == 0x0A else {
                            line.append(byte)
                            continue
                        }
                        if !created && line.firstRange(of: Array("\"created\":true".utf8)) != nil {
                            created = true
                            started.signal()
                        } else if line.firstRange(of: events) != nil && line.firstRange(of: changed) != nil {
                            lock.lock()
                            self.arrivals.append(now)
                            lock.signal()
                            lock.unlock()
                        }
                        line.removeAll(keepingCapacity: true)
                    }
                }
                lock.lock()
                self.ended = true
                lock.signal()
                lock.unlock()
                if !created { started.signal() }
            }
            thread.start()
            guard started.wait(timeout: .now() + 30) == .success else {
                throw BenchmarkError("raw etcd client: the watch was not created within 30 s")
            }
        }

        /// The monotonic time at which the next message with events arrived (waiting for it up to `timeout`).
        func waitForEvent(timeout: TimeInterval) throws -> UInt64 {
            lock.lock()
            defer { lock.unlock() }
            let deadline = Date().addingTimeInterval(timeout)
            while arrivals.isEmpty && !ended {
                guard lock.wait(until: deadline) else { throw BenchmarkError("raw etcd client: no watch event") }
            }
            guard !arrivals.isEmpty else { throw BenchmarkError("raw etcd client: the watch ended") }
            return arrivals.removeFirst()
        }

        /// Ends the watch (its thread sees the end of the connection).
        func stop() {
            shutdown(descriptor, Int32(SHUT_RDWR))
            lock.lock()
            while !ended { lock.wait() }
            lock.unlock()
            close(descriptor)
        }
    }

    /// The request's head, HTTP/1.0.
    fileprivate static func head(_ path: String, port: Int, length: Int) -> [UInt8] {
        Array(
            "POST \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
                .utf8)
    }

    /// A blocking socket connected to `127.0.0.1:port`, its reads bounded by 30 s.
    fileprivate static func openConnection(port: Int) throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw BenchmarkError("raw etcd client: socket failed") }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw BenchmarkError("raw etcd client: connect to port \(port) failed (errno \(errno))")
        }
        return descriptor
    }

    /// Writes every byte of `bytes`.
    fileprivate static func send(_ bytes: [UInt8], on descriptor: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw BenchmarkError("raw etcd client: write failed (errno \(errno))") }
            offset += written
        }
    }
}
