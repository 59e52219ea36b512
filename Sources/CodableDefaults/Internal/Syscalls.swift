// Every platform difference of the file layer lives in this file.
#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Thin wrappers over the system calls the store needs, with the platform differences resolved.
enum Sys {
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
    static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
            // Some file systems (e.g. network ones) do not support F_FULLFSYNC; fsync is the best they offer.
            return fsync(fd)
        #else
            return fsync(fd)
        #endif
    }

    /// `open` with a mode, retrying on `EINTR`.
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        while true {
            let fd = path.withCString { cPath in
                #if canImport(Darwin)
                    Darwin.open(cPath, flags, mode)
                #elseif canImport(Glibc)
                    Glibc.open(cPath, flags, mode)
                #else
                    Musl.open(cPath, flags, mode)
                #endif
            }
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    /// `flock(fd, LOCK_EX)`, retrying on `EINTR`.
    static func lockExclusive(_ fd: Int32) -> Int32 {
        while true {
            let result = flock(fd, LOCK_EX)
            if result == 0 || errno != EINTR { return result }
        }
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
