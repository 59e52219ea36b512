import Dispatch

/// The store's members kept in memory only: the storage of ``Defaults/inMemory()``. Nothing touches the
/// disk and nothing survives the process; it keeps no history.
///
/// Besides the store's own writes, tests can play another writer with ``inject(_:)``: the changes are
/// reported to the store as outside changes, member by member, as a remote engine's watch would.
final class MemoryStorage: Storage {
    private struct State {
        var members: [MemberName: ParsedMember] = [:]
        var injected: [MemberChange] = []
        var signal: (@Sendable () -> Void, DispatchQueue)?
        var schema: [UInt8]?
    }

    private let state = Locked(State())

    let facts = StorageFacts(location: nil, schemaLocation: "memory", isPersistent: false)

    func storedSchema() throws(DefaultsError) -> [UInt8]? { state.withLock { $0.schema } }

    func storeSchema(_ bytes: [UInt8]) throws(DefaultsError) { state.withLock { $0.schema = bytes } }

    func open(reporting report: (DefaultsError) -> Void) throws(DefaultsError) -> StoredMembers? { nil }

    func read() throws(DefaultsError) -> StoredMembers? {
        state.withLock { state in
            state.injected = []
            return StoredMembers(Array(state.members.values))
        }
    }

    func write(_ changes: [MemberChange]) -> StorageWrite {
        let outside: [MemberChange] = state.withLock { state in
            for change in changes {
                let name = MemberName(change.name)
                state.members[name] = change.value.map { ParsedMember(key: change.name, value: $0) }
            }
            // What another writer stored first is taken in before this write's changes, which win.
            defer { state.injected = [] }
            return state.injected
        }
        return StorageWrite(outside: outside.isEmpty ? nil : .changes(outside), outcome: .success(([], nil)))
    }

    func update(
        reading names: [String], as kind: Defaults.HistoryEntry.Kind, _ transform: (StorageContent?) -> [MemberChange]?
    ) -> StorageWrite {
        let injected: [MemberChange] = state.withLock { state in
            defer { state.injected = [] }
            return state.injected
        }
        guard let changes = transform(injected.isEmpty ? nil : .changes(injected)) else {
            return StorageWrite(outside: nil, outcome: .success(([], nil)))
        }
        return write(changes)
    }

    /// Memory keeps no history: a store that lives only as long as its process has nothing to undo after it.
    func history() throws(DefaultsError) -> StorageHistory { StorageHistory(records: [], isComplete: true) }

    func outsideChanges() throws(DefaultsError) -> StorageContent? {
        let changes: [MemberChange] = state.withLock { state in
            defer { state.injected = [] }
            return state.injected
        }
        return changes.isEmpty ? nil : .changes(changes)
    }

    func startWatching(on queue: DispatchQueue, _ signal: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if state.signal == nil { state.signal = (signal, queue) }
        }
    }

    func stopWatching() {
        state.withLock { $0.signal = nil }
    }

    /// Stores `changes` as another writer would, and signals the store (on its queue) to take them in.
    func inject(_ changes: [MemberChange]) {
        let signal = state.withLock { state in
            for change in changes {
                let name = MemberName(change.name)
                state.members[name] = change.value.map { ParsedMember(key: change.name, value: $0) }
                state.injected.append(change)
            }
            return state.signal
        }
        if let (signal, queue) = signal { queue.async(execute: signal) }
    }
}

#if CODABLE_DEFAULTS_TESTING
    extension MemoryStorage {
        /// Whether a store asked to hear of changes (for tests; debug builds only, see `Testing/`).
        var isWatching: Bool { state.withLock { $0.signal != nil } }
    }
#endif
