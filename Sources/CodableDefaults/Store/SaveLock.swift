#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A store's save lock: it serializes the store's calls into its storage (saves, reloads, outside-change checks,
/// modify, moving an unreadable file aside), so that one call at a time reads or writes the storage. It is taken
/// before the store's state lock and held across storage I/O (and, for a file, around the lock file, which
/// ``DurableFile`` takes inside it).
///
/// A ``Store/modify(_:secretNames:as:resealing:opensSealed:namesUnderLock:_:)`` holds it while its closure runs. When that closure (on that thread) calls
/// what needs the lock again, waiting would never end: the call is refused with
/// ``DefaultsError/Code-swift.struct/reentrantCall``. Any other thread waits. Uncontended, taking it costs one
/// `trylock`.
final class SaveLock: Sendable {
    /// The lock itself.
    private let lock = Lock()
    /// The thread running a modify closure while it holds the lock; `nil` otherwise.
    private let modifyingThread = Locked<pthread_t?>(nil)
    /// The store's file, for the error of a refused call.
    private let path: String?

    /// Makes the save lock of the store at `path` (`nil` when it has no file).
    init(path: String?) {
        self.path = path
    }

    /// Takes the lock for a call into storage (`action` names it in the error).
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/reentrantCall`` on the thread running a modify closure.
    @inline(__always)
    func lock(for action: String) throws(DefaultsError) {
        if lock.tryLock() { return }
        if isModifyingOnThisThread { throw reentrantCall(action) }
        lock.lock()
    }

    /// Releases the lock.
    @inline(__always)
    func unlock() { lock.unlock() }

    /// Runs `body` with the lock held, taken as ``lock(for:)`` takes it.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/reentrantCall`` on the thread running a modify closure, or
    ///   what `body` throws.
    @inline(__always)
    func withLock<T>(_ action: String, _ body: () throws(DefaultsError) -> T) throws(DefaultsError) -> T {
        try lock(for: action)
        defer { lock.unlock() }
        return try body()
    }

    /// Runs a modify: takes the lock for it, records the calling thread as the one running a modify closure while
    /// `body` runs, and releases both when it returns.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/reentrantCall`` when called from inside a modify closure.
    func whileModifying<T>(_ body: () -> T) throws(DefaultsError) -> T {
        try lock(for: "modify")
        defer {
            modifyingThread.withLock { $0 = nil }
            lock.unlock()
        }
        let me = pthread_self()
        modifyingThread.withLock { $0 = me }
        return body()
    }

    /// Whether the calling thread is running a modify closure of this store (a thread that is not cannot become
    /// one before it returns).
    var isModifyingOnThisThread: Bool {
        let me = pthread_self()
        return modifyingThread.withLock { $0.map { pthread_equal($0, me) != 0 } ?? false }
    }

    /// The error of a call that needs the save lock from inside a modify closure.
    func reentrantCall(_ action: String) -> DefaultsError {
        DefaultsError(
            .reentrantCall,
            "\(action) was called inside a modify closure of the same store, which holds the store's lock until it "
                + "returns; it was refused (nothing was done). Change the value through the closure's argument, or "
                + "call it after modify returns", path: path)
    }
}
