#if CODABLE_DEFAULTS_TESTING
    /// What tests look at inside a store: counters and states that no program needs. Compiled only with
    /// `CODABLE_DEFAULTS_TESTING` (debug builds, see `Package.swift`); a release build has none of it.
    extension Store {
        /// The store's file storage, or `nil` when its storage is another engine.
        var fileStorage: JSONFileStorage? { storage as? JSONFileStorage }
        /// How many times the file was written.
        var writeCount: Int { fileStorage?.writeCount ?? 0 }
        /// How many times the file was read and parsed (the store's own writes must not cause one).
        var readCount: Int { fileStorage?.readCount ?? 0 }
        /// How many times taking the file lock had to wait (the positive sign that a save waits for the lock).
        package var lockWaitCount: Int { fileStorage?.lockWaitCount ?? 0 }
        /// How many observers are registered.
        var observerCount: Int {
            state.withLock { state in
                state.members.cells.values.reduce(state.observers.all.count) { $0 + $1.observers.count }
            }
        }
        /// How many names have a cell (a name of the file gets one when first used).
        var cellCount: Int { state.withLock { $0.members.cells.count } }
        /// How many typed cache slots the store holds.
        var slotCount: Int { state.withLock { $0.caches.slots.count } }
        /// Whether the store notices outside changes (the file's watcher, or a memory store's signal).
        var isWatching: Bool {
            if let fileStorage { return fileStorage.watcher.withLock { $0 != nil } }
            if let memory = storage as? MemoryStorage { return memory.isWatching }
            return false
        }
        /// Whether the file watcher runs on its `stat` fallback.
        var isPolling: Bool { fileStorage?.watcher.withLock { $0 }?.isPolling ?? false }
        /// Whether an `.afterIdle` save is scheduled (with none and nothing changed, no save comes).
        var isSaveScheduled: Bool { state.withLock { $0.timer.isArmed } }
    }
#endif
