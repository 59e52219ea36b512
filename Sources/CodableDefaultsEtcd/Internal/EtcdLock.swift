import Foundation

/// A value behind a lock, for the client's little shared state (the endpoint that answered last, the token).
///
/// `withLock` runs its closure with the lock held: the closure must be short and call no user code and nothing
/// that waits.
final class EtcdLock<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Makes a lock around `value`.
    init(_ value: Value) { self.value = value }

    /// Runs `body` on the value with the lock held and returns what it returns.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
