import Dispatch

extension Defaults {
    /// Writes every unsaved change to the file and returns once it is durable, without blocking the calling
    /// task's thread: the asynchronous form of the synchronous `save()`, chosen by `await`.
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
    /// - Throws: What the synchronous `save()` throws, with the same meaning: ``DefaultsError`` (`writeFailed` with the path
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

extension Defaults {
    /// Changes to any of several keys as an asynchronous sequence: each element is the set of the names of the
    /// keys whose effective value changed.
    ///
    /// The keys may be of different value types. Each key's value is compared as ``observe(_:options:_:)``
    /// compares it (`==` for `Equatable` values, as JSON otherwise), so setting an equal value yields nothing.
    /// One change yields one element, in the order the changes were made: a ``batch(_:)`` that changes three of
    /// the keys yields one element with three names. Read the values you need when an element arrives; they may
    /// already hold a later change (whose element follows). With `.initial` (the default) the first element
    /// holds every key's name, so a loop that reads what an element names starts from the current values;
    /// with `[]` the first element is the first change.
    ///
    /// Elements are delivered as observers' calls are (see <doc:ObservingChanges#Where-handlers-run>), and
    /// buffered without limit, so a slow consumer sees every change. The sequence never ends by itself; it
    /// ends, and releases its observer, when the task iterating it is cancelled or the sequence is released.
    ///
    /// ```swift
    /// for await names in defaults.updates(forAnyOf: .volume, .theme) {
    ///     if names.contains("volume") { player.volume = defaults[.volume] }
    ///     if names.contains("theme") { applyTheme(defaults[.theme]) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The keys to follow. A name given twice counts once.
    ///   - options: `.initial` (the default) to start with an element naming every key; `[]` to get changes only.
    /// - Returns: A sequence of sets of key names.
    public func updates(forAnyOf keys: AnyKey..., options: ObservationOptions = [.initial]) -> AsyncStream<Set<String>>
    {
        updates(forAnyOf: keys, options: options)
    }

    /// Changes to any of several keys as an asynchronous sequence of the sets of names that changed: the array
    /// form of ``updates(forAnyOf:options:)-(AnyKey...,_)``.
    ///
    /// - Parameters:
    ///   - keys: The keys to follow. A name given twice counts once.
    ///   - options: `.initial` (the default) to start with an element naming every key; `[]` to get changes only.
    /// - Returns: A sequence of sets of key names.
    public func updates(forAnyOf keys: [AnyKey], options: ObservationOptions = [.initial]) -> AsyncStream<Set<String>> {
        AsyncStream { continuation in
            guard !keys.isEmpty else { return }
            let observer = KeysObserver(store: store, keys: keys) { names in continuation.yield(names) }
            if options.contains(.initial) { continuation.yield(Set(observer.names)) }
            for name in observer.names { store.addObserver(observer, name: name) }
            // Also catches up with a change made between reading the values and registering.
            observer.deliver(names: [])
            let token = ObservationToken(observer)
            continuation.onTermination = { _ in token.cancel() }
        }
    }
}
