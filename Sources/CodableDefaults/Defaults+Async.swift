import Dispatch

extension Defaults {
    /// Writes every unsaved change to the file and returns once it is durable, without blocking the calling
    /// task's thread: the asynchronous ``flush()``.
    ///
    /// The save runs on the store's own serial queue, a Dispatch thread outside Swift's cooperative thread pool,
    /// while the calling task is suspended; the pool's threads stay free for other tasks while the file is
    /// written and fsynced, or while the save waits for another process's lock. The queue is the one the
    /// `.afterIdle` timer's saves and the file watcher's checks run on, so saves run one at a time, in the order
    /// they were asked for, and any number of tasks awaiting saves of one store take one thread, not one each. A
    /// save finds everything set before the call (through any `Defaults` on the same file) and writes it; one that
    /// finds nothing left to write (an earlier save wrote it) returns at once.
    ///
    /// **Cancellation.** A save is never stopped half-way or dropped: cancelling the awaiting task does not
    /// interrupt it, and the call returns (or throws) once the save has run to completion, as if the task had
    /// not been cancelled. (The file is written atomically anyway: at every instant it holds the complete old or
    /// the complete new version.) A task that must not save once cancelled checks `Task.isCancelled` first.
    ///
    /// Do not block the store's queue waiting for this call (for example with a semaphore in an observer of
    /// another process's changes, which runs on that queue): the save waits for the queue. See
    /// <doc:ObservingChanges#Where-handlers-run> for which code runs where.
    ///
    /// ```swift
    /// defaults[.volume] = 0.8
    /// try await defaults.save()  // on disk, durably
    /// ```
    ///
    /// - Throws: What ``flush()`` throws, with the same meaning: ``DefaultsError`` (`writeFailed` with the path
    ///   and `errno`, `lockTimeout`, the error of a file that changed on disk and no longer parses; the file is
    ///   then unchanged and every change stays pending), or `notDurable` when the file was written but flushing
    ///   its directory failed.
    public func save() async throws(DefaultsError) {
        let store = store
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, DefaultsError>, Never>) in
            store.queue.async {
                do throws(DefaultsError) {
                    try store.save()
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        try result.get()
    }
}
