import CodableDefaults
import Dispatch

/// Runs the client's `async` calls to completion for the store's synchronous ``Storage`` methods.
///
/// The store calls its storage synchronously, from whatever thread makes the call: the thread of a
/// `.immediate` set or of `flush()`, the store's queue for a background save, and also a thread of Swift's
/// cooperative pool when the caller is an `async` function. Waiting there for a task that itself needs the pool
/// would deadlock once every pool thread waits (the pool has one thread per core), and on Linux the pool's
/// threads are those of the global dispatch queues, so anything queued there waits too. So each call's task runs
/// on a task executor of its own, a serial dispatch queue (which libdispatch serves from its overcommitting
/// threads, added whenever others block): none of its steps needs the cooperative pool, and the client does its
/// blocking socket I/O on serial queues of its own too (see `PlainHTTP`). Waiting for it on a semaphore is then
/// safe from any thread, the pool's included: the waiting thread is never one the call needs.
enum Blocking {
    /// Runs `body` in a task on an executor of its own and waits for it on the calling thread; returns what it
    /// returns.
    ///
    /// - Throws: What `body` throws.
    static func run<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        let outcome = Locked<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: QueueTaskExecutor(label: "CodableDefaultsEtcd.call")) {
            let result: Result<Value, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        // The task set the outcome before signalling.
        guard let result = outcome.withLock({ $0 }) else { throw CancellationError() }
        return try result.get()
    }
}

/// A task executor that runs jobs on a serial dispatch queue of its own.
final class QueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// Makes the executor and its queue.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
