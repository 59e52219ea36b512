import Dispatch

/// The store's members kept in one JSON file, rewritten atomically and durably at every write (see
/// ``DurableFile``), merged under the lock file with what other processes wrote, and watched for outside
/// changes. Opening (migrations, moving an unreadable file aside) is in `JSONFileStorage+Opening.swift`.
///
/// What it knows of the file (``DiskState``) is guarded by one lock, held across the file I/O of a call;
/// the store makes its calls one at a time anyway (under its save lock). The test counters (debug builds only,
/// `Testing/JSONFileStorage+Counters.swift`) have a lock of their own, never held across I/O, so a test can read
/// them while a write waits for the file lock.
final class JSONFileStorage: DurableStorage {
    /// What the storage knows of the file.
    struct DiskState {
        /// The file's identity as last read or written; `nil` when there was no file.
        var identity: FileIdentity?
        /// The members last read, until a write builds them into ``image`` (adopting a canonical file's buffer).
        var loaded: StoredMembers?
        /// The bytes last written (or built from ``loaded``); `nil` when they must be built again.
        var image: FileImage?
        /// Why the directory could not be flushed after the last rename of the file, while it still needs a
        /// flush: the next write (or ``JSONFileStorage/confirmDurability()``) retries it.
        var unsyncedDirectory: DefaultsError?
        /// The version of the file whose parse error ``JSONFileStorage/outsideChanges()`` last threw (thrown once).
        var reportedBadIdentity: FileIdentity?
        /// The history file as this storage's last record left it.
        var historyTail: HistoryLog.Tail?
    }

    let file: DurableFile
    /// The schema file beside the store file (``Defaults/schemaURL(forStoreAt:)``, which whoever makes the storage
    /// names), written as the store file is.
    let schemaFile: DurableFile
    /// The history beside the file (`.<name>.history`).
    let historyLog: HistoryLog
    let options: Defaults.Options
    /// The schema version every write stamps (the last migration's), or `nil` without migrations.
    let schemaVersion: Int?
    let disk = Locked(DiskState())
    /// The file's watcher, once ``startWatching(on:_:)`` made it.
    let watcher = Locked<FileWatcher?>(nil)
    #if CODABLE_DEFAULTS_TESTING
        /// How often the file was read, written and found locked (see `Testing/JSONFileStorage+Counters.swift`).
        let counters = Locked(Counters())
    #endif

    /// A storage for the file at `path` (absolute, resolved), whose schema is the file at `schemaPath`. Reads nothing:
    /// ``open(reporting:)`` does.
    init(path: String, schemaPath: String, options: Defaults.Options) {
        self.file = DurableFile(path: path)
        self.schemaFile = DurableFile(path: schemaPath, system: file.system, role: "schema")
        self.facts = StorageFacts(location: path, schemaLocation: schemaPath, isPersistent: true)
        self.historyLog = HistoryLog(of: file, limit: options.history, maximumFileSize: options.maximumFileSize)
        self.options = options
        self.schemaVersion = options.migrations.map(\.version).max()
    }

    deinit {
        watcher.withLock { $0 }?.stop()
    }

    let facts: StorageFacts

    /// Takes the file lock, waiting at most `options.lockTimeout`.
    /// The error of a write to a store opened only to read (``Defaults/Options/readsOnly``); `nil` otherwise.
    var readOnlyRefusal: DefaultsError? {
        guard options.readsOnly else { return nil }
        return DefaultsError(
            .invalidArgument, "the store was opened only to read; nothing was written", path: file.path)
    }

    func lockFile() throws(DefaultsError) -> Int32 {
        #if CODABLE_DEFAULTS_TESTING
            try file.lock(timeout: options.lockTimeout) { counters.withLock { $0.lockWaits += 1 } }
        #else
            try file.lock(timeout: options.lockTimeout)
        #endif
    }

    // MARK: Reading

    /// Reads and parses the file (members in the file's order); `nil` when there is no file. Call with the disk lock
    /// held (its state says whether the store knew data, which makes an empty file an error).
    func readMembers(
        _ state: inout DiskState
    ) throws(DefaultsError) -> (members: StoredMembers, identity: FileIdentity)? {
        guard let (bytes, identity) = try file.read(maxSize: options.maximumFileSize) else { return nil }
        #if CODABLE_DEFAULTS_TESTING
            counters.withLock { $0.reads += 1 }
        #endif
        guard bytes.isEmpty else { return (StoredMembers(try index(bytes)), identity) }
        // A 0-byte file (`touch settings.json`) holds no data to lose: an empty store. But a file that held data
        // when this store last read or wrote it and is empty now is most likely being rewritten in place by
        // another program (truncated, not yet written): taking it as "every key removed" would let a save
        // write over what that program is about to write. It is refused like a file that does not parse.
        if let known = state.identity, known.size > 0 {
            throw DefaultsError(
                .invalidJSON,
                "the store file is empty, but it held data when this store last read it (another program may be "
                    + "rewriting it in place); it is not written over until it holds a JSON object again",
                path: file.path, line: 1, column: 1)
        }
        return (.empty, identity)
    }

    /// Validates the file's bytes and indexes its members (``JSONIndex``), turning a scanner error into a
    /// ``DefaultsError`` with path, line and column. The index holds `bytes` itself, not a copy.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidJSON`` for bytes that are not a valid store file,
    ///   ``DefaultsError/Code-swift.struct/keyTooLong`` for a name over the key length limit,
    ///   ``DefaultsError/Code-swift.struct/fileTooLarge`` for a file over 2 GiB (whatever the size limit: the
    ///   index's offsets are 31 bits).
    func index(_ bytes: [UInt8]) throws(DefaultsError) -> JSONIndex {
        guard bytes.count <= JSONIndex.maximumCount else {
            throw DefaultsError(
                .fileTooLarge,
                "the file is \(bytes.count) bytes; a store file can hold at most \(JSONIndex.maximumCount) bytes",
                path: file.path)
        }
        let index: JSONIndex
        do {
            index = try JSONIndex(bytes: bytes, maxDepth: options.maximumDepth)
        } catch {
            throw DefaultsError(
                .invalidJSON, error.message, path: file.path, key: error.key, line: error.line, column: error.column)
        }
        // A name's length as written bounds its decoded length (an escape is longer than what it stands for): only
        // a name that is long as written is decoded to be measured.
        let limit = options.maximumKeyLength
        for position in 0..<index.count where index.keyRange(at: position).count > limit {
            let name = index.key(at: position)
            if name.utf8.count > limit { throw Store.keyTooLong(name, limit: limit, path: file.path) }
        }
        return index
    }

    /// Takes in a fresh read: the file's members become what the next write builds on.
    static func record(_ read: (members: StoredMembers, identity: FileIdentity)?, in state: inout DiskState) {
        state.identity = read?.identity
        state.loaded = read?.members ?? .empty
        state.image = nil
    }

    func read() throws(DefaultsError) -> StoredMembers? {
        try disk.withLock { (state) throws(DefaultsError) -> StoredMembers? in
            let read = try readMembers(&state)
            Self.record(read, in: &state)
            return read?.members
        }
    }

    func outsideChanges() throws(DefaultsError) -> StorageContent? {
        try disk.withLock { (state) throws(DefaultsError) -> StorageContent? in
            let identity = try file.currentIdentity()
            if identity == state.identity || (identity != nil && identity == state.reportedBadIdentity) { return nil }
            let read: (members: StoredMembers, identity: FileIdentity)?
            do throws(DefaultsError) {
                read = try readMembers(&state)
            } catch {
                state.reportedBadIdentity = identity
                throw error
            }
            Self.record(read, in: &state)
            state.reportedBadIdentity = nil
            return .snapshot(read?.members ?? .empty)
        }
    }

    // MARK: Writing

    func write(_ changes: [MemberChange]) -> StorageWrite {
        var outside: StorageContent?
        var historyFailure: DefaultsError?
        if let refusal = readOnlyRefusal { return StorageWrite(outside: nil, outcome: .failure(refusal)) }
        do throws(DefaultsError) {
            try file.createDirectory()
            let fd = try lockFile()
            defer { file.unlock(fd) }
            let (written, holds) = try disk.withLock { (state) throws(DefaultsError) in
                (
                    try write(changes, as: .save, state: &state, outside: &outside, historyFailure: &historyFailure),
                    state.image.map(StoredMembers.init)
                )
            }
            return StorageWrite(
                outside: outside, outcome: .success(written), holds: holds, historyFailure: historyFailure)
        } catch {
            return StorageWrite(outside: outside, outcome: .failure(error))
        }
    }

    /// The body of ``write(_:)``, under the file lock and the disk lock: merge what other writers saved,
    /// stamp the schema version, splice the changes into the image, write, and record the save in the history
    /// (as `kind`; a failure to record goes to `historyFailure`, the save stands).
    func write(
        _ changes: [MemberChange], as kind: Defaults.HistoryEntry.Kind, state: inout DiskState,
        outside: inout StorageContent?, historyFailure: inout DefaultsError?
    ) throws(DefaultsError) -> (stamped: [MemberChange], notDurable: DefaultsError?) {
        let identity = try file.currentIdentity()
        if identity != state.identity {
            let read = try readMembers(&state)
            Self.record(read, in: &state)
            outside = .snapshot(read?.members ?? .empty)
        }
        if state.image == nil {
            if state.loaded == nil && state.identity != nil {
                // The image was given up after a failed write: build it again from the file, which holds
                // what this storage knew (its identity is unchanged), so nothing is reported as outside.
                Self.record(try readMembers(&state), in: &state)
            }
            state.image = (state.loaded ?? .empty).image
            state.loaded = nil
        }
        // An image holds 31-bit offsets: refuse, before building it, a write that could take the file past 2 GiB
        // (a bound: a name quoted takes at most 6 bytes per byte, plus its line's 8 bytes of layout).
        let bound = changes.reduce(state.image!.bytes.count + 64) {
            $0 + 6 * $1.name.utf8.count + ($1.value?.count ?? 0) + 8
        }
        guard bound <= FileImage.maximumByteCount else {
            throw DefaultsError(
                .fileTooLarge,
                "the store could grow past \(FileImage.maximumByteCount) bytes, the most a store file can hold; "
                    + "nothing was written and the changes stay pending", path: file.path)
        }
        var stamped: [MemberChange] = []
        if let schemaVersion, let stamp = try stamp(schemaVersion, image: state.image!) { stamped.append(stamp) }
        let recorded = options.history.isEnabled ? recordedChanges(changes, image: state.image!) : []
        state.image!.apply((changes + stamped).lazy.map { (name: $0.name, value: $0.value) })
        let bytes = state.image!.bytes
        do throws(DefaultsError) {
            // Never write a file that this store (with these limits) could not open again.
            guard bytes.count <= options.maximumFileSize else {
                throw DefaultsError(
                    .fileTooLarge,
                    "the store would be \(bytes.count) bytes, over the limit of \(options.maximumFileSize) bytes; "
                        + "nothing was written and the changes stay pending", path: file.path)
            }
            let (newIdentity, flushFailure) = try file.write(bytes)
            // Renamed into place: the changes are saved, whether or not the directory flush worked.
            state.identity = newIdentity
            state.unsyncedDirectory = flushFailure
            #if CODABLE_DEFAULTS_TESTING
                counters.withLock { $0.writes += 1 }
            #endif
            var notDurable = flushFailure
            if !recorded.isEmpty, notDurable != nil {
                // The rename may not survive a power loss: a flushed record could then claim a change the file
                // does not hold. The save goes unrecorded, and its own notDurable error says so.
                notDurable!.message +=
                    "; the save is not recorded in the history (a record must never outlive the "
                    + "change it claims)"
            } else if !recorded.isEmpty {
                do throws(DefaultsError) {
                    let author = Defaults.HistoryEntry.Author.current
                    let time = HistoryTime.now()
                    _ = try historyLog.append(
                        {
                            HistoryRecord(
                                revision: $0, milliseconds: time, author: author, kind: kind, changes: recorded)
                        }, tail: &state.historyTail)
                } catch {
                    state.historyTail = nil
                    historyFailure = error
                }
            }
            return (stamped, notDurable)
        } catch {
            // The image holds changes the file does not: the next write builds it again.
            state.image = nil
            throw error
        }
    }

    /// What `changes` change in the file whose image is `image` (before they are applied): each member whose value
    /// differs, with its value before and after; the reserved schema version is not a user's change.
    private func recordedChanges(_ changes: [MemberChange], image: FileImage) -> [HistoryRecord.Change] {
        var seen = Set<MemberName>()
        var recorded: [HistoryRecord.Change] = []
        // The last change of a name wins, as when the image applies them.
        for change in changes.reversed() where seen.insert(MemberName(change.name)).inserted {
            guard change.name != Defaults.schemaVersionKey else { continue }
            let old = image.index(of: change.name).map { Array(image.value(at: $0)) }
            guard old != change.value else { continue }
            recorded.append(HistoryRecord.Change(name: change.name, old: old, new: change.value, secret: change.secret))
        }
        return recorded
    }

    /// The member that makes the file hold `version`, the schema the store was migrated to, so it never loses
    /// it (a file deleted or replaced by another writer since the last read has none); `nil` when it holds it.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/unsupportedSchemaVersion`` for a file of a newer schema or
    ///   one whose version is not a whole number; nothing is written then.
    private func stamp(_ version: Int, image: FileImage) throws(DefaultsError) -> MemberChange? {
        let reserved = Defaults.schemaVersionKey
        let wanted = Array(String(version).utf8)
        if let index = image.index(of: reserved) {
            let current = image.value(at: index)
            if current.elementsEqual(wanted) { return nil }
            guard let found = Int(String(decoding: current, as: UTF8.self)), found >= 0 else {
                throw DefaultsError(
                    .unsupportedSchemaVersion,
                    "the file's schema version is not a whole number; nothing was written and the changes stay "
                        + "pending", path: file.path, key: reserved)
            }
            if found > version {
                throw DefaultsError(
                    .unsupportedSchemaVersion,
                    "another program saved the file with schema version \(found), newer than this program's "
                        + "\(version); nothing was written over it and the changes stay pending", path: file.path)
            }
        }
        return MemberChange(name: reserved, value: wanted)
    }

    var hasUnconfirmedWrite: Bool { disk.withLock { $0.unsyncedDirectory != nil } }

    func confirmDurability() throws(DefaultsError) {
        try disk.withLock { (state) throws(DefaultsError) in
            guard state.unsyncedDirectory != nil else { return }
            let failure = file.syncDirectory()
            state.unsyncedDirectory = failure
            if let failure { throw failure }
        }
    }

    // MARK: Watching

    func startWatching(on queue: DispatchQueue, _ signal: @escaping @Sendable () -> Void) {
        let started: FileWatcher? = watcher.withLock { watcher in
            guard watcher == nil else { return nil }
            let made = FileWatcher(directory: file.directory, name: file.name, queue: queue, onChange: signal)
            watcher = made
            return made
        }
        started?.start()
    }

    func stopWatching() {
        watcher.withLock { $0 }?.stop()
    }
}
