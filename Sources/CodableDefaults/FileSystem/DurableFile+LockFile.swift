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
    /// `flock` keeps no queue, and a wait can only try `LOCK_EX|LOCK_NB` again and again (a trial costs one
    /// system call), so a writer that saves back to back takes the lock back within microseconds of releasing
    /// it, and a waiter got in only when a trial fell into such a gap: three processes saving in a loop kept a
    /// fourth out past a 10-second timeout. So a writer first takes its turn: an exclusive `flock` of a second
    /// sidecar file, the queue file (`.<name>.queue`), held only until it has the lock. The waiter holding the
    /// turn is the only one trying the lock, so the writer that just released it cannot take it back (it waits
    /// for the turn like any other), and that waiter gets the lock at the holder's next release; it tries every
    /// 0.2 ms for its first 20 ms, then less often (up to 2 ms), so that the lock does not stay free between
    /// two saves. The other waiters try the turn every 1, then 2 ms, and which of them gets it next is left to
    /// chance: a waiter is never shut out, though it may wait through a few turns. A waiter that has not had the
    /// turn for a second (one that holds it is stopped: a debugger, a suspended process) also tries the lock
    /// itself, as every waiter did before there was a turn. Without waiting (`timeout` zero) there is no turn to
    /// take and the queue file is not used.
    ///
    /// - Returns: The descriptor holding the lock; pass it to ``unlock(_:)``.
    /// - Throws: ``DefaultsError/Code-swift.struct/lockTimeout`` naming the lock file and (on Linux) the
    ///   lock's holder's pid when the deadline passed; ``DefaultsError/Code-swift.struct/writeFailed`` when the
    ///   lock or queue file cannot be opened or locked.
    func lock(timeout: Duration, onWait: () -> Void = {}) throws(DefaultsError) -> Int32 {
        let fd = try openLockFile(lockPath, "the lock file")
        let start = Platform.monotonicNanoseconds()
        let deadline = start.saturatingAdd(timeout.nanoseconds())
        var waited = false
        let noteWait = {
            if !waited {
                waited = true
                onWait()
            }
        }
        var queue: Int32?
        defer { if let queue { unlock(queue) } }
        do {
            if timeout > .zero {
                let opened = try openLockFile(queuePath, "the queue file")
                queue = opened
                // Without the turn after a second, the lock itself is tried too (and on getting it, the turn is
                // not needed any more).
                let patience = start.saturatingAdd(min(timeout, .seconds(1)).nanoseconds())
                let gotLock = try take(
                    opened, path: queuePath, until: deadline, pauses: 1_000_000...2_000_000, onWait: noteWait,
                    alternative: (fd, after: patience)
                ) { timedOut(fd, queue: opened, after: timeout) }
                if gotLock { return fd }
            }
            _ = try take(
                fd, path: lockPath, until: deadline, pauses: Self.headPause...2_000_000, fastFor: 20_000_000,
                onWait: noteWait
            ) { timedOut(fd, queue: nil, after: timeout) }
        } catch {
            _ = system.close(fd)
            throw error
        }
        return fd
    }

    /// The sidecar queue file's path, `.<name>.queue` beside the store file: see ``lock(timeout:onWait:)``.
    var queuePath: String { directory + "/." + name + ".queue" }

    /// Opens (creating it with mode 0600 if needed) the lock or queue file at `path`, `what` in errors.
    private func openLockFile(_ path: String, _ what: String) throws(DefaultsError) -> Int32 {
        let fd = system.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 { throw failure(.writeFailed, "cannot open \(what)", errno: Platform.errno, path: path) }
        return fd
    }

    /// Locks `fd` exclusively, trying until `deadline`: every `pauses.lowerBound` nanoseconds for the first
    /// `fastFor`, then pausing twice as long each time up to `pauses.upperBound`. Calls `onWait` when it first finds
    /// `fd` held. With an `alternative`, from its time on each try of `fd` that fails also tries the alternative's
    /// descriptor, and taking that one ends the wait instead.
    ///
    /// - Returns: `true` when the alternative was taken instead of `fd`.
    /// - Throws: What `timedOut` makes when the deadline passed; ``DefaultsError/Code-swift.struct/writeFailed``
    ///   when `flock` fails for another reason than another holder.
    private func take(
        _ fd: Int32, path: String, until deadline: UInt64, pauses: ClosedRange<UInt64>, fastFor: UInt64 = 0,
        onWait: () -> Void, alternative: (descriptor: Int32, after: UInt64)? = nil, timedOut: () -> DefaultsError
    ) throws(DefaultsError) -> Bool {
        let start = Platform.monotonicNanoseconds()
        var pause = pauses.lowerBound
        while system.tryLockExclusive(fd) != 0 {
            let code = Platform.errno
            guard Platform.isLockBusy(code) else {
                let what = path == queuePath ? "the queue file" : "the lock file"
                throw failure(.writeFailed, "cannot lock \(what)", errno: code, path: path)
            }
            onWait()
            var now = Platform.monotonicNanoseconds()
            if let alternative, now >= alternative.after {
                if system.tryLockExclusive(alternative.descriptor) == 0 { return true }
                let code = Platform.errno
                guard Platform.isLockBusy(code) else {
                    throw failure(.writeFailed, "cannot lock the lock file", errno: code, path: lockPath)
                }
                now = Platform.monotonicNanoseconds()
            }
            guard now < deadline else { throw timedOut() }
            Platform.sleep(nanoseconds: min(pause, deadline - now))
            if now - start >= fastFor { pause = min(pause * 2, pauses.upperBound) }
        }
        return false
    }

    /// How long the waiter holding the turn first sleeps between its tries of the lock, in nanoseconds.
    private static var headPause: UInt64 { 200_000 }

    /// The error of a wait for the lock file open as `fd` that lasted `timeout`, naming the lock's holders, or
    /// when none holds it the holders of the `queue` file (a waiter ahead of this one that does not go on; `nil`
    /// when this one holds it).
    private func timedOut(_ fd: Int32, queue: Int32?, after timeout: Duration) -> DefaultsError {
        func pids(_ holders: [Int32]) -> String { holders.map(String.init).joined(separator: ", ") }
        let holders = Platform.flockHolders(of: fd)
        let waiters = holders.isEmpty ? queue.map(Platform.flockHolders(of:)) ?? [] : []
        let holder =
            !holders.isEmpty
            ? "held by process " + pids(holders)
            : !waiters.isEmpty
                ? "process \(pids(waiters)), waiting before this one, holds its queue file \(queuePath)"
                : "another process holds it"
        return DefaultsError(
            .lockTimeout,
            "the lock file could not be taken within \(timeout) (\(holder)); nothing was written and the "
                + "changes stay pending", path: lockPath)
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
