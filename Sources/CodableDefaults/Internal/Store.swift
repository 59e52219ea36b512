import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The in-memory state of one store file, shared by every ``Defaults`` opened on that file in this process.
///
/// All state is guarded by ``lock``; saves are serialized by ``saveLock``, which is taken before ``lock``
/// and held during file I/O. No user code (encoders, decoders, error handlers) runs while ``lock`` is held.
final class Store: @unchecked Sendable {
    /// The file layer, or `nil` for an in-memory store.
    let file: DurableFile?
    /// Limits, the unreadable-file policy and migrations.
    let options: Defaults.Options
    /// The size limit for reading the file.
    var maxFileSize: Int { options.maximumFileSize }
    /// The nesting limit for parsing the file.
    var maxDepth: Int { options.maximumDepth }
    /// The key length limit, in bytes of UTF-8.
    let maxKeyLength: Int
    /// The schema version the migrations bring the file to (the last step's), or `nil` without migrations.
    /// Every save makes the file's reserved member hold it.
    let schemaVersion: Int?

    let lock = Lock()
    private let saveLock = Lock()
    private let queue: DispatchQueue

    // Guarded by `lock`.
    /// By name, byte-exact (see ``MemberName``).
    private var cells: [MemberName: Cell] = [:]
    private var slots: [Int: AnySlot] = [:]
    /// Cells whose `isDirty` is set (and, between saves, some whose flag was cleared).
    private var dirty: [Cell] = []
    /// The stored cells in file order, as of the last save or load (some may have been removed since).
    private var order: [Cell] = []
    /// Cells stored since the last save that are not in `order`.
    private var queued: [Cell] = []
    /// The file's bytes as last assembled, matching `order` while `imageIsValid`; a save that changes only
    /// values splices the new fragments into it instead of rebuilding every member.
    private var image: [UInt8] = []
    /// Where each member's value lies in `image`, by index in `order` (see `Cell.orderIndex`).
    private var valueStarts: [Int] = []
    private var valueEnds: [Int] = []
    /// Whether `image` and the value positions match `order`.
    private var imageIsValid = false
    /// Whether a member of `order` lost its value since the last assembly (the next one must rebuild).
    private var orderLostMember = false
    /// The identity of the file as this store last read or wrote it; `nil` when there was no file.
    private var diskIdentity: FileIdentity?
    /// Why the directory could not be flushed after the last rename of the file, while it still needs a
    /// flush: the next save (or `flush()`) retries it, and throws this until it succeeds.
    private var unsyncedDirectory: DefaultsError?
    /// Observers of every change, for `observeAll`.
    private var allObservers: [AllObserver] = []
    /// How many observers are registered (for tests).
    private(set) var observerCount = 0
    private var errorHandler: @Sendable (DefaultsError) -> Void = Store.printError
    private var timer = SaveTimer()
    /// Notices outside changes to the file; started by the first observer or by `startWatching()`.
    private var watcher: FileWatcher?
    /// The version of the file whose parse error was last reported by the watcher (reported once).
    private var reportedBadIdentity: FileIdentity?
    /// Why the file failed to load, for a store opened without throwing; cleared by a successful read.
    private var loadFailure: DefaultsError?
    /// How many times the file was written (for tests and benchmarks).
    private(set) var writeCount = 0
    /// How many times taking the file lock found it held by another process or thread and had to wait (for
    /// tests: the positive sign that a save is waiting for the lock).
    var lockWaitCount: Int { lock.withLock { lockWaits } }
    private var lockWaits = 0
    /// How many times the file was read and parsed (for tests: the store's own writes must not cause one).
    var readCount: Int { lock.withLock { reads } }
    private var reads = 0

    /// Makes an empty store for `path`, or an in-memory store when `path` is `nil`. Reads nothing: call
    /// ``load()`` next.
    init(path: String?, options: Defaults.Options) {
        self.file = path.map(DurableFile.init(path:))
        self.options = options
        self.maxKeyLength = options.maximumKeyLength
        self.schemaVersion = options.migrations.map(\.version).max()
        self.queue = DispatchQueue(label: "CodableDefaults.Store")
    }

    /// Reads the file if it exists (moving it aside or migrating it as the options say), and removes
    /// temporary files a crashed writer left beside it.
    ///
    /// - Throws: ``DefaultsError`` when the file exists but cannot be read or parsed, or a migration fails.
    func load() throws(DefaultsError) {
        guard let file else { return }
        var loaded: ([DocumentMember], FileIdentity?)?
        do throws(DefaultsError) {
            loaded = try options.migrations.isEmpty ? readFile(file) : migrate(file)
        } catch  where options.unreadableFile == .moveAside && Self.isUnreadableContent(error) {
            // A failed directory flush after the rename does not undo the move: it is reported below, with the
            // notice, and the next save retries it.
            report(try moveAside(file, because: error, keepingState: false).report)
            loaded = options.migrations.isEmpty ? nil : try migrate(file)
        }
        // A new file starts at the newest schema: every save writes the member (see `stampSchemaVersion`).
        if let (members, identity) = loaded {
            apply(members)
            diskIdentity = identity
        }
        if let notDurable = lock.withLock({ unsyncedDirectory }) { report(notDurable) }
        if !file.leftoverTemporaries().isEmpty {
            do {
                let fd = try lockFile(file)
                defer { file.unlock(fd) }
                _ = try file.removeLeftoverTemporaries()
            } catch {
                report(error)
            }
        }
    }

    /// Takes the file lock, waiting at most `options.lockTimeout`. Call without holding ``lock``.
    private func lockFile(_ file: DurableFile) throws(DefaultsError) -> Int32 {
        try file.lock(timeout: options.lockTimeout) { lock.withLock { lockWaits += 1 } }
    }

    /// Whether an error means the file's content is bad (as opposed to it being unreachable).
    private static func isUnreadableContent(_ error: DefaultsError) -> Bool {
        error.code == .invalidJSON || error.code == .fileTooLarge
    }

    /// Renames an unreadable file to `<name>.corrupt-<timestamp>` under the file lock. Returns the new path
    /// and the error to report (the caller reports it once no lock is held), which says what the store does
    /// next: starts empty (opening), or keeps its state to write in the file's place (`keepingState`).
    ///
    /// Once the rename succeeded the file is moved, as a save's file is written: if flushing the directory
    /// then fails, the store remembers it (`unsyncedDirectory`), so the next save or flush retries the flush
    /// and throws ``DefaultsError/Code-swift.struct/notDurable`` until it succeeds.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` when the rename fails (the file is where it
    ///   was), or what taking the file lock throws.
    private func moveAside(
        _ file: DurableFile, because error: DefaultsError, keepingState: Bool
    ) throws(DefaultsError) -> (path: String, report: DefaultsError) {
        let fd = try lockFile(file)
        defer { file.unlock(fd) }
        let (aside, notDurable) = try file.moveAside()
        lock.withLock { unsyncedDirectory = notDurable }
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
    private func migrate(_ file: DurableFile) throws(DefaultsError) -> ([DocumentMember], FileIdentity?)? {
        let steps = options.migrations.sorted { $0.version < $1.version }
        guard let target = steps.last?.version else { return try readFile(file) }
        if let first = steps.first, first.version < 1 {
            throw DefaultsError(
                .invalidArgument, "migration versions start at 1, not \(first.version)", path: file.path)
        }
        for (step, next) in zip(steps, steps.dropFirst()) where step.version == next.version {
            throw DefaultsError(.invalidArgument, "two migrations have version \(step.version)", path: file.path)
        }
        try file.createDirectory()
        let fd = try lockFile(file)
        defer { file.unlock(fd) }
        guard let (bytes, identity) = try file.read(maxSize: maxFileSize) else { return nil }
        // A 0-byte file holds nothing to migrate: it is a new file, which every save stamps with the version.
        if bytes.isEmpty { return ([], identity) }
        let members = try parse(bytes, file: file)
        let reserved = Defaults.schemaVersionKey
        var version = 0
        if let member = members.first(where: { $0.key == reserved }) {
            guard let number = Int(String(decoding: member.value, as: UTF8.self)), number >= 0 else {
                throw DefaultsError(
                    .unsupportedSchemaVersion, "the schema version is not a whole number", path: file.path,
                    key: reserved)
            }
            version = number
        }
        if version > target {
            throw DefaultsError(
                .unsupportedSchemaVersion,
                "the file has schema version \(version), newer than this program's \(target); it is left as it is",
                path: file.path)
        }
        guard version < target else { return (members, identity) }
        try Self.refuseCanonicalCollisions(members, path: file.path)

        // Values are read and written by the store's own scanner and writer, so numbers keep their literals;
        // a member whose value the steps leave as it was keeps its original bytes (`1.50`, escapes and all).
        var values: [String: JSONValue] = [:]
        var originals: [String: (value: JSONValue, fragment: [UInt8])] = [:]
        for member in members where member.key != reserved {
            let value = try Self.migrationValue(member, path: file.path)
            values[member.key] = value
            originals[member.key] = (value, member.value)
        }
        for step in steps where step.version > version {
            do {
                try step.body(&values)
            } catch {
                throw DefaultsError(
                    .migrationFailed, "migration to schema version \(step.version) failed: \(error)",
                    path: file.path)
            }
        }
        var migrated: [DocumentMember] = [DocumentMember(key: reserved, value: Array(String(target).utf8))]
        for (name, value) in values where name != reserved {
            let written: [UInt8]
            do {
                written = try JSONValueBytes.fragment(value, key: name, maxDepth: maxDepth)
            } catch {
                throw DefaultsError(.migrationFailed, error.message, path: file.path, key: name)
            }
            if let original = originals[name], JSONValueBytes.write(original.value).bytes == written {
                migrated.append(DocumentMember(key: name, value: original.fragment))
            } else {
                migrated.append(DocumentMember(key: name, value: written))
            }
        }
        migrated.sort { precedesInFile($0.key, $1.key) }
        let serialized = FileImage(members: migrated).bytes
        // Never write a file that this store (with these limits) could not open again.
        do throws(DefaultsError) {
            if serialized.count > maxFileSize {
                throw DefaultsError(
                    .fileTooLarge, "\(serialized.count) bytes is over the limit of \(maxFileSize) bytes")
            }
            _ = try parse(serialized, file: file)
        } catch {
            throw DefaultsError(
                .migrationFailed,
                "the migrated file would break the store's limits (\(error.message)); the file is untouched",
                path: file.path, key: error.key)
        }
        let backup = try DurableFile(path: file.path + ".v\(version).bak").write(bytes)
        if let notDurable = backup.notDurable {
            // The original is replaced only once its backup is sure to survive a power loss.
            throw DefaultsError(
                .writeFailed,
                "the backup could not be made durable, so the file was not migrated: "
                    + notDurable.message, path: file.path, errno: notDurable.errno)
        }
        let written = try file.write(serialized)
        lock.withLock { unsyncedDirectory = written.notDurable }
        return (migrated, written.identity)
    }

    /// Renames the file aside if it does not parse, so the next save writes the current state in its place.
    /// Returns the new path, or `nil` when the file parses (or is missing) and nothing was moved.
    ///
    /// Once the rename succeeded the state is kept to be written, whether or not the directory's flush
    /// worked; a failed flush is left for the next save to retry (see ``moveAside(_:because:keepingState:)``).
    func moveAsideUnreadableFile() throws(DefaultsError) -> String? {
        guard let file else { return nil }
        let moved = try saveLock.withLock { () throws(DefaultsError) -> (path: String, report: DefaultsError)? in
            do throws(DefaultsError) {
                _ = try readFile(file)
                return nil
            } catch  where Self.isUnreadableContent(error) {
                let moved = try moveAside(file, because: error, keepingState: true)
                lock.withLock {
                    diskIdentity = nil
                    loadFailure = nil
                    reportedBadIdentity = nil
                    for cell in cells.values where cell.stored.isPresent && !cell.isDirty {
                        cell.isDirty = true
                        dirty.append(cell)
                    }
                }
                return moved
            }
        }
        guard let moved else { return nil }
        report(moved.report)
        return moved.path
    }

    deinit {
        watcher?.stop()
        if file != nil && lock.withLock({ !dirty.isEmpty || unsyncedDirectory != nil }) {
            do { try save() } catch { report(error) }
        }
    }

    // MARK: Errors

    /// The default error handler: one line on standard error.
    static let printError: @Sendable (DefaultsError) -> Void = { error in
        Sys.printToStandardError("CodableDefaults: \(error)\n")
    }

    /// The handler that receives errors no caller can be thrown to.
    var onError: @Sendable (DefaultsError) -> Void {
        get { lock.withLock { errorHandler } }
        set { lock.withLock { errorHandler = newValue } }
    }

    /// Passes an error to the handler, outside the lock.
    func report(_ error: DefaultsError) {
        let handler = lock.withLock { errorHandler }
        handler(error)
    }

    /// Why the file failed to load, if it did and has not been read correctly since.
    var loadError: DefaultsError? { lock.withLock { loadFailure } }

    /// Records a failed load.
    func setLoadError(_ error: DefaultsError) {
        lock.withLock { loadFailure = error }
    }

    // MARK: Reading

    /// The value for `key`: cached, decoded, or the default.
    @inline(__always)
    func value<Value>(for key: Defaults.Key<Value>) -> Value {
        lock.lock()
        if let any = slots[key.id] {
            let slot = unsafeDowncast(any, to: Slot<Value>.self)
            if slot.version == slot.cell.version {
                let value = slot.value
                lock.unlock()
                return value
            }
        }
        lock.unlock()
        return resolve(key).value
    }

    /// The value for `key`, or the error that made it fall back to the default.
    func checkedValue<Value>(for key: Defaults.Key<Value>) throws(DefaultsError) -> Value {
        let (value, error) = resolve(key)
        if let error { throw error }
        return value
    }

    /// Finds the value for `key` through the cache, decoding the stored fragment (outside the lock) when the
    /// cache is stale. Reports a decoding error once per stored version.
    private func resolve<Value>(_ key: Defaults.Key<Value>) -> (value: Value, error: DefaultsError?) {
        while true {
            lock.lock()
            let cell = cell(named: key.name)
            if let any = slots[key.id] {
                let slot = unsafeDowncast(any, to: Slot<Value>.self)
                if slot.version == cell.version {
                    let result = (slot.value, slot.error)
                    lock.unlock()
                    return result
                }
            }
            let version = cell.version
            let source = cell.effective
            lock.unlock()

            var value = key.defaultValue
            var error: DefaultsError?
            do {
                if let decoded = try decode(source, as: Value.self, name: key.name) { value = decoded }
            } catch let failure {
                error = failure
            }

            lock.lock()
            guard cell.version == version else {
                // Changed while decoding: decode the newer value.
                lock.unlock()
                continue
            }
            install(Slot(cell: cell, version: version, value: value, error: error), for: key)
            lock.unlock()
            if let error { report(error) }
            return (value, error)
        }
    }

    /// A stored value as `type`: the pending value itself when it has that type, else through JSON; `nil`
    /// for `.absent`. Runs user decoding code: call without the lock.
    private func decode<Value: Decodable>(
        _ source: StoredValue, as type: Value.Type, name: String
    ) throws(DefaultsError) -> Value? {
        switch source {
        case .absent:
            return nil
        case .pending(let box):
            if let typed = box.value as? Value { return typed }
            let fragment = try Codec.encode(box.value, key: name, encoder: Codec.makeEncoder(), maxDepth: maxDepth)
            return try Codec.decode(type, from: fragment, key: name, path: file?.path)
        case .raw(let fragment):
            return try Codec.decode(type, from: fragment, key: name, path: file?.path)
        }
    }

    /// What a read of `key` would give if `stored` were its stored value (a batch's change), outside any
    /// cache: the lookup order of every read (argument domain, stored, registered, default). A failure is
    /// reported and gives the key's default.
    func decodeDetached<Value>(_ stored: StoredValue, as key: Defaults.Key<Value>) -> Value {
        let source: StoredValue = lock.withLock {
            let cell = cells[MemberName(key.name)]
            if let argument = cell?.argument { return .raw(argument) }
            if stored.isPresent { return stored }
            return cell?.registered.map { .raw($0) } ?? .absent
        }
        do {
            return try decode(source, as: Value.self, name: key.name) ?? key.defaultValue
        } catch {
            report(error)
            return key.defaultValue
        }
    }

    /// The effective value of `name` decoded as `type`, without a cache; `nil` when no domain has a value or
    /// it does not decode (the error is reported).
    func effectiveValue<Value: Decodable>(_ type: Value.Type, name: String) -> Value? {
        let source = lock.withLock { cells[MemberName(name)]?.effective ?? .absent }
        do {
            return try decode(source, as: type, name: name)
        } catch {
            report(error)
            return nil
        }
    }

    /// Whether any domain (argument, stored, registered) has a value for `name`.
    func hasEffectiveValue(_ name: String) -> Bool {
        lock.withLock { cells[MemberName(name)]?.effective.isPresent ?? false }
    }

    /// Reverts every unsaved change to what the file held. Returns the names that changed.
    func discardUnsavedChanges() -> Set<MemberName> {
        // Under the save lock, so no save is between assembling and recording what it wrote.
        saveLock.lock()
        defer { saveLock.unlock() }
        return lock.withLock {
            var names = Set<MemberName>()
            for cell in dirty where cell.isDirty {
                cell.isDirty = false
                cell.stored = cell.saved.map { .raw($0) } ?? .absent
                cell.version &+= 1
                requeueIfNeeded(cell)
                if !cell.isReserved { names.insert(MemberName(cell.name)) }
            }
            dirty.removeAll()
            // The image may hold the discarded values (assembled by a save whose write failed).
            imageIsValid = false
            return names
        }
    }

    /// Puts a cell whose value came back (a discard or revert) in the list of names to add to the order, if
    /// a rebuild of the order dropped it meanwhile. Call with the lock held.
    private func requeueIfNeeded(_ cell: Cell) {
        if cell.stored.isPresent && !cell.isOrdered && !cell.isQueued {
            cell.isQueued = true
            queued.append(cell)
        }
    }

    /// Whether a value is stored under `name` (set and not yet saved counts).
    func hasStoredValue(_ name: String) -> Bool {
        lock.withLock { cells[MemberName(name)].map { $0.stored.isPresent && !$0.isReserved } ?? false }
    }

    /// The names with a stored value, sorted as in the file.
    var keys: [String] {
        lock.withLock { cells.values.filter { $0.stored.isPresent && !$0.isReserved }.map(\.name) }
            .sorted(by: precedesInFile)
    }

    // MARK: Writing

    /// Stores `value` for `key`; `nil` of an optional removes.
    func set<Value>(_ value: Value, for key: Defaults.Key<Value>) -> Outcome {
        if key.isNil(value) { return remove(key.name) }
        // An Equatable value equal to the cached one is no change. `==` is user code, so it runs outside the
        // lock, against the cached value of a known version; the answer counts only if that version is
        // still current when the lock is taken again.
        var unchangedAtVersion: UInt64?
        if let isEqual = key.isEqual, !key.hasLibraryEquality {
            let cached: (UInt64, Value)? = lock.withLock {
                guard let any = slots[key.id] else { return nil }
                let slot = unsafeDowncast(any, to: Slot<Value>.self)
                let cell = slot.cell
                guard cell.argument == nil, cell.stored.isPresent, slot.version == cell.version, slot.error == nil
                else { return nil }
                return (slot.version, slot.value)
            }
            if let (version, current) = cached, isEqual(current, value) { unchangedAtVersion = version }
        }
        lock.lock()
        defer { lock.unlock() }
        // A key that has a cache slot reaches its cell through it, without hashing the name.
        let slot = slots[key.id].map { unsafeDowncast($0, to: Slot<Value>.self) }
        let cell = slot?.cell ?? cell(named: key.name)
        if let unchangedAtVersion, cell.version == unchangedAtVersion { return .unchanged }
        // Library `==` runs no user code, so it may run under the lock: one lock for the common keys.
        if key.hasLibraryEquality, let slot, let isEqual = key.isEqual, cell.argument == nil, cell.stored.isPresent,
            slot.version == cell.version, slot.error == nil, isEqual(slot.value, value)
        {
            return .unchanged
        }
        store(.pending(Pending(value)), in: cell)
        guard cell.argument == nil else { return outcome(cell) }
        if let slot {
            slot.value = value
            slot.error = nil
            slot.version = cell.version
        } else {
            install(Slot(cell: cell, version: cell.version, value: value, error: nil), for: key)
        }
        return outcome(cell)
    }

    /// Stores an already encoded fragment for `key` (the loud path, which encodes before storing).
    func set<Value>(fragment: [UInt8], value: Value, for key: Defaults.Key<Value>) -> Outcome {
        lock.lock()
        defer { lock.unlock() }
        let cell = cell(named: key.name)
        if case .raw(let old) = cell.stored, old == fragment { return .unchanged }
        store(.raw(fragment), in: cell)
        if cell.argument == nil {
            install(Slot(cell: cell, version: cell.version, value: value, error: nil), for: key)
        }
        return outcome(cell)
    }

    /// Stores a value under a name, without a typed key (the string-key API); `nil` removes.
    func set(untyped value: (any Encodable & Sendable)?, name: String) -> Outcome {
        guard let value else { return remove(name) }
        return lock.withLock {
            let cell = cell(named: name)
            store(.pending(Pending(value)), in: cell)
            return outcome(cell)
        }
    }

    /// The key through which the untyped API reads `name`, one per name so its cache is reused.
    func untypedKey(_ name: String) -> Defaults.Key<JSONValue?> {
        lock.withLock {
            let cell = cell(named: name)
            if let key = cell.untypedKey { return key }
            let key = Defaults.Key<JSONValue?>(name)
            cell.untypedKey = key
            return key
        }
    }

    /// The names that have a value in any domain (argument, stored, registered).
    var effectiveNames: [String] {
        lock.withLock { cells.values.filter { $0.effective.isPresent && !$0.isReserved }.map(\.name) }
            .sorted(by: precedesInFile)
    }

    /// Sets the registration domain's value for each name (a later registration replaces an earlier one).
    /// Returns the names whose registered value changed.
    func register(_ fragments: [MemberName: [UInt8]]) -> Set<MemberName> {
        set(\.registered, to: fragments, clearingOthers: false)
    }

    /// Replaces the argument domain. Returns the names whose argument value changed.
    func setArguments(_ fragments: [MemberName: [UInt8]]) -> Set<MemberName> {
        set(\.argument, to: fragments, clearingOthers: true)
    }

    /// Sets a domain's value for each name in `fragments` (and, with `clearingOthers`, removes it from every
    /// other name). Returns the names whose value in that domain changed.
    private func set(
        _ domain: ReferenceWritableKeyPath<Cell, [UInt8]?>, to fragments: [MemberName: [UInt8]], clearingOthers: Bool
    ) -> Set<MemberName> {
        lock.withLock {
            var names = Set<MemberName>()
            if clearingOthers {
                for cell in cells.values where cell[keyPath: domain] != nil && fragments[MemberName(cell.name)] == nil {
                    cell[keyPath: domain] = nil
                    cell.version &+= 1
                    names.insert(MemberName(cell.name))
                }
            }
            for (name, fragment) in fragments {
                let cell = cell(named: name.string)
                guard cell[keyPath: domain] != fragment else { continue }
                cell[keyPath: domain] = fragment
                cell.version &+= 1
                names.insert(name)
            }
            return names
        }
    }

    /// Removes the stored value for `name`.
    func remove(_ name: String) -> Outcome {
        lock.withLock {
            guard let cell = cells[MemberName(name)], cell.stored.isPresent else { return .unchanged }
            store(.absent, in: cell)
            return outcome(cell)
        }
    }

    /// Removes every stored value. Returns the names that had one.
    func removeAll() -> Set<MemberName> {
        lock.withLock {
            var names = Set<MemberName>()
            for cell in cells.values where cell.stored.isPresent && !cell.isReserved {
                store(.absent, in: cell)
                names.insert(MemberName(cell.name))
            }
            return names
        }
    }

    /// Applies a batch of changes at once. Returns the names whose stored state changed.
    func commit(_ changes: [MemberName: StoredValue]) -> Set<MemberName> {
        lock.withLock {
            var names = Set<MemberName>()
            for (name, value) in changes {
                let cell = cell(named: name.string)
                if !value.isPresent && !cell.stored.isPresent { continue }
                store(value, in: cell)
                names.insert(name)
            }
            return names
        }
    }

    /// What a change did, and whether anyone observes it.
    enum Outcome {
        case unchanged
        case changed
        case changedObserved
    }

    /// The outcome of changing `cell`. Call with the lock held.
    @inline(__always)
    private func outcome(_ cell: Cell) -> Outcome {
        !cell.hasObservers && allObservers.isEmpty ? .changed : .changedObserved
    }

    /// Puts a key's cache slot in place. Call with the lock held.
    private func install(_ slot: AnySlot, for key: Defaults.Keys) {
        if slots.updateValue(slot, forKey: key.id) == nil { key.track(self) }
    }

    /// Drops the cache slot of a key object that no longer exists.
    func forgetSlot(_ id: Int) {
        lock.withLock { _ = slots.removeValue(forKey: id) }
    }

    /// How many typed cache slots the store holds (for tests).
    var slotCount: Int { lock.withLock { slots.count } }

    /// The cell for `name`, created on first use. Call with the lock held.
    @inline(__always)
    private func cell(named name: String) -> Cell {
        let key = MemberName(name)
        if let cell = cells[key] { return cell }
        let cell = Cell(name: name)
        cells[key] = cell
        return cell
    }

    /// Replaces a cell's value and marks it for the next save. Call with the lock held.
    private func store(_ value: StoredValue, in cell: Cell) {
        cell.stored = value
        cell.version &+= 1
        guard file != nil else { return }
        if !cell.isDirty {
            cell.isDirty = true
            dirty.append(cell)
        }
        if value.isPresent && !cell.isOrdered && !cell.isQueued {
            cell.isQueued = true
            queued.append(cell)
        } else if !value.isPresent && cell.isOrdered {
            orderLostMember = true
        }
    }

    // MARK: Loading

    /// Reads and parses the file. Returns `nil` when there is no file.
    private func readFile(_ file: DurableFile) throws(DefaultsError) -> ([DocumentMember], FileIdentity?)? {
        guard let (bytes, identity) = try file.read(maxSize: maxFileSize) else { return nil }
        let knewData = lock.withLock {
            reads += 1
            return diskIdentity.map { $0.size > 0 } ?? false
        }
        guard bytes.isEmpty else { return (try parse(bytes, file: file), identity) }
        // A 0-byte file (`touch settings.json`) holds no data to lose: an empty store. But a file that held data
        // when this store last read or wrote it and is empty now is most likely being rewritten in place by
        // another program (truncated, not yet written): taking it as "every key removed" would let a save
        // write over what that program is about to write. It is refused like a file that does not parse.
        guard !knewData else {
            throw DefaultsError(
                .invalidJSON,
                "the store file is empty, but it held data when this store last read it (another program may be "
                    + "rewriting it in place); it is not written over until it holds a JSON object again",
                path: file.path, line: 1, column: 1)
        }
        return ([], identity)
    }

    /// Parses the file's bytes, turning a scanner error into a ``DefaultsError`` with path, line and column.
    private func parse(_ bytes: [UInt8], file: DurableFile) throws(DefaultsError) -> [DocumentMember] {
        let members: [DocumentMember]
        do {
            members = try Document.parse(bytes, maxDepth: maxDepth)
        } catch {
            throw DefaultsError(
                .invalidJSON, error.message, path: file.path, key: error.key, line: error.line, column: error.column)
        }
        for member in members where member.key.utf8.count > maxKeyLength {
            throw Self.keyTooLong(member.key, limit: maxKeyLength, path: file.path)
        }
        return members
    }

    /// The error for a key over the length limit. The message does not repeat the key: the error's
    /// description shows it shortened, with its length.
    static func keyTooLong(_ name: String, limit: Int, path: String?) -> DefaultsError {
        DefaultsError(.keyTooLong, "the key is over the limit of \(limit) bytes", path: path, key: name)
    }

    /// Makes the file's members the stored values of every cell without unsaved changes, and rebuilds the
    /// member order. Returns the names whose stored value changed. Call with the lock held (or from `init`).
    @discardableResult
    private func apply(_ members: [DocumentMember]) -> Set<MemberName> {
        imageIsValid = false
        if cells.isEmpty {
            applyFirst(members)
            // Nobody observes a name without a cell, but an observeAll observer hears of every name.
            return allObservers.isEmpty ? [] : Set(members.map { MemberName($0.key) })
        }
        var incoming: [MemberName: [UInt8]] = [:]
        incoming.reserveCapacity(members.count)
        for member in members { incoming[MemberName(member.key)] = member.value }
        var changed = Set<MemberName>()
        for cell in cells.values where incoming[MemberName(cell.name)] == nil {
            cell.saved = nil
            if !cell.isDirty && cell.stored.isPresent {
                cell.stored = .absent
                cell.version &+= 1
                changed.insert(MemberName(cell.name))
            }
        }
        for (name, fragment) in incoming {
            let cell = cell(named: name.string)
            cell.saved = fragment
            guard !cell.isDirty else { continue }
            if case .raw(let current) = cell.stored, current == fragment { continue }
            cell.stored = .raw(fragment)
            cell.version &+= 1
            changed.insert(name)
        }
        for cell in order { cell.isOrdered = false }
        for cell in queued { cell.isQueued = false }
        queued = []
        order = cells.values.filter { $0.stored.isPresent }.sorted { precedesInFile($0.name, $1.name) }
        for cell in order { cell.isOrdered = true }
        return changed
    }

    /// ``apply(_:)`` for a store that knows no names yet (the first load): no merging, no change set (no one
    /// observes yet), and the file's order taken as is when it is sorted, as files this library writes are.
    private func applyFirst(_ members: [DocumentMember]) {
        cells.reserveCapacity(members.count)
        var inFileOrder = true
        var previous: String?
        order.reserveCapacity(members.count)
        for member in members {
            let cell = Cell(name: member.key)
            cell.stored = .raw(member.value)
            cell.saved = member.value
            cell.isOrdered = true
            cells[MemberName(member.key)] = cell
            order.append(cell)
            if inFileOrder, let previous, !precedesInFile(previous, member.key) { inFileOrder = false }
            previous = member.key
        }
        if !inFileOrder { order.sort { precedesInFile($0.name, $1.name) } }
    }

    /// Re-reads the file. Unsaved local changes are kept on top of what the file holds.
    ///
    /// - Throws: ``DefaultsError`` when the file cannot be read or parsed; the store then keeps its state.
    func reload() throws(DefaultsError) {
        guard let file else { return }
        let changed = try saveLock.withLock { () throws(DefaultsError) -> Set<MemberName> in
            let result = try readFile(file)
            return lock.withLock {
                diskIdentity = result?.1
                loadFailure = nil
                return apply(result?.0 ?? [])
            }
        }
        notify(changed)
    }

    // MARK: Saving

    /// Writes unsaved changes to the file, durably, merging them into what the file holds now.
    ///
    /// A value that fails to encode, or whose JSON nests deeper than the file's limit, is reverted to what the
    /// file holds and its error thrown after the other changes are written.
    ///
    /// Once the new file is renamed into place the changes are saved; if flushing the directory then fails,
    /// this throws ``DefaultsError/Code-swift.struct/notDurable`` and every later save retries the flush (even
    /// with nothing else to write) until it succeeds.
    ///
    /// - Throws: ``DefaultsError``; on any other failure every unsaved change stays pending.
    func save() throws(DefaultsError) {
        guard let file else { return }
        var reverted = Set<MemberName>()
        var unthrown: DefaultsError?
        // Observers saw the values that failed to encode; tell them (outside the save lock) they are gone.
        defer {
            notify(reverted)
            if let unthrown { report(unthrown) }
        }
        try save(file, reverted: &reverted, unthrown: &unthrown)
    }

    /// The body of ``save()``, under the save lock. Adds the names of values reverted because they failed to
    /// encode to `reverted`; sets `unthrown` to an error to report because another one is thrown.
    private func save(
        _ file: DurableFile, reverted: inout Set<MemberName>, unthrown: inout DefaultsError?
    ) throws(DefaultsError) {
        saveLock.lock()
        defer { saveLock.unlock() }

        // 1. Encode pending values outside the lock (encoders are user code).
        // One critical section: a cell made dirty after it must stay in the list for the next save.
        let (pending, needsDirectorySync): ([(Cell, UInt64, any Encodable & Sendable)]?, Bool) = lock.withLock {
            dirty.removeAll { !$0.isDirty }
            if dirty.isEmpty { return (nil, unsyncedDirectory != nil) }
            let pending: [(Cell, UInt64, any Encodable & Sendable)] = dirty.compactMap { cell in
                guard case .pending(let box) = cell.stored else { return nil }
                return (cell, cell.version, box.value)
            }
            return (pending, false)
        }
        guard let pending else {
            if needsDirectorySync { try retryDirectorySync(file) }
            return
        }
        var encoded: [ObjectIdentifier: [UInt8]] = [:]
        var encodingError: DefaultsError?
        if !pending.isEmpty {
            let encoder = Codec.makeEncoder()
            var failed: [(Cell, UInt64)] = []
            for (cell, version, value) in pending {
                do throws(DefaultsError) {
                    encoded[ObjectIdentifier(cell)] = try Codec.encode(
                        value, key: cell.name, encoder: encoder, maxDepth: maxDepth)
                } catch {
                    encodingError = encodingError ?? error
                    failed.append((cell, version))
                }
            }
            lock.withLock {
                for (cell, version, _) in pending where cell.version == version {
                    if let fragment = encoded[ObjectIdentifier(cell)] { cell.stored = .raw(fragment) }
                }
                for (cell, version) in failed where cell.version == version {
                    cell.stored = cell.saved.map { .raw($0) } ?? .absent
                    cell.version &+= 1
                    cell.isDirty = false
                    // The image may hold a value of this cell from a save whose write failed.
                    imageIsValid = false
                    requeueIfNeeded(cell)
                    reverted.insert(MemberName(cell.name))
                }
            }
        }

        // 2. Under the file lock: merge what other writers saved, then write.
        try file.createDirectory()
        let lockFD = try lockFile(file)
        defer { file.unlock(lockFD) }
        let identity = try file.currentIdentity()
        if identity != lock.withLock({ diskIdentity }) {
            let result = try readFile(file)
            let changed = lock.withLock {
                diskIdentity = result?.1
                loadFailure = nil
                return apply(result?.0 ?? [])
            }
            if !changed.isEmpty { queue.async { [weak self] in self?.notify(changed) } }
        }
        if let schemaVersion {
            try lock.withLock { () throws(DefaultsError) in try stampSchemaVersion(schemaVersion, path: file.path) }
        }
        let (bytes, written) = lock.withLock { assemble(encoded: encoded) }
        // Never write a file that this store (with these limits) could not open again.
        guard bytes.count <= maxFileSize else {
            throw DefaultsError(
                .fileTooLarge,
                "the store would be \(bytes.count) bytes, over the limit of \(maxFileSize) bytes; nothing was "
                    + "written and the changes stay pending", path: file.path)
        }
        let (newIdentity, notDurable) = try file.write(bytes)
        // Renamed into place: the changes are saved, whether or not the directory flush worked.
        lock.withLock {
            diskIdentity = newIdentity
            unsyncedDirectory = notDurable
            writeCount += 1
            for (cell, version, fragment) in written {
                cell.saved = fragment
                if cell.version == version { cell.isDirty = false }
            }
            dirty.removeAll { !$0.isDirty }
        }
        if let notDurable {
            unthrown = encodingError
            throw notDurable
        }
        if let encodingError { throw encodingError }
    }

    /// Flushes the directory again after a rename whose directory flush failed. Call holding the save lock.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/notDurable`` while the flush still fails.
    private func retryDirectorySync(_ file: DurableFile) throws(DefaultsError) {
        let failure = file.syncDirectory()
        lock.withLock { unsyncedDirectory = failure }
        if let failure { throw failure }
    }

    /// Makes the reserved member hold `version`, the schema the store was migrated to, so the file never
    /// loses it (a file deleted or replaced by another writer since the last read has none). Refuses to save
    /// over a file of a newer schema. Call with the lock held, after merging the file's current members.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/unsupportedSchemaVersion``; the changes then stay pending.
    private func stampSchemaVersion(_ version: Int, path: String) throws(DefaultsError) {
        let reserved = Defaults.schemaVersionKey
        let cell = cell(named: reserved)
        let wanted = Array(String(version).utf8)
        if case .raw(let current) = cell.stored {
            if current == wanted { return }
            guard let found = Int(String(decoding: current, as: UTF8.self)), found >= 0 else {
                throw DefaultsError(
                    .unsupportedSchemaVersion,
                    "the file's schema version is not a whole number; nothing was written and the changes stay "
                        + "pending", path: path, key: reserved)
            }
            if found > version {
                throw DefaultsError(
                    .unsupportedSchemaVersion,
                    "another program saved the file with schema version \(found), newer than this program's "
                        + "\(version); nothing was written over it and the changes stay pending", path: path)
            }
        }
        store(.raw(wanted), in: cell)
    }

    /// Builds the file's bytes from the stored cells in order, merging newly stored names into the order.
    /// Returns the bytes and, for each dirty cell, the version and fragment that went into them. Call with
    /// the lock held.
    private func assemble(
        encoded: [ObjectIdentifier: [UInt8]]
    ) -> (bytes: [UInt8], written: [(Cell, UInt64?, [UInt8]?)]) {
        func fragment(_ cell: Cell) -> [UInt8]? {
            switch cell.stored {
            case .absent: return nil
            case .raw(let bytes): return bytes
            case .pending: return encoded[ObjectIdentifier(cell)] ?? cell.saved
            }
        }
        if imageIsValid && !orderLostMember && queued.isEmpty {
            spliceChangedValues(fragment)
        } else {
            rebuildImage(fragment)
        }
        // What the file will hold for each changed cell; a cell still pending (set again after its value was
        // encoded) stays dirty, but the older value it is written with is what the file holds.
        var written: [(Cell, UInt64?, [UInt8]?)] = []
        for cell in dirty where cell.isDirty {
            switch cell.stored {
            case .absent: written.append((cell, cell.version, nil))
            case .raw(let value): written.append((cell, cell.version, value))
            case .pending:
                if cell.isOrdered, let value = fragment(cell) { written.append((cell, nil, value)) }
            }
        }
        return (image, written)
    }

    /// Builds `image` from every stored cell, merging newly stored names into the order without re-sorting
    /// it. Call with the lock held.
    private func rebuildImage(_ fragment: (Cell) -> [UInt8]?) {
        var fresh = queued.filter { $0.stored.isPresent && !$0.isOrdered }
        for cell in queued { cell.isQueued = false }
        queued = []
        fresh.sort { precedesInFile($0.name, $1.name) }

        var merged: [Cell] = []
        merged.reserveCapacity(order.count + fresh.count)
        var next = 0
        for cell in order {
            cell.isOrdered = false
            guard cell.stored.isPresent else { continue }
            while next < fresh.count && precedesInFile(fresh[next].name, cell.name) {
                merged.append(fresh[next])
                next += 1
            }
            merged.append(cell)
        }
        merged.append(contentsOf: fresh[next...])

        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(image.count, merged.count * 32) + 64)
        bytes.append(0x7B)  // {
        var kept: [Cell] = []
        kept.reserveCapacity(merged.count)
        var starts: [Int] = []
        var ends: [Int] = []
        starts.reserveCapacity(merged.count)
        ends.reserveCapacity(merged.count)
        for cell in merged {
            guard let value = fragment(cell) else {
                // Set after the values were encoded and new to the file: it goes in with the next save.
                cell.isQueued = true
                queued.append(cell)
                continue
            }
            if !kept.isEmpty { bytes.append(0x2C) }  // ,
            bytes.append(0x0A)  // newline
            bytes.append(contentsOf: [0x20, 0x20])  // two spaces
            Document.appendQuoted(cell.name, to: &bytes)
            bytes.append(contentsOf: [0x3A, 0x20])  // ": "
            cell.isOrdered = true
            cell.orderIndex = kept.count
            starts.append(bytes.count)
            bytes.append(contentsOf: value)
            ends.append(bytes.count)
            kept.append(cell)
        }
        if kept.isEmpty {
            bytes.append(contentsOf: [0x7D, 0x0A])  // }\n
        } else {
            bytes.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        }
        order = kept
        image = bytes
        valueStarts = starts
        valueEnds = ends
        imageIsValid = true
        orderLostMember = false
    }

    /// Updates `image` when the set of members is unchanged: copies the unchanged spans and splices in the
    /// values of the changed cells, so a save costs about a copy of the file's bytes. Call with the lock
    /// held.
    private func spliceChangedValues(_ fragment: (Cell) -> [UInt8]?) {
        var changes: [(index: Int, value: [UInt8])] = []
        for cell in dirty where cell.isDirty && cell.isOrdered {
            guard let value = fragment(cell) else { continue }
            let index = cell.orderIndex
            if image[valueStarts[index]..<valueEnds[index]].elementsEqual(value) { continue }
            changes.append((index, value))
        }
        guard !changes.isEmpty else { return }
        changes.sort { $0.index < $1.index }
        if changes.count <= 8 {
            // Few changes: replace in place, last first so earlier positions stay right. The buffer is not
            // shared once the previous save's write has finished, so this moves only the bytes after each
            // change (nothing at all when a value keeps its length).
            for change in changes.reversed() {
                image.replaceSubrange(valueStarts[change.index]..<valueEnds[change.index], with: change.value)
            }
        } else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(image.count + changes.reduce(0) { $0 + $1.value.count })
            var copied = 0
            for change in changes {
                bytes.append(contentsOf: image[copied..<valueStarts[change.index]])
                bytes.append(contentsOf: change.value)
                copied = valueEnds[change.index]
            }
            bytes.append(contentsOf: image[copied...])
            image = bytes
        }
        // Move the value positions after each change by the growth so far.
        var shift = 0
        var nextChange = 0
        for index in changes[0].index..<valueStarts.count {
            let start = valueStarts[index] + shift
            var length = valueEnds[index] - valueStarts[index]
            if nextChange < changes.count && changes[nextChange].index == index {
                shift += changes[nextChange].value.count - length
                length = changes[nextChange].value.count
                nextChange += 1
            }
            valueStarts[index] = start
            valueEnds[index] = start + length
        }
    }

    // MARK: Observing

    /// Registers an observer of one name.
    func addObserver(_ observer: Observer, name: String) {
        lock.withLock {
            cell(named: name).observers.append(observer)
            observerCount += 1
        }
        startWatching()
    }

    /// Unregisters an observer of one name.
    func removeObserver(_ observer: Observer, name: String) {
        lock.withLock {
            guard let cell = cells[MemberName(name)], let index = cell.observers.firstIndex(where: { $0 === observer })
            else {
                return
            }
            cell.observers.remove(at: index)
            observerCount -= 1
        }
    }

    /// Registers an observer of every change.
    func addAllObserver(_ observer: AllObserver) {
        lock.withLock {
            allObservers.append(observer)
            observerCount += 1
        }
        startWatching()
    }

    /// Unregisters an observer of every change.
    func removeAllObserver(_ observer: AllObserver) {
        lock.withLock {
            guard let index = allObservers.firstIndex(where: { $0 === observer }) else { return }
            allObservers.remove(at: index)
            observerCount -= 1
        }
    }

    /// Tells the observers of `names`, and the observers of every change, that those names changed. Runs
    /// the handlers on the calling thread; call without holding the lock.
    func notify(_ names: Set<MemberName>) {
        guard !names.isEmpty else { return }
        let observers: [Observer] = lock.withLock {
            var observers: [Observer] = []
            for name in names {
                if let cell = cells[name] { observers.append(contentsOf: cell.observers) }
            }
            observers.append(contentsOf: allObservers)
            return observers
        }
        for observer in observers { observer.deliver(names: names) }
    }

    // MARK: Watching

    /// Starts noticing outside changes to the file (no-op for an in-memory store or when already started).
    func startWatching() {
        guard let file else { return }
        let watcher: FileWatcher? = lock.withLock {
            guard self.watcher == nil else { return nil }
            let watcher = FileWatcher(directory: file.directory, name: file.name, queue: queue) { [weak self] in
                self?.checkFile()
            }
            self.watcher = watcher
            return watcher
        }
        watcher?.start()
    }

    /// Whether the store watches its file (for tests).
    var isWatching: Bool { lock.withLock { watcher != nil } }

    /// Whether the watcher runs on its `stat` fallback (for tests).
    var isPolling: Bool { lock.withLock { watcher }?.isPolling ?? false }

    /// Re-reads the file if it is not the version this store last read or wrote, and notifies observers
    /// of what changed. Runs on the store's queue. A file that does not parse is reported once per version
    /// and leaves the store as it was.
    func checkFile() {
        guard let file else { return }
        do throws(DefaultsError) {
            let changed = try saveLock.withLock { () throws(DefaultsError) -> Set<MemberName> in
                let identity = try file.currentIdentity()
                let known = lock.withLock {
                    identity == diskIdentity || (identity != nil && identity == reportedBadIdentity)
                }
                if known { return [] }
                let result: ([DocumentMember], FileIdentity?)?
                do throws(DefaultsError) {
                    result = try readFile(file)
                } catch {
                    lock.withLock { reportedBadIdentity = identity }
                    throw error
                }
                return lock.withLock {
                    diskIdentity = result?.1
                    loadFailure = nil
                    reportedBadIdentity = nil
                    return apply(result?.0 ?? [])
                }
            }
            notify(changed)
        } catch {
            report(error)
        }
    }

    // MARK: Scheduling

    /// Arranges a save once the store has been idle for `delay` (and at the latest `SaveTimer.maximumWait`
    /// after the first unsaved change).
    func scheduleSave(after delay: Duration) {
        let now = DispatchTime.now()
        let arm: DispatchTime? = lock.withLock { timer.change(at: now, delay: delay) }
        if let arm { schedule(at: arm) }
    }

    /// Whether an `.afterIdle` save is scheduled (for tests: with none and nothing changed, no save comes).
    var isSaveScheduled: Bool { lock.withLock { timer.isArmed } }

    private func schedule(at deadline: DispatchTime) {
        queue.asyncAfter(deadline: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        let now = DispatchTime.now()
        let next: DispatchTime? = lock.withLock { timer.fire(at: now) }
        if let next {
            schedule(at: next)
            return
        }
        do {
            try save()
            lock.withLock { timer.succeeded() }
        } catch {
            report(error)
            let retry = lock.withLock { timer.failed(at: DispatchTime.now()) }
            schedule(at: retry)
        }
    }
}

/// The bookkeeping of the `.afterIdle` save timer. At most one timer is armed at a time.
struct SaveTimer {
    /// The longest a stream of changes can delay a save (unless the idle delay itself is longer).
    static let maximumWait: UInt64 = 5_000_000_000
    /// The longest idle delay: longer `.afterIdle` durations count as this (see ``Defaults/SaveMode``).
    static let maximumDelay: UInt64 = 86_400_000_000_000

    private var armed = false
    private var delay: UInt64 = 0
    private var lastChange: UInt64 = 0
    private var firstChange: UInt64 = 0
    private var retryDelay: UInt64 = 0

    /// Whether a timer is armed.
    var isArmed: Bool { armed }

    /// Records a change; returns the deadline to arm the timer at, or `nil` when it is already armed.
    mutating func change(at now: DispatchTime, delay: Duration) -> DispatchTime? {
        self.delay = Self.nanoseconds(delay)
        lastChange = now.uptimeNanoseconds
        guard !armed else { return nil }
        armed = true
        firstChange = lastChange
        return DispatchTime(uptimeNanoseconds: Self.adding(lastChange, self.delay))
    }

    /// The timer fired: returns a later deadline if the store has not been idle long enough, or `nil` to
    /// save now.
    mutating func fire(at now: DispatchTime) -> DispatchTime? {
        let due = min(Self.adding(lastChange, delay), Self.adding(firstChange, max(Self.maximumWait, delay)))
        if now.uptimeNanoseconds < due { return DispatchTime(uptimeNanoseconds: due) }
        armed = false
        return nil
    }

    /// The save succeeded: the retry back-off starts over.
    mutating func succeeded() { retryDelay = 0 }

    /// The save failed: returns when to retry (doubling from one second up to five minutes).
    mutating func failed(at now: DispatchTime) -> DispatchTime {
        retryDelay = min(max(retryDelay * 2, 1_000_000_000), 300_000_000_000)
        armed = true
        lastChange = now.uptimeNanoseconds
        firstChange = lastChange
        delay = retryDelay
        return DispatchTime(uptimeNanoseconds: Self.adding(now.uptimeNanoseconds, retryDelay))
    }

    /// A duration in nanoseconds, clamped to `0...maximumDelay` (a negative duration is no delay), with no
    /// arithmetic that can overflow.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        duration.nanoseconds(clampedTo: maximumDelay)
    }

    /// `a + b`, or the largest time when that overflows.
    private static func adding(_ a: UInt64, _ b: UInt64) -> UInt64 {
        a.saturatingAdd(b)
    }
}
