import Dispatch

/// Saving: one act, `save()`, in two forms that Swift chooses between by context. Synchronous code calls the
/// synchronous form, which writes on the calling thread; `async` code calls the asynchronous form with `await`,
/// which writes on the store's queue while the task is suspended. Both write the same changes, durably, and throw
/// the same errors; they differ in the thread that waits.
extension Defaults {
    /// Writes every unsaved change to the file and returns once it is durable (survives a power loss), on the
    /// calling thread.
    ///
    /// Changes made through any `Defaults` on the same file are included. Does nothing for an in-memory
    /// store or when nothing changed.
    ///
    /// - Throws: ``DefaultsError`` (`writeFailed` with the path and `errno`, `lockTimeout` when another
    ///   process holds the lock file longer than ``Options/lockTimeout``, or the error of a file that
    ///   changed on disk and no longer parses). The file is then unchanged and every change stays pending
    ///   for the next save. One exception: `notDurable` means the file was written (the changes are saved,
    ///   and ``discardUnsavedChanges()`` has nothing to undo) but flushing its directory failed, so they may
    ///   not survive a power loss; the next save retries the directory flush and throws `notDurable` again
    ///   until it succeeds.
    ///
    /// Blocks the calling thread while it writes (and while it waits for another process's lock). In `async`
    /// code, `save()` is the asynchronous form (`try await defaults.save()`), which saves on the store's queue
    /// instead: Swift chooses the asynchronous overload wherever `await` is possible, so `try defaults.save()`
    /// in an `async` function does not compile without `await`. To block the calling thread
    /// from `async` code anyway (rarely right: it holds a thread of Swift's cooperative pool, but an actor that
    /// must not be re-entered until the file is written may want it), call `save()` from a synchronous
    /// function or closure.
    public func save() throws(DefaultsError) {
        try store.save()
    }

    /// Writes every unsaved change to the file and returns once it is durable, without blocking the calling
    /// task's thread: the asynchronous form of `save()`, which Swift chooses in `async` code.
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
    /// try await defaults.save()   // on disk, durably
    /// ```
    ///
    /// - Throws: What the synchronous form throws, with the same meaning: ``DefaultsError`` (`writeFailed` with
    ///   the path and `errno`, `lockTimeout`, the error of a file that changed on disk and no longer parses; the
    ///   file is then unchanged and every change stays pending), or `notDurable` when the file was written but
    ///   flushing its directory failed.
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

    /// Writes the unsaved changes of every store open in this process, durably, before returning.
    ///
    /// The stores are saved one after another on the calling thread, as `save()` saves one; each store's
    /// failure goes to its ``onError`` handler (called on this thread, outside every lock) rather than being
    /// thrown, so one failing store does not keep the others from being saved. When it returns, every change
    /// made before the call is on disk or reported, and no lock file is held.
    ///
    /// The library calls it itself at normal process exit, and on iOS, iPadOS, tvOS, visionOS and watchOS when
    /// the app moves to the background or is about to terminate (see <doc:ApplePlatforms>). Call it where the
    /// process may end without either: an app extension (a widget, a share extension) before it finishes, a
    /// Mac app that enables sudden termination, a daemon before it is killed with `SIGKILL`. Each save may
    /// wait up to its store's ``Options/lockTimeout`` for another process's lock.
    public static func saveAll() {
        StoreRegistry.saveAll()
    }
}
