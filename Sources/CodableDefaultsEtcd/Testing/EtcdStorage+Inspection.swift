import CodableDefaults

#if CODABLE_DEFAULTS_TESTING
    /// What the etcd tests look at and steer inside the storage. Compiled only with `CODABLE_DEFAULTS_TESTING`
    /// (debug builds, see `Package.swift`); a release build has none of it.
    extension EtcdStorage {
        /// How many transactions this storage sent to etcd.
        package var transactionCount: Int { state.withLock { $0.transactions } }

        /// How many times the watch reloaded the prefix because etcd had compacted its revision away.
        package var compactionReloadCount: Int { state.withLock { $0.compactionReloads } }

        /// The change of `name` that the watch brought and the store has not taken in yet (`value` `nil`: removed, or
        /// not JSON), with its revision; `nil` when there is none (for tests).
        package func unappliedChange(named name: String) -> (value: [UInt8]?, revision: Int64)? {
            state.withLock { state in state.pending[Array(name.utf8)].map { ($0.value, $0.revision) } }
        }

        /// Stops the watch but keeps the store's signal, as a long disconnect would (for tests of what follows).
        package func pauseWatching() {
            let task = state.withLock { state in
                defer { state.watch = nil }
                return state.watch
            }
            task?.cancel()
        }

        /// Starts the watch again after ``pauseWatching()``, from the revision after the last one seen.
        package func resumeWatching() {
            state.withLock { state in
                guard state.signal != nil, state.watch == nil else { return }
                state.watch = Task { [weak self] in await self?.watchUntilCancelled() }
            }
        }
    }
#endif
