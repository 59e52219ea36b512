extension JSONFileStorage {
    /// Reads the file if it exists (moving it aside or migrating it as the options say), and removes
    /// temporary files a crashed writer left beside it. `report` gets the notices, with no lock held.
    ///
    /// - Throws: ``DefaultsError`` when the file exists but cannot be read or parsed, or a migration fails.
    func open(reporting report: (DefaultsError) -> Void) throws(DefaultsError) -> StoredMembers? {
        var members: StoredMembers?
        do throws(DefaultsError) {
            members = try options.migrations.isEmpty ? read() : migrate()
        } catch  where options.unreadableFile == .moveAside && Self.isUnreadableContent(error) {
            // A failed directory flush after the rename does not undo the move: it is reported below, with the
            // notice, and the next save retries it.
            report(try moveAside(because: error, keepingState: false).notice)
            members = options.migrations.isEmpty ? nil : try migrate()
        }
        if let notDurable = disk.withLock({ $0.unsyncedDirectory }) { report(notDurable) }
        // A reader leaves a crashed writer's temporary files (and the lock) to the writers.
        if !options.readsOnly && !file.leftoverTemporaries().isEmpty {
            do {
                let fd = try lockFile()
                defer { file.unlock(fd) }
                _ = try file.removeLeftoverTemporaries()
            } catch {
                report(error)
            }
        }
        return members
    }

    /// Whether an error means the file's content is bad (as opposed to it being unreachable).
    static func isUnreadableContent(_ error: DefaultsError) -> Bool {
        error.code == .invalidJSON || error.code == .fileTooLarge
    }

    func moveAsideUnreadable() throws(DefaultsError) -> (location: String, notice: DefaultsError)? {
        do throws(DefaultsError) {
            _ = try disk.withLock { (state) throws(DefaultsError) in try readMembers(&state) }
            return nil
        } catch  where Self.isUnreadableContent(error) {
            let moved = try moveAside(because: error, keepingState: true)
            disk.withLock { state in
                state = DiskState(unsyncedDirectory: state.unsyncedDirectory)
            }
            return (moved.path, moved.notice)
        }
    }

    /// Renames an unreadable file to `<name>.corrupt-<timestamp>` under the file lock. Returns the new path
    /// and the notice to report (the caller reports it once no lock is held), which says what the store does
    /// next: starts empty (opening), or keeps its state to write in the file's place (`keepingState`).
    ///
    /// Once the rename succeeded the file is moved, as a save's file is written: if flushing the directory
    /// then fails, the storage remembers it, so the next write or ``confirmDurability()`` retries the flush
    /// and throws ``DefaultsError/Code-swift.struct/notDurable`` until it succeeds.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` when the rename fails (the file is where it
    ///   was), or what taking the file lock throws.
    private func moveAside(
        because error: DefaultsError, keepingState: Bool
    ) throws(DefaultsError) -> (path: String, notice: DefaultsError) {
        let fd = try lockFile()
        defer { file.unlock(fd) }
        let (aside, notDurable) = try file.moveAside()
        disk.withLock { $0.unsyncedDirectory = notDurable }
        let next =
            keepingState
            ? "the store kept its state, which is written in the file's place" : "the store started empty"
        let notice = DefaultsError(
            .fileMovedAside,
            "the store file \(file.path) could not be read (\(error)); it was moved here and \(next)",
            path: aside)
        return (aside, notice)
    }

    /// Reads the file under its lock and runs the migrations it needs, writing a backup and the migrated
    /// file. Returns the (possibly migrated) members, or `nil` when there is no file.
    private func migrate() throws(DefaultsError) -> StoredMembers? {
        let steps = try SchemaMigration.steps(options.migrations, path: file.path)
        try file.createDirectory()
        let fd = try lockFile()
        defer { file.unlock(fd) }
        return try disk.withLock { (state) throws(DefaultsError) -> StoredMembers? in
            guard let (bytes, identity) = try file.read(maxSize: options.maximumFileSize) else {
                JSONFileStorage.record(nil, in: &state)
                return nil
            }
            // A 0-byte file holds nothing to migrate: it is a new file, which every save stamps with the version.
            if bytes.isEmpty {
                JSONFileStorage.record((.empty, identity), in: &state)
                return .empty
            }
            let indexed = try index(bytes)
            let members = StoredMembers(indexed).members
            guard
                let (version, migrated) = try SchemaMigration.run(
                    steps, on: members, maxDepth: options.maximumDepth, path: file.path)
            else {
                JSONFileStorage.record((StoredMembers(indexed), identity), in: &state)
                return StoredMembers(indexed)
            }
            // An image holds 31-bit offsets: refuse, before building it, a result that could pass 2 GiB (a bound: a
            // name quoted takes at most 6 bytes per byte, plus its line's 8 bytes of layout).
            let bound = migrated.reduce(64) { $0 + 6 * $1.key.utf8.count + $1.value.count + 8 }
            guard bound <= FileImage.maximumByteCount else {
                throw DefaultsError(
                    .migrationFailed,
                    "the migrated file could be over \(FileImage.maximumByteCount) bytes, the most a store file can "
                        + "hold; the file is untouched", path: file.path)
            }
            let image = FileImage(members: migrated)
            // Never write a file that this store (with these limits) could not open again.
            do throws(DefaultsError) {
                if image.bytes.count > options.maximumFileSize {
                    throw DefaultsError(
                        .fileTooLarge,
                        "\(image.bytes.count) bytes is over the limit of \(options.maximumFileSize) bytes")
                }
                _ = try index(image.bytes)
            } catch {
                throw DefaultsError(
                    .migrationFailed,
                    "the migrated file would break the store's limits (\(error.message)); the file is untouched",
                    path: file.path, key: error.key)
            }
            let backup = try DurableFile(path: file.path + ".v\(version).bak", role: "migration backup").write(bytes)
            if let notDurable = backup.notDurable {
                // The original is replaced only once its backup is sure to survive a power loss.
                throw DefaultsError(
                    .writeFailed,
                    "the backup could not be made durable, so the file was not migrated: "
                        + notDurable.message, path: file.path, errno: notDurable.errno)
            }
            let written = try file.write(image.bytes)
            state.unsyncedDirectory = written.notDurable
            state.identity = written.identity
            state.loaded = nil
            state.image = image
            return StoredMembers(migrated)
        }
    }
}
