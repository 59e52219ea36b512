extension JSONFileStorage {
    func update(reading names: [String], _ transform: (StorageContent?) -> [MemberChange]?) -> StorageWrite {
        var outside: StorageContent?
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
                (try write(changes, state: &state, outside: &outside), state.image.map(StoredMembers.init))
            }
            return StorageWrite(outside: outside, outcome: .success(written), holds: holds)
        } catch {
            return StorageWrite(outside: outside, outcome: .failure(error))
        }
    }
}
