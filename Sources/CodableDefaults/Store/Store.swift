import Dispatch
import Observation

/// The in-memory side of one store, shared by every ``Defaults`` opened on the same file in this process.
///
/// The store is split by concern, one file each, in the `Store/` folder unless named otherwise:
/// - `Store.swift` (this file): the parts, opening and reloading, errors.
/// - `StoreState.swift`, `StoreState+Parts.swift`: the state, reachable only inside `state.withLock`, in parts
///   with one purpose each, and taking in what storage holds.
/// - `Cell.swift`: a name's state (its value in each domain) and the typed cache slots.
/// - `Store+Reading.swift`: reads, the typed cache, where a stored value is decoded.
/// - `Store+Writing.swift`: every change, and the one place that applies the save mode and notifies.
/// - `Store+Saving.swift`: a save: encoding pending values, the storage write, recording what was written.
/// - `Store+Modify.swift`: the atomic read-modify-write.
/// - `SaveLock.swift`: the save lock, and how it refuses the thread inside a modify.
/// - `SaveTimer.swift`: the `.afterIdle` timer.
/// - `StoreRegistry.swift`, `AppLifecycle.swift`: one store per file in a process; saving every store when an app
///   is suspended.
/// - `Observation/Store+Publishing.swift`, `Observation/Store+ObservationTracking.swift`: observers, outside
///   changes, and Observation's tracking.
/// - `Layers/Store+Layers.swift`: the read-only layers.
/// - `History/Store+History.swift`: the history as the store reads it, and the revert (through the atomic modify).
/// - `Testing/Store+Inspection.swift`: what tests look at (debug builds only).
/// The members live in a ``Storage`` that whoever opens the store hands it: the JSON file (``JSONFileStorage``),
/// memory (``MemoryStorage``), or an engine of another target (etcd). The store reads the storage's
/// ``StorageFacts`` once, and asks once whether it is a ``DurableStorage`` or a ``RemoteStorage``.
///
/// Locks: the storage's calls (saves, reloads, outside-change checks, modify) are serialized by ``saveLock``, taken
/// before the state's lock and held across storage I/O. The state's lock is held only for in-memory work: no user
/// code (encoders, decoders, observers, error handlers) and no I/O runs while it is held.
package final class Store: Sendable {
    /// Where the members live.
    let storage: any Storage
    /// The storage as one whose writes are confirmed durable later and whose unreadable data can be moved aside
    /// (the file), or `nil`: asked once, when the store is made.
    let durable: (any DurableStorage)?
    /// The storage as one another system holds (etcd), or `nil`: asked once, when the store is made.
    let remote: (any RemoteStorage)?
    /// What the storage is (``StorageFacts``), read once.
    let facts: StorageFacts
    /// Limits, the unreadable-file policy and migrations.
    let options: Defaults.Options
    /// The nesting limit for values.
    var maxDepth: Int { options.maximumDepth }
    /// The key length limit, in bytes of UTF-8.
    let maxKeyLength: Int
    /// The shortest key the storage can hold, in bytes of UTF-8 (1 where it has no empty key: etcd with the
    /// empty prefix); 0 for the others.
    let minKeyLength: Int
    /// The state.
    let state = Locked(StoreState())
    /// How secret values are sealed and opened now (``StoreState/cipher``): with the key of
    /// ``Defaults/Options/encryptionKey``, read by ``load()`` (no key before, or without one).
    var cipher: SecretCipher { state.withLock { $0.cipher } }
    /// Serializes the storage's calls: saves, reloads, outside-change checks, modify (see ``SaveLock``).
    let saveLock: SaveLock
    /// Where background work runs: the save timer, outside-change checks, merge notifications.
    let queue = DispatchQueue(label: "CodableDefaults.Store")
    /// Tells Observation's trackings of this store's names of their changes (see
    /// `Observation/Store+ObservationTracking.swift`).
    let registrar = ObservationRegistrar()

    /// Whether a key of `length` bytes of UTF-8 is within the limits (checked on every typed set).
    @inline(__always)
    func takesKeyLength(_ length: Int) -> Bool { length <= maxKeyLength && length >= minKeyLength }

    /// Makes an empty store on `storage`, which whoever opens the store makes (see ``makeStorage(path:options:)``
    /// for a file or memory; the etcd engine makes its own). Reads nothing: call ``load()`` next. An engine that can
    /// become unreachable (etcd) tells the store when it can write again, and the store then saves what is unsaved,
    /// in the background.
    package init(storage: any Storage, options: Defaults.Options) {
        self.storage = storage
        self.durable = storage as? any DurableStorage
        self.remote = storage as? any RemoteStorage
        self.facts = storage.facts
        self.options = options
        self.maxKeyLength = options.maximumKeyLength
        self.minKeyLength = facts.minimumNameLength
        self.saveLock = SaveLock(path: facts.location)
        remote?.whenWritableAgain { [weak self] in self?.saveInBackground() }
    }

    deinit {
        storage.stopWatching()
        let unsaved = state.withLock { !$0.members.dirty.isEmpty } || durable?.hasUnconfirmedWrite == true
        if facts.isPersistent && unsaved {
            do { try save() } catch { report(error) }
        }
    }

    /// The store file's path, or `nil` in memory.
    var path: String? { facts.location }

    // MARK: Opening and reloading

    /// Reads what the storage holds (moving an unreadable file aside or migrating it, as the options say).
    ///
    /// - Throws: ``DefaultsError`` when the encryption key cannot be read (see ``Defaults/EncryptionKey``), the data
    ///   exists but cannot be read or parsed, or a migration fails.
    package func load() throws(DefaultsError) {
        if let source = options.encryptionKey {
            let key = try source.load()
            state.withLock { $0.setCipher(SecretCipher(key: key)) }
        }
        let members = try storage.open(reporting: report)
        if let members { _ = state.withLock { $0.takeIn(snapshot: members) } }
    }

    /// Re-reads the storage. Unsaved local changes are kept on top of what it holds.
    ///
    /// - Throws: ``DefaultsError`` when the data cannot be read or parsed; the store then keeps its state.
    func reload() throws(DefaultsError) {
        let changed = try saveLock.withLock("reload") { () throws(DefaultsError) -> Set<MemberName> in
            let members = try storage.read()
            return state.withLock { state in
                state.errors.loadFailure = nil
                return state.takeIn(snapshot: members ?? .empty)
            }
        }
        publish(changed)
    }

    /// Moves the file aside if it does not parse, so the next save writes the current state in its place.
    /// Returns the new path, or `nil` when the file parses (or is missing) and nothing was moved.
    ///
    /// Once the rename succeeded the state is kept to be written, whether or not the directory's flush
    /// worked; a failed flush is left for the next save to retry.
    func moveAsideUnreadableFile() throws(DefaultsError) -> String? {
        let moved = try saveLock.withLock("moveAsideUnreadableFile") {
            () throws(DefaultsError) -> (location: String, notice: DefaultsError)? in
            guard let moved = try durable?.moveAsideUnreadable() else { return nil }
            state.withLock { state in
                state.errors.loadFailure = nil
                state.makeAllCells()
                for cell in state.members.cells.values where cell.stored.isPresent && !cell.isDirty {
                    state.markDirty(cell)
                }
            }
            return moved
        }
        guard let moved else { return nil }
        report(moved.notice)
        return moved.location
    }

    // MARK: Errors

    /// The default error handler: one line on standard error.
    static let printError: @Sendable (DefaultsError) -> Void = { error in
        Platform.printToStandardError("CodableDefaults: \(error)\n")
    }

    /// The handler that receives errors no caller can be thrown to.
    var onError: @Sendable (DefaultsError) -> Void {
        get { state.withLock { $0.errors.handler } }
        set { state.withLock { $0.errors.handler = newValue } }
    }

    /// Passes an error to the handler, outside the lock.
    func report(_ error: DefaultsError) {
        let handler = state.withLock { $0.errors.handler }
        handler(error)
    }

    /// Why the store failed to load, if it did and has not been read correctly since.
    var loadError: DefaultsError? { state.withLock { $0.errors.loadFailure } }

    /// Records a failed load.
    func setLoadError(_ error: DefaultsError) {
        state.withLock { $0.errors.loadFailure = error }
    }

    /// The error for a key over the length limit. The message does not repeat the key: the error's
    /// description shows it shortened, with its length.
    static func keyTooLong(_ name: String, limit: Int, path: String?) -> DefaultsError {
        DefaultsError(.keyTooLong, "the key is over the limit of \(limit) bytes", path: path, key: name)
    }
}
