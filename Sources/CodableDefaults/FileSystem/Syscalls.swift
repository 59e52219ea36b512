#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The system calls of the file layer, as one small set of wrappers: every call ``DurableFile`` makes to the
/// kernel (for the read, the durable write, the lock file, moving a file aside, removing leftover temporary
/// files and resolving a path) goes through one of these, in the shape of swift-system's internal syscall
/// layer.
///
/// A release build has no fault plan (it is compiled only with `CODABLE_DEFAULTS_TESTING`, see `Package.swift`):
/// each wrapper is the libc call. In a debug build, ``faults`` is `nil` unless a test installed a plan, and each
/// wrapper checks it once. In tests a ``FaultPlan`` makes chosen calls fail with a chosen `errno` (or write less
/// than asked), so the fault-injection tests also run in-process, without strace or root (the strace-based tests
/// run the real kernel under `strace -e inject=…` and stay).
///
/// The plan belongs to one value: a ``DurableFile`` made with it, and so the one store that holds that file.
/// ``installed`` hands it to files made inside ``FaultPlan/install(_:operation:)``, which scopes it to the
/// current task (a task-local value), so tests running in parallel never see each other's plans.
///
/// Each wrapper returns what the libc call returns, with `errno` set on failure. The ones that retry `EINTR`
/// say so; a retried call counts as one more call for a plan.
struct Syscalls: Sendable {
    /// A kind of system call, as a ``FaultPlan`` names them.
    enum Call: String, Sendable, CaseIterable {
        case open, close, read, write, fsync, fstat, stat, lstat, fchmod, fchown, rename, unlink, mkdir, flock
        case readlink, realpath, opendir
    }

    /// What a ``FaultPlan`` makes of a call.
    enum Fault: Sendable, Equatable {
        /// The call is not made; it returns -1 with this `errno`.
        case error(Int32)
        /// A read or write moves at most this many bytes (at least 1), for real; other calls are made as asked.
        case short(Int)
    }

    #if CODABLE_DEFAULTS_TESTING
        /// The faults to inject, or `nil` for the plain system calls.
        let faults: FaultPlan?

        /// The plain system calls.
        static let live = Syscalls(faults: nil)

        /// The system calls with the plan installed for the current task (see ``FaultPlan/install(_:operation:)``),
        /// or ``live`` when there is none.
        static var installed: Syscalls {
            guard let plan = FaultPlan.current else { return .live }
            return Syscalls(faults: plan)
        }
    #else
        /// The plain system calls.
        static let live = Syscalls()

        /// The plain system calls: a build without `CODABLE_DEFAULTS_TESTING` has no fault plan.
        static var installed: Syscalls { .live }
    #endif

    /// What the plan says about this call: `nil` to make it for real, else the fault (and `errno` is set for
    /// an error). `path` is the call's path, or `fd` its descriptor's; `otherPath` a second path (a rename's
    /// target). Always `nil` in a build without `CODABLE_DEFAULTS_TESTING`.
    @inline(__always)
    private func fault(
        _ call: Call, path: String? = nil, otherPath: String? = nil, fd: Int32? = nil
    ) -> Fault? {
        #if CODABLE_DEFAULTS_TESTING
            guard let faults else { return nil }
            let fault = faults.take(call, path: path, otherPath: otherPath, fd: fd)
            if case .error(let code)? = fault { Platform.setErrno(code) }
            return fault
        #else
            return nil
        #endif
    }

    /// Tells the plan that `fd` was opened for `path` (so that calls on it match the path's rules).
    @inline(__always)
    private func opened(_ fd: Int32, path: String) {
        #if CODABLE_DEFAULTS_TESTING
            faults?.opened(fd, path: path)
        #endif
    }

    /// Tells the plan that `fd` was closed.
    @inline(__always)
    private func closed(_ fd: Int32) {
        #if CODABLE_DEFAULTS_TESTING
            faults?.closed(fd)
        #endif
    }

    /// Whether the plan makes this call fail (`errno` is then set); a ``Syscalls/Fault/short(_:)`` fault
    /// only shortens reads and writes, and makes any other call for real.
    @inline(__always)
    private func fails(
        _ call: Call, path: String? = nil, otherPath: String? = nil, fd: Int32? = nil
    ) -> Bool {
        guard case .error? = fault(call, path: path, otherPath: otherPath, fd: fd) else { return false }
        return true
    }

    /// `open` with a mode, retrying on `EINTR`.
    func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        while true {
            let fd = fails(.open, path: path) ? -1 : Platform.openOnce(path, flags, mode)
            if fd >= 0 {
                opened(fd, path: path)
                return fd
            }
            if Platform.errno != EINTR { return fd }
        }
    }

    /// `close`.
    func close(_ fd: Int32) -> Int32 {
        if fails(.close, fd: fd) {
            // An injected failure still releases the descriptor, as a real failing close does on Linux.
            _ = closeDescriptor(fd)
            return -1
        }
        return closeDescriptor(fd)
    }

    private func closeDescriptor(_ fd: Int32) -> Int32 {
        closed(fd)
        #if canImport(Darwin)
            return Darwin.close(fd)
        #elseif canImport(Glibc)
            return Glibc.close(fd)
        #else
            return Musl.close(fd)
        #endif
    }

    /// `read`, once (the caller retries `EINTR`). A planned short read reads at most its count of bytes.
    func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        switch fault(.read, fd: fd) {
        case nil: return systemRead(fd, buffer, count)
        case .short(let limit)?: return systemRead(fd, buffer, min(count, limit))
        case .error?: return -1
        }
    }

    /// `write`, once (the caller retries `EINTR` and writes the rest after a short write). A planned short
    /// write writes at most its count of bytes, for real.
    func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        switch fault(.write, fd: fd) {
        case nil: return systemWrite(fd, buffer, count)
        case .short(let limit)?: return systemWrite(fd, buffer, min(count, limit))
        case .error?: return -1
        }
    }

    /// ``Platform/fullSync(_:)``: `fsync` (`F_FULLFSYNC` on Darwin).
    func fullSync(_ fd: Int32) -> Int32 {
        fails(.fsync, fd: fd) ? -1 : Platform.fullSync(fd)
    }

    /// `fstat`.
    func fstat(_ fd: Int32, _ info: inout stat) -> Int32 {
        fails(.fstat, fd: fd) ? -1 : systemFstat(fd, &info)
    }

    /// `stat`, following symbolic links.
    func stat(_ path: String, _ info: inout stat) -> Int32 {
        fails(.stat, path: path) ? -1 : systemStat(path, &info)
    }

    /// `lstat`, not following a final symbolic link.
    func lstat(_ path: String, _ info: inout stat) -> Int32 {
        fails(.lstat, path: path) ? -1 : systemLstat(path, &info)
    }

    /// `fchmod`.
    func fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 {
        fails(.fchmod, fd: fd) ? -1 : systemFchmod(fd, mode)
    }

    /// `fchown`.
    func fchown(_ fd: Int32, _ owner: uid_t, _ group: gid_t) -> Int32 {
        fails(.fchown, fd: fd) ? -1 : systemFchown(fd, owner, group)
    }

    /// `rename`. A plan matches it by either path.
    func rename(_ from: String, _ to: String) -> Int32 {
        fails(.rename, path: from, otherPath: to) ? -1 : systemRename(from, to)
    }

    /// `unlink`.
    func unlink(_ path: String) -> Int32 {
        fails(.unlink, path: path) ? -1 : systemUnlink(path)
    }

    /// `mkdir`.
    func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        fails(.mkdir, path: path) ? -1 : systemMkdir(path, mode)
    }

    /// ``Platform/tryLockExclusive(_:)``: `flock(fd, LOCK_EX | LOCK_NB)`, retrying on `EINTR`.
    func tryLockExclusive(_ fd: Int32) -> Int32 {
        while true {
            let result = fails(.flock, fd: fd) ? -1 : Platform.tryLockExclusive(fd)
            if result == 0 || Platform.errno != EINTR { return result }
        }
    }

    /// ``Platform/unlock(_:)``: `flock(fd, LOCK_UN)`; its result is not looked at.
    func unlock(_ fd: Int32) {
        if !fails(.flock, fd: fd) { Platform.unlock(fd) }
    }

    /// `readlink`: what the symbolic link at `path` points to, or `nil` (with `errno` set) when it is not one
    /// or cannot be read.
    func readlink(_ path: String) -> String? {
        guard !fails(.readlink, path: path) else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = systemReadlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `realpath`: `path` with every symbolic link resolved, or `nil` (with `errno` set).
    func realpath(_ path: String) -> String? {
        guard !fails(.realpath, path: path), let resolved = systemRealpath(path) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `opendir`, `readdir` and `closedir`: the names in the directory at `path` (`.` and `..` included), or
    /// `nil` (with `errno` set) when it cannot be opened. A plan's `.opendir` fault fails the open.
    func directoryEntries(_ path: String) -> [String]? {
        guard !fails(.opendir, path: path), let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            names.append(
                withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                })
        }
        return names
    }
}

// The C functions, under names no method of `Syscalls` shadows.

@inline(__always)
private func systemFstat(_ fd: Int32, _ info: inout stat) -> Int32 { fstat(fd, &info) }

@inline(__always)
private func systemStat(_ path: String, _ info: inout stat) -> Int32 { stat(path, &info) }

@inline(__always)
private func systemLstat(_ path: String, _ info: inout stat) -> Int32 { lstat(path, &info) }

@inline(__always)
private func systemFchmod(_ fd: Int32, _ mode: mode_t) -> Int32 { fchmod(fd, mode) }

@inline(__always)
private func systemFchown(_ fd: Int32, _ owner: uid_t, _ group: gid_t) -> Int32 { fchown(fd, owner, group) }

@inline(__always)
private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }

@inline(__always)
private func systemUnlink(_ path: String) -> Int32 { unlink(path) }

@inline(__always)
private func systemMkdir(_ path: String, _ mode: mode_t) -> Int32 { mkdir(path, mode) }

@inline(__always)
private func systemReadlink(_ path: String, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
    readlink(path, buffer, size)
}

@inline(__always)
private func systemRealpath(_ path: String) -> UnsafeMutablePointer<CChar>? { realpath(path, nil) }
