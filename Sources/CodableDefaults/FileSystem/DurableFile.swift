#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What identifies one version of a file on disk: if any of these changed, the file was rewritten.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64
    /// The inode's change time: a reused inode number with the same size and modification time still
    /// differs here unless it was made within the same clock tick.
    var changed: Int64

    /// Whether `other` is the same file (device and inode), whatever its size and times are now.
    func isSameFile(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode
    }

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int64(info.st_size)
        modified = Platform.modificationTime(info)
        changed = Platform.statusChangeTime(info)
    }
}

/// POSIX file operations for one store file: a bounded read, the durable atomic write, the sidecar lock
/// and the clean-up of temporary files left by a crash.
///
/// Every system call goes through ``system`` (see ``Syscalls``), which tests can make fail. Every failure is a
/// ``DefaultsError`` naming the path and the `errno`. Nothing here retries a failed
/// `fsync` on the same file: after a failed `fsync` the kernel may have dropped the dirty pages, so the
/// temporary file is discarded and the next save starts over.
struct DurableFile: Sendable {
    /// The store file's absolute path.
    let path: String
    /// The directory holding it.
    let directory: String
    /// The file's last path component.
    let name: String
    /// The system calls it makes: the plain ones, or ones a test's ``FaultPlan`` makes fail.
    let system: Syscalls
    /// What the file is, as its errors name it: `store` ("the store file"), `history`, `local copy`, ...
    let role: String

    /// Creates the file layer for an absolute path, with the system calls installed for the current task
    /// (the plain ones, unless a test installed a ``FaultPlan``). Nothing is touched on disk.
    init(path: String, role: String = "store") {
        self.init(path: path, system: .installed, role: role)
    }

    /// Creates the file layer for an absolute path, making its system calls through `system`. Nothing is
    /// touched on disk.
    init(path: String, system: Syscalls, role: String = "store") {
        self.path = path
        self.system = system
        self.role = role
        if let slash = path.lastIndex(of: "/") {
            let dir = String(path[..<slash])
            directory = dir.isEmpty ? "/" : dir
            name = String(path[path.index(after: slash)...])
        } else {
            directory = "."
            name = path
        }
    }

    /// The sidecar lock file's path: `.<name>.lock` beside the store file.
    var lockPath: String { directory + "/." + name + ".lock" }

    /// The prefix shared by this file's temporary files: `.<name>.`; they end in `.tmp`.
    var temporaryPrefix: String { "." + name + "." }

    func failure(_ code: DefaultsError.Code, _ what: String, errno: Int32, path: String? = nil)
        -> DefaultsError
    {
        DefaultsError(code, "\(what): \(Platform.describe(errno))", path: path ?? self.path, errno: errno)
    }

    /// Returns the identity of the file now on disk, or `nil` if there is none.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/readFailed`` if `stat` fails for another reason than a missing file.
    func currentIdentity() throws(DefaultsError) -> FileIdentity? {
        var info = stat()
        if system.stat(path, &info) != 0 {
            let code = Platform.errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw failure(.readFailed, "cannot inspect the \(role) file", errno: code)
        }
        return FileIdentity(info)
    }

    /// Reads the whole file, refusing anything that is not a regular file or is larger than `maxSize` bytes.
    ///
    /// - Returns: The bytes and the identity of the version read, or `nil` when no file exists at the path.
    /// - Throws: ``DefaultsError`` with code `readFailed`, `notARegularFile` or `fileTooLarge`.
    func read(maxSize: Int) throws(DefaultsError) -> (bytes: [UInt8], identity: FileIdentity)? {
        // O_NONBLOCK so that a FIFO planted at the path cannot block the open; it is refused below.
        let fd = system.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let code = Platform.errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw failure(.readFailed, "cannot open the \(role) file", errno: code)
        }
        defer { _ = system.close(fd) }
        var info = stat()
        if system.fstat(fd, &info) != 0 {
            throw failure(.readFailed, "cannot inspect the \(role) file", errno: Platform.errno)
        }
        guard Platform.isRegular(info.st_mode) else {
            throw DefaultsError(
                .notARegularFile, "the \(role) path is not a regular file (a directory, FIFO or device)", path: path)
        }
        let size = Int(info.st_size)
        guard size <= maxSize else {
            throw DefaultsError(
                .fileTooLarge, "the \(role) file is \(size) bytes, over the limit of \(maxSize) bytes", path: path)
        }
        var bytes = [UInt8](repeating: 0, count: size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= maxSize else {
                    throw DefaultsError(
                        .fileTooLarge, "the \(role) file grew over the limit of \(maxSize) bytes while being read",
                        path: path)
                }
                bytes.append(contentsOf: repeatElement(0, count: max(4096, bytes.count)))
            }
            let result = bytes.withUnsafeMutableBytes { buffer in
                system.read(fd, buffer.baseAddress! + count, buffer.count - count)
            }
            if result < 0 {
                let code = Platform.errno
                if code == EINTR { continue }
                throw failure(.readFailed, "cannot read the \(role) file", errno: code)
            }
            if result == 0 { break }
            count += result
        }
        bytes.removeSubrange(count...)
        return (bytes, FileIdentity(info))
    }

    /// Creates the store's directory and any missing parents, with mode 0700.
    func createDirectory() throws(DefaultsError) {
        var info = stat()
        if system.stat(directory, &info) == 0 {
            guard Platform.isDirectory(info.st_mode) else {
                throw DefaultsError(
                    .writeFailed, "the \(role) file's directory is not a directory", path: directory, errno: ENOTDIR)
            }
            return
        }
        let start = directory.hasPrefix("/") ? "" : "."
        let components = directory.split(separator: "/")
        // A `.` or `..` after a directory that does not exist names nothing (the kernel says ENOENT, and the
        // store was read as missing): creating that directory would make `..` go up through it, to a file
        // that may exist and was not read. Refused before anything is created.
        var prefix = start
        var missing = false
        for component in components {
            if missing && (component == "." || component == "..") {
                throw failure(
                    .writeFailed,
                    "cannot create the \(role) file's directory: '\(component)' follows a directory that does not exist",
                    errno: ENOENT, path: directory)
            }
            prefix += "/" + component
            if !missing && system.stat(prefix, &info) != 0 { missing = true }
        }
        var current = start
        for component in components {
            current += "/" + component
            if system.mkdir(current, 0o700) != 0 {
                let code = Platform.errno
                if code == EEXIST { continue }
                throw failure(.writeFailed, "cannot create the \(role) file's directory", errno: code, path: current)
            }
        }
    }

    /// Writes `bytes` as the new content of the file, atomically and durably.
    ///
    /// The recipe: the bytes go to a new temporary file in the same directory (`O_CREAT|O_EXCL|O_NOFOLLOW`),
    /// which gets the old file's mode (0600 for a new file), is fully written, `fsync`ed and closed, then
    /// renamed over the store file; last the directory is `fsync`ed. At every instant the path holds the
    /// complete old or the complete new file. On failure the temporary file is removed and the old file is
    /// untouched. Once the rename succeeded the file is written: a failure to flush the directory after it is
    /// returned, not thrown (the new file is in place but may not survive a power loss until a later
    /// ``syncDirectory(after:)`` succeeds).
    ///
    /// - Returns: The identity of the file written, and the ``DefaultsError/Code-swift.struct/notDurable``
    ///   error when the directory could not be flushed.
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` with the path and `errno`.
    func write(_ bytes: [UInt8]) throws(DefaultsError) -> (identity: FileIdentity, notDurable: DefaultsError?) {
        try createDirectory()
        var mode: mode_t = 0o600
        var owner: (uid_t, gid_t)?
        var existing = stat()
        if system.stat(path, &existing) == 0 {
            guard Platform.isRegular(existing.st_mode) else {
                throw DefaultsError(
                    .notARegularFile, "the \(role) path is not a regular file (a directory, FIFO or device)",
                    path: path)
            }
            mode = existing.st_mode & 0o7777
            if existing.st_uid != geteuid() || existing.st_gid != getegid() {
                owner = (existing.st_uid, existing.st_gid)
            }
        } else if Platform.errno != ENOENT {
            // Only a missing file is a new one: any other failure would write the file with mode 0600.
            throw failure(.writeFailed, "cannot inspect the \(role) file to keep its mode", errno: Platform.errno)
        }
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let temporary = directory + "/" + temporaryPrefix + String(getpid()) + "." + random + ".tmp"
        let fd = system.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 {
            throw failure(.writeFailed, "cannot create a temporary file beside the \(role) file", errno: Platform.errno)
        }
        var open = true
        func discard() {
            if open { _ = system.close(fd) }
            _ = system.unlink(temporary)
        }
        if system.fchmod(fd, mode) != 0 {
            let code = Platform.errno
            discard()
            throw failure(.writeFailed, "cannot set the mode of the temporary file", errno: code)
        }
        // Keep the old file's owner (a save by root must not take a user's file away from them). Only root
        // may give a file away; for anyone else EPERM is expected and the file becomes theirs, as any
        // rewrite by them would.
        if let (uid, gid) = owner, system.fchown(fd, uid, gid) != 0, Platform.errno != EPERM {
            let code = Platform.errno
            discard()
            throw failure(.writeFailed, "cannot set the owner of the temporary file", errno: code)
        }
        var offset = 0
        let writeError: Int32? = bytes.withUnsafeBytes { buffer in
            while offset < buffer.count {
                let written = system.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if Platform.errno == EINTR { continue }
                    return Platform.errno
                }
                offset += written
            }
            return nil
        }
        if let writeError {
            discard()
            throw failure(.writeFailed, "cannot write the temporary file", errno: writeError)
        }
        if system.fullSync(fd) != 0 {
            let code = Platform.errno
            discard()
            throw failure(.writeFailed, "cannot flush the temporary file to disk (fsync)", errno: code)
        }
        var info = stat()
        if system.fstat(fd, &info) != 0 {
            let code = Platform.errno
            discard()
            throw failure(.writeFailed, "cannot inspect the temporary file", errno: code)
        }
        open = false
        if system.close(fd) != 0 {
            let code = Platform.errno
            discard()
            throw failure(.writeFailed, "cannot close the temporary file", errno: code)
        }
        if system.rename(temporary, path) != 0 {
            let code = Platform.errno
            discard()
            throw failure(.writeFailed, "cannot rename the temporary file over the \(role) file", errno: code)
        }
        let notDurable = syncDirectory()
        // The rename changed the inode's change time: take the identity as it is now (the caller holds the
        // lock, so no other writer of this library can have replaced the file since).
        var renamed = stat()
        if system.stat(path, &renamed) == 0 && renamed.st_ino == info.st_ino && renamed.st_dev == info.st_dev {
            return (FileIdentity(renamed), notDurable)
        }
        return (FileIdentity(info), notDurable)
    }

    /// Renames the file to `<name>.corrupt-<timestamp>` (with a counter if that exists) and `fsync`s the
    /// directory. Call holding the lock.
    ///
    /// As with ``write(_:)``, once the rename succeeded the file is moved: a failure to flush the directory
    /// after it is returned, not thrown (the move may not survive a power loss until a later
    /// ``syncDirectory(after:)`` succeeds).
    ///
    /// - Returns: The new path, and the ``DefaultsError/Code-swift.struct/notDurable`` error when the
    ///   directory could not be flushed.
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` with the `errno` when the rename fails; the
    ///   file is then where it was.
    func moveAside() throws(DefaultsError) -> (path: String, notDurable: DefaultsError?) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var time = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &time)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(time.tm_year + 1900)" + two(time.tm_mon + 1) + two(time.tm_mday)
        let stamp = date + "T" + two(time.tm_hour) + two(time.tm_min) + two(time.tm_sec) + "Z"
        var candidate = path + ".corrupt-" + stamp
        var counter = 1
        var info = stat()
        while system.lstat(candidate, &info) == 0 {
            counter += 1
            candidate = path + ".corrupt-" + stamp + "-\(counter)"
        }
        if system.rename(path, candidate) != 0 {
            throw failure(.writeFailed, "cannot move the unreadable store file aside", errno: Platform.errno)
        }
        return (candidate, syncDirectory(after: "the unreadable store file \(path) was moved aside to \(candidate)"))
    }

    /// `fsync`s the directory so that a rename in it survives a power loss.
    ///
    /// - Parameter done: What the rename did, for the error's message; `nil` for a save ("the changes were
    ///   written to <path>").
    /// - Returns: `nil`, or the ``DefaultsError/Code-swift.struct/notDurable`` error naming the file, the
    ///   directory and the `errno` (opening the directory or its `fsync` failed).
    func syncDirectory(after done: String? = nil) -> DefaultsError? {
        func notDurable(_ what: String, _ code: Int32) -> DefaultsError {
            DefaultsError(
                .notDurable,
                "\(done ?? "the changes were written to \(path)"), but \(what) \(directory) failed "
                    + "(\(Platform.describe(code))): \(done == nil ? "they" : "it") may not survive a power loss",
                path: path, errno: code)
        }
        let fd = system.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { return notDurable("opening its directory", Platform.errno) }
        defer { _ = system.close(fd) }
        if system.fullSync(fd) != 0 {
            let code = Platform.errno
            // Some file systems cannot fsync a directory; they give EINVAL. The rename is then as durable
            // as they can make it.
            if code != EINVAL { return notDurable("flushing its directory", code) }
        }
        return nil
    }
}
