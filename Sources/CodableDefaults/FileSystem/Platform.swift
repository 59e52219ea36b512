// Every platform difference of the file layer lives in this file.
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Thin wrappers over the system calls the store needs, with the platform differences resolved.
enum Platform {
    /// The calling thread's current `errno`.
    static var errno: Int32 {
        #if canImport(Darwin)
            return Darwin.errno
        #elseif canImport(Glibc)
            return Glibc.errno
        #else
            return Musl.errno
        #endif
    }

    /// The system's description of an error number, e.g. "No space left on device".
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Flushes a file's data to stable storage: `F_FULLFSYNC` on Darwin (plain `fsync` there does not
    /// reach the platter), `fsync` elsewhere. Returns 0 or -1 with `errno` set.
    ///
    /// On Darwin, `fsync` stands in only for a file system that does not support `F_FULLFSYNC` (see
    /// ``fullSync(full:plain:)``); any other failure, an I/O error first of all, is the result.
    static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
            // Not compiled here (no Apple SDK on the Linux builder): `fcntl(_:_:)` with two arguments is the
            // Darwin overlay's, and F_FULLFSYNC is in <sys/fcntl.h>.
            return fullSync(full: { fcntl(fd, F_FULLFSYNC) }, plain: { fsync(fd) })
        #else
            return fsync(fd)
        #endif
    }

    /// The full flush's rule, apart from the system calls (so it runs in tests on every platform): make the
    /// full flush (`full`, `F_FULLFSYNC`); only when it fails because the file system does not support it
    /// (see ``fullSyncIsUnsupported(_:)``), make the plain one (`plain`, `fsync`) instead. Each returns 0,
    /// or -1 with `errno` set; the result is the last call's, with its `errno`.
    ///
    /// Never `fsync` after an I/O error: once a flush failed, the kernel may have dropped the dirty pages
    /// and marked them clean, so a later `fsync` can succeed with the data lost (the rule the Linux path
    /// keeps by never retrying a failed `fsync`).
    static func fullSync(full: () -> Int32, plain: () -> Int32) -> Int32 {
        if full() == 0 { return 0 }
        let code = errno
        guard fullSyncIsUnsupported(code) else {
            setErrno(code)
            return -1
        }
        return plain()
    }

    /// Whether `code`, the `errno` of a failed `F_FULLFSYNC`, means the file system does not support it.
    ///
    /// xnu's `fcntl` passes `F_FULLFSYNC` to the file system's `VNOP_IOCTL`; one without it answers
    /// `ENOTSUP` (the default `err_ioctl` in `bsd/vfs/vfs_support.c`), `ENOTTY` (`VNOP_IOCTL` in
    /// `bsd/vfs/kpi_vfs.c`, and the usual ioctl answer) or `EINVAL`: the three codes xnu itself takes as
    /// "not supported" when it falls back from `F_BARRIERFSYNC` to `F_FULLFSYNC` (`bsd/kern/kern_descrip.c`).
    /// Every other code (`EIO`, `ENOSPC`, `EDQUOT`, `EINTR`, …) is a failure of the flush itself.
    static func fullSyncIsUnsupported(_ code: Int32) -> Bool {
        code == ENOTSUP || code == ENOTTY || code == EINVAL
    }

    /// Sets the calling thread's `errno` (for the fault-injecting ``Syscalls``).
    static func setErrno(_ code: Int32) {
        #if canImport(Darwin)
            Darwin.errno = code
        #elseif canImport(Glibc)
            Glibc.errno = code
        #else
            Musl.errno = code
        #endif
    }

    /// `open` with a mode, retrying on `EINTR`.
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        while true {
            let fd = openOnce(path, flags, mode)
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    /// `open` with a mode, once: -1 with `errno` set (`EINTR` included) on failure.
    @inline(__always)
    static func openOnce(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        path.withCString { cPath in
            #if canImport(Darwin)
                Darwin.open(cPath, flags, mode)
            #elseif canImport(Glibc)
                Glibc.open(cPath, flags, mode)
            #else
                Musl.open(cPath, flags, mode)
            #endif
        }
    }

    /// `flock(fd, LOCK_EX | LOCK_NB)`, retrying on `EINTR`: 0 when the lock is taken, else -1 with `errno` set
    /// (`EWOULDBLOCK` while another descriptor holds it).
    static func tryLockExclusive(_ fd: Int32) -> Int32 {
        while true {
            let result = flock(fd, LOCK_EX | LOCK_NB)
            if result == 0 || errno != EINTR { return result }
        }
    }

    /// Whether an `errno` from ``tryLockExclusive(_:)`` means someone else holds the lock.
    static func isLockBusy(_ code: Int32) -> Bool { code == EWOULDBLOCK || code == EAGAIN }

    /// The monotonic clock in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Sleeps the calling thread for about `nanoseconds` (a signal may end it early).
    static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        _ = nanosleep(&request, &remaining)
    }

    /// The ids of the processes holding a `flock` on the file open as `fd`, as the kernel lists them in
    /// `/proc/locks` (Linux only; elsewhere, or when the list cannot be read, none).
    static func flockHolders(of fd: Int32) -> [Int32] {
        #if os(Linux)
            var info = stat()
            guard fstat(fd, &info) == 0 else { return [] }
            let device = UInt64(info.st_dev)
            // glibc's gnu_dev_major/gnu_dev_minor, which Swift does not import.
            let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
            let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
            func hex2(_ value: UInt64) -> String {
                let text = String(value, radix: 16)
                return text.count < 2 ? "0" + text : text
            }
            let identity = "\(hex2(major)):\(hex2(minor)):\(UInt64(info.st_ino))"
            let listing = open("/proc/locks", O_RDONLY | O_CLOEXEC)
            guard listing >= 0 else { return [] }
            defer { close(listing) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { systemRead(listing, $0.baseAddress!, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                bytes.append(contentsOf: chunk[..<count])
            }
            // "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; a waiter's line has "->" after the number.
            var holders: [Int32] = []
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == identity, let pid = Int32(fields[4])
                else { continue }
                if !holders.contains(pid) { holders.append(pid) }
            }
            return holders
        #else
            return []
        #endif
    }

    /// `flock(fd, LOCK_UN)`.
    static func unlock(_ fd: Int32) {
        _ = flock(fd, LOCK_UN)
    }

    /// Whether `mode` (from `stat`) is a regular file.
    static func isRegular(_ mode: mode_t) -> Bool { (mode & S_IFMT) == S_IFREG }

    /// Whether `mode` (from `stat`) is a directory.
    static func isDirectory(_ mode: mode_t) -> Bool { (mode & S_IFMT) == S_IFDIR }

    /// The modification time of a `stat` result in nanoseconds.
    static func modificationTime(_ info: stat) -> Int64 {
        #if canImport(Darwin)
            return Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
            return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }

    /// The status change time of a `stat` result in nanoseconds.
    static func statusChangeTime(_ info: stat) -> Int64 {
        #if canImport(Darwin)
            return Int64(info.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(info.st_ctimespec.tv_nsec)
        #else
            return Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        #endif
    }

    /// Writes a message to standard error with one `write` call, ignoring failures (there is nowhere left to
    /// report them).
    static func printToStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// The C `read`, under a name no Swift method shadows.
@inline(__always)
func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// The C `write`, under a name no Swift method shadows.
@inline(__always)
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}
