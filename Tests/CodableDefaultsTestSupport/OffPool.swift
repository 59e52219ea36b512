import Dispatch
import Foundation

// Waiting without holding a thread of Swift's cooperative pool.
//
// Swift Testing runs every test, synchronous or not, as a task on the cooperative pool, which has one thread per
// core: two cores, two threads. A test that blocks its thread in `waitpid`, `poll`, a semaphore or `usleep` while
// it waits for a child process (or for a delivery made by another task) holds one of them for as long as it waits;
// two such tests stall every other task of the run, the tasks that would end their waits included. So a test waits
// with these: the blocking call runs on a thread of its own, and the test's task is suspended until it returns.

/// Runs `body` on a new thread and suspends the calling task until it returns: a blocking wait that does not hold
/// a thread of the cooperative pool.
///
/// - Throws: What `body` throws.
package func offPool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = "CodableDefaultsTests off-pool wait"
        thread.start()
    }
}

/// Runs `body` on a new thread and suspends the calling task until it returns; see ``offPool(_:)-(()->Value)``.
package func offPool<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.name = "CodableDefaultsTests off-pool wait"
        thread.start()
    }
}

extension DispatchSemaphore {
    /// Waits for a signal for at most `seconds`, without holding a thread of the cooperative pool. Returns whether
    /// the signal came.
    package func signaled(within seconds: Double) async -> Bool {
        await offPool { self.wait(timeout: .now() + seconds) == .success }
    }
}
