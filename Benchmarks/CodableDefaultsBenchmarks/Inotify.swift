#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Counts the times a file is replaced by a rename into its directory, using Linux inotify: every atomic
/// save (temporary file renamed over the target) is one `IN_MOVED_TO` event for the target's name.
///
/// The kernel reports the events, so the count does not depend on timing or on the library's own
/// bookkeeping. The watch also takes `IN_CREATE` and `IN_MOVED_FROM` (of the temporary files), only so
/// that two renames to the same name are never adjacent in the queue: inotify merges an event into an
/// identical unread one at the tail of the queue (it does not compare rename cookies), which would
/// undercount a burst of atomic writes read in one go.
final class RenameCounter {
    private let fd: Int32
    private let directory: String
    private let fileName: String

    /// Starts watching `directory` for files renamed to `fileName`.
    init(directory: String, fileName: String) throws {
        #if os(Linux)
            let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard fd >= 0 else { throw BenchmarkError.system("inotify_init1", "for \(directory)") }
            guard inotify_add_watch(fd, directory, UInt32(IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE)) >= 0 else {
                let error = BenchmarkError.system("inotify_add_watch", directory)
                close(fd)
                throw error
            }
            self.fd = fd
            self.directory = directory
            self.fileName = fileName
        #else
            throw BenchmarkError("counting file writes needs Linux inotify")
        #endif
    }

    deinit {
        close(fd)
    }

    /// Reads every event queued so far and returns how many renamed a file to the watched name.
    func drain() throws -> Int {
        #if os(Linux)
            var count = 0
            let capacity = 64 * 1024
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
            defer { buffer.deallocate() }
            while true {
                let length = read(fd, buffer, capacity)
                if length < 0 {
                    if errno == EAGAIN { return count }
                    if errno == EINTR { continue }
                    throw BenchmarkError.system("read", "inotify events for \(directory)")
                }
                guard length > 0 else { return count }
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= length {
                    let event = (buffer + offset).loadUnaligned(as: inotify_event.self)
                    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        throw BenchmarkError("inotify queue overflowed while counting writes in \(directory)")
                    }
                    let nameStart = (buffer + offset + header).assumingMemoryBound(to: CChar.self)
                    if event.mask & UInt32(IN_MOVED_TO) != 0 && event.len > 0
                        && String(cString: nameStart) == fileName
                    {
                        count += 1
                    }
                    offset += header + Int(event.len)
                }
            }
        #else
            throw BenchmarkError("counting file writes needs Linux inotify")
        #endif
    }

    /// Counts the renames to the watched name until none has arrived for `quiet` nanoseconds after the
    /// first one, or `timeout` nanoseconds have passed without any. Returns the count and the monotonic
    /// time of the first rename (0 if there was none).
    func count(quiet: UInt64, timeout: UInt64) throws -> (count: Int, first: UInt64) {
        let start = monotonicNanoseconds()
        var total = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
        while true {
            let now = monotonicNanoseconds()
            let found = try drain()
            if found > 0 {
                if first == 0 { first = now }
                last = now
                total += found
            }
            if total > 0 && now - last >= quiet { return (total, first) }
            if total == 0 && now - start >= timeout { return (0, 0) }
            usleep(1000)
        }
    }
}
