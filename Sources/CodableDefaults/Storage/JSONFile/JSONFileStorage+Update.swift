extension JSONFileStorage {
    func update(
        reading names: [String], as kind: Defaults.HistoryEntry.Kind, _ transform: (StorageContent?) -> [MemberChange]?
    ) -> StorageWrite {
        var outside: StorageContent?
        var historyFailure: DefaultsError?
        if let refusal = readOnlyRefusal { return StorageWrite(outside: nil, outcome: .failure(refusal)) }
        do throws(DefaultsError) {
            try file.createDirectory()
            let fd = try lockFile()
            defer { file.unlock(fd) }
            let found = try disk.withLock { (state) throws(DefaultsError) -> StorageContent? in
                guard try file.currentIdentity() != state.identity else { return nil }
                let read = try readMembers(&state)
                Self.record(read, in: &state)
                return .snapshot(read?.members ?? .empty)
            }
            // User code runs here: with the lock file held (other writers wait), the disk state's lock released.
            guard let changes = transform(found) else {
                return StorageWrite(outside: nil, outcome: .success(([], nil)))
            }
            let (written, holds) = try disk.withLock { (state) throws(DefaultsError) in
                (
                    try write(changes, as: kind, state: &state, outside: &outside, historyFailure: &historyFailure),
                    state.image.map(StoredMembers.init)
                )
            }
            return StorageWrite(
                outside: outside, outcome: .success(written), holds: holds, historyFailure: historyFailure)
        } catch {
            return StorageWrite(outside: outside, outcome: .failure(error))
        }
    }
}

extension JSONFileStorage {
    func history() throws(DefaultsError) -> StorageHistory {
        // A store with its history off neither records nor reads one: a history left from before would let a revert
        // go back over the saves made since, unrecorded (the etcd engine does the same).
        guard options.history.isEnabled else { return StorageHistory(records: [], isComplete: true) }
        let read = try historyLog.read()
        // Revisions of a file's history count from 1 without gaps: its oldest record tells whether older ones
        // were dropped.
        let oldest = read.records.map(\.revision).min()
        return StorageHistory(
            records: read.records, notices: read.notices, isComplete: oldest == nil || oldest == 1,
            unreadable: read.unreadable)
    }
}
