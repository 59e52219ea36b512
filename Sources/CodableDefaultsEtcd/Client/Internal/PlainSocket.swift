import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blocking TCP socket calls with a deadline, for the `http://` endpoints' calls (``PlainHTTP``) and watches
/// (``PlainWatchConnection``) on Linux: open a connection, send, wait for data. Failures are ``PlainSocket/Failure``s, in words.
enum PlainSocket {
    /// Why a socket call failed, in words; ``EtcdError/Code/unreachable`` unless it says otherwise.
    struct Failure: Error {
        var reason: String
        var code = EtcdError.Code.unreachable
    }

    /// A connected, non-blocking socket to the first address of `host:port` that accepts before `deadline`.
    static func open(host: String, port: Int, deadline: Date) throws(Failure) -> Int32 {
        // For the message of a timeout; bounded, so that a deadline centuries away converts without a trap.
        let budget = Int(min(max(0, deadline.timeIntervalSinceNow * 1000), 1e15).rounded())
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
            // Not inherited by programs the process starts: a connection kept alive lives long.
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            var result = connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen)
            if result != 0 && errno == EINPROGRESS {
                let ready: Bool
                do { ready = try wait(descriptor, for: Int16(POLLOUT), deadline: deadline) } catch {
                    close(descriptor)
                    throw error
                }
                guard ready else {
                    close(descriptor)
                    throw Failure(reason: "timed out connecting (after \(budget) ms)")
                }
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
                result = error == 0 ? 0 : -1
                errno = error
            }
            if result == 0 { return descriptor }
            reason = describe(errno)
            close(descriptor)
        }
        throw Failure(reason: reason)
    }

    /// Waits until `descriptor` is ready for `events` (or hung up); `false` when `deadline` passed first.
    static func wait(_ descriptor: Int32, for events: Int16, deadline: Date) throws(Failure) -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { throw Failure(reason: describe(errno)) }
        }
    }

    /// Sends every byte of `bytes` before `deadline`.
    ///
    /// - Returns: `true`; `false` when the connection was closed by the peer before it took the first byte (`EPIPE`,
    ///   `ECONNRESET`), so that nothing was sent.
    /// - Throws: A ``Failure`` on a timeout, or when the connection fails once part of `bytes` was sent.
    @discardableResult
    static func sendAll(_ bytes: [UInt8], on descriptor: Int32, deadline: Date) throws(Failure) -> Bool {
        var offset = 0
        while offset < bytes.count {
            guard try wait(descriptor, for: Int16(POLLOUT), deadline: deadline) else {
                throw Failure(reason: "timed out sending the request")
            }
            let written = bytes.withUnsafeBytes {
                sendWithoutSignal(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if offset == 0 && (code == EPIPE || code == ECONNRESET) { return false }
                throw Failure(reason: "connection lost sending the request (\(describe(code)))")
            }
            offset += written
        }
        return true
    }

    /// Reads what has arrived (after ``wait(_:for:deadline:)`` said so) into `buffer`: the count, `0` at the end
    /// of the connection, `nil` when nothing was there after all.
    static func receive(into buffer: inout [UInt8], on descriptor: Int32) throws(Failure) -> Int? {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        if count >= 0 { return count }
        if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return nil }
        throw Failure(reason: "connection lost reading the answer (\(describe(errno)))")
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
    static func describe(_ code: Int32) -> String {
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
