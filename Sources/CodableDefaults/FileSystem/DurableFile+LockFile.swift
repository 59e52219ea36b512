#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DurableFile {
    /// Opens (creating it with mode 0600 if needed) and exclusively locks the sidecar lock file, waiting at
    /// most `timeout` for another holder to release it.
    ///
    /// The lock is an advisory `flock`: the kernel releases it when the holder closes the descriptor or dies.
    /// The wait tries `LOCK_EX|LOCK_NB` again and again, sleeping 1 ms, then 2 ms, until the deadline. `flock`
    /// keeps no queue: a holder that saves again takes the lock back within microseconds of releasing it, so
    /// a waiter gets in only by trying in such a gap. Pauses that grew to 50 ms let three processes saving back
    /// to back keep a fourth out past a 10-second timeout (measured with fsync slowed to 10 ms); at 2 ms every
    /// waiter got its turn. A trial costs one system call.
    ///
    /// - Returns: The descriptor holding the lock; pass it to ``unlock(_:)``.
    /// - Throws: ``DefaultsError/Code-swift.struct/lockTimeout`` naming the lock file and (on Linux) the
    ///   holder's pid when the deadline passed; ``DefaultsError/Code-swift.struct/writeFailed`` when the lock
    ///   file cannot be opened or locked.
    func lock(timeout: Duration, onWait: () -> Void = {}) throws(DefaultsError) -> Int32 {
        let fd = system.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 { throw failure(.writeFailed, "cannot open the lock file", errno: Platform.errno, path: lockPath) }
        let deadline = Platform.monotonicNanoseconds().saturatingAdd(timeout.nanoseconds())
        var pause: UInt64 = 1_000_000
        var waited = false
        while system.tryLockExclusive(fd) != 0 {
            let code = Platform.errno
            let now = Platform.monotonicNanoseconds()
            if !waited && Platform.isLockBusy(code) {
                waited = true
                onWait()
            }
            guard Platform.isLockBusy(code), now < deadline else {
                let holders = Platform.isLockBusy(code) ? Platform.flockHolders(of: fd) : []
                _ = system.close(fd)
                guard Platform.isLockBusy(code) else {
                    throw failure(.writeFailed, "cannot lock the lock file", errno: code, path: lockPath)
                }
                let holder =
                    holders.isEmpty
                    ? "another process holds it"
                    : "held by process " + holders.map(String.init).joined(separator: ", ")
                throw DefaultsError(
                    .lockTimeout,
                    "the lock file could not be taken within \(timeout) (\(holder)); nothing was written and the "
                        + "changes stay pending", path: lockPath)
            }
            Platform.sleep(nanoseconds: min(pause, deadline - now))
            pause = min(pause * 2, 2_000_000)
        }
        return fd
    }

    /// Releases a lock taken with ``lock(timeout:onWait:)``.
    func unlock(_ fd: Int32) {
        system.unlock(fd)
        _ = system.close(fd)
    }

    /// The names of temporary files of this store file left in its directory (by a crashed writer).
    func leftoverTemporaries() -> [String] {
        guard let entries = system.directoryEntries(directory) else { return [] }
        let prefix = temporaryPrefix
        return entries.filter { $0.hasPrefix(prefix) && Self.isTemporarySuffix($0.dropFirst(prefix.count)) }
    }

    /// Whether `rest` is what follows `.<name>.` in this file's temporary names: `<pid>.<random>.tmp`, the
    /// pid in decimal and the random part in base 36. (A looser match, such as any `.tmp` suffix, would
    /// take the temporary files of a file whose name extends this one, like `settings.json.json`.)
    private static func isTemporarySuffix(_ rest: Substring) -> Bool {
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2] == "tmp", !parts[0].isEmpty, !parts[1].isEmpty else { return false }
        return parts[0].allSatisfy { $0.isASCII && $0.isNumber }
            && parts[1].allSatisfy { $0.isASCII && ($0.isNumber || $0.isLowercase) }
    }

    /// Removes temporary files left by a crashed writer. Call it holding the lock: every live writer holds the
    /// lock while its temporary file exists, so any temporary file seen under the lock is a leftover.
    ///
    /// - Returns: How many files were removed.
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` if one cannot be removed.
    func removeLeftoverTemporaries() throws(DefaultsError) -> Int {
        var removed = 0
        for entry in leftoverTemporaries() {
            let full = directory + "/" + entry
            var info = stat()
            // Only files and links are ours to remove; anything else at such a name is left alone.
            if system.lstat(full, &info) == 0 && Platform.isDirectory(info.st_mode) { continue }
            if system.unlink(full) != 0 {
                let code = Platform.errno
                if code == ENOENT { continue }
                throw failure(.writeFailed, "cannot remove a leftover temporary file", errno: code, path: full)
            }
            removed += 1
        }
        return removed
    }
}
