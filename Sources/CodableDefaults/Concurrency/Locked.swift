/// State that can be reached only while its lock is held (for every target of the package: the store, the etcd
/// engine and client, the tests): the shape of the standard library's `Mutex` and
/// of NIO's `NIOLockedValueBox`, for the platforms this package supports below `Mutex`'s availability.
///
/// Every field of `State` is read and written inside ``withLock(_:)``, so an access that forgets the lock
/// does not compile. The lock is not recursive: never call user code (handlers, `Codable` code) or anything
/// that may take the same lock inside the closure.
///
/// The state lives at a fixed address of its own (not in a stored property of this class), so an access
/// costs the lock and nothing else: no exclusivity check, no copy.
///
/// `@unchecked Sendable` (one of the package's counted exceptions): the compiler cannot see that `State`
/// is only ever touched with the lock held, which is what this type guarantees. `State` may hold
/// non-`Sendable` objects (the store's cells); a caller may carry such an object out of the closure only
/// as an identity, to be looked at again inside a later `withLock`.
package final class Locked<State>: @unchecked Sendable {
    private let lock = Lock()
    private let state: UnsafeMutablePointer<State>

    /// Creates the box holding `initial`.
    package init(_ initial: State) {
        state = .allocate(capacity: 1)
        state.initialize(to: initial)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with the lock held, giving it the state to read and change, and returns its result.
    @inline(__always)
    package func withLock<Result, E: Error>(_ body: (inout State) throws(E) -> Result) throws(E) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state.pointee)
    }
}
