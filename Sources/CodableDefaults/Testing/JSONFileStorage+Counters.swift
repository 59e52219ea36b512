#if CODABLE_DEFAULTS_TESTING
    extension JSONFileStorage {
        /// How often the file was read, written and found locked, for tests. Compiled only with
        /// `CODABLE_DEFAULTS_TESTING` (debug builds, see `Package.swift`).
        struct Counters {
            var reads = 0
            var writes = 0
            var lockWaits = 0
        }

        /// How many times the file was read and parsed (its own writes must not cause one).
        var readCount: Int { counters.withLock { $0.reads } }
        /// How many times the file was written.
        var writeCount: Int { counters.withLock { $0.writes } }
        /// How many times taking the file lock found it held and had to wait (a test's sign that a save waits).
        var lockWaitCount: Int { counters.withLock { $0.lockWaits } }
    }
#endif
