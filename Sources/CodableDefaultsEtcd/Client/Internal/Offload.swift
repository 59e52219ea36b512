import Dispatch

/// Runs the client's blocking calls for `async` callers, off the caller's thread.
///
/// The client's calls block the calling thread until etcd answers (the store calls its storage synchronously,
/// from whatever thread makes the call). An `async` caller must not block a thread of Swift's cooperative pool
/// for that long, so its call runs on a serial dispatch queue of its own (which libdispatch serves from its
/// overcommitting threads, added whenever others block) and the task waits on a continuation: it holds no
/// thread meanwhile, and the blocking call needs none that the pool holds.
enum Offload {
    /// Runs `body` on a queue of its own and returns what it returns, or throws what it throws.
    ///
    /// A cancelled task does not stop `body`: it runs to its end (bounded by the client's request timeout), and
    /// its outcome is returned, so that a write etcd committed is never reported as cancelled.
    static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "CodableDefaultsEtcd.call").async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}
