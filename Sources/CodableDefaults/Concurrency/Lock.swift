#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A small mutual-exclusion lock for short critical sections.
///
/// It is a class so that its address is stable (a `pthread_mutex_t` must not move). It is not recursive:
/// locking it twice from one thread deadlocks, so never call user code while holding it.
///
/// `@unchecked Sendable`: it is the primitive the other guarantees rest on; its only state is the mutex,
/// which lives at a fixed allocated address and is safe to use from any thread. Guarded state belongs in
/// ``Locked``, not beside a bare `Lock`.
final class Lock: @unchecked Sendable {
    #if canImport(Darwin)
        private let mutex: UnsafeMutablePointer<os_unfair_lock>
    #else
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    /// Creates an unlocked lock.
    init() {
        #if canImport(Darwin)
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: os_unfair_lock())
        #else
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
            pthread_mutex_destroy(mutex)
        #endif
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Acquires the lock, blocking until it is available.
    @inline(__always)
    func lock() {
        #if canImport(Darwin)
            os_unfair_lock_lock(mutex)
        #else
            pthread_mutex_lock(mutex)
        #endif
    }

    /// Acquires the lock if it is free, without waiting. Returns whether it did (`false` also when the calling
    /// thread holds it already).
    @inline(__always)
    func tryLock() -> Bool {
        #if canImport(Darwin)
            os_unfair_lock_trylock(mutex)
        #else
            pthread_mutex_trylock(mutex) == 0
        #endif
    }

    /// Releases the lock; the calling thread must hold it.
    @inline(__always)
    func unlock() {
        #if canImport(Darwin)
            os_unfair_lock_unlock(mutex)
        #else
            pthread_mutex_unlock(mutex)
        #endif
    }

    /// Runs `body` with the lock held and returns its result.
    @inline(__always)
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
