import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A change of one member: its new compact JSON value, or `nil` when it was removed.
package struct MemberChange {
    /// The member's name (compared byte for byte, see ``MemberName``).
    package let name: String
    /// The new value, compact JSON; `nil` when the member was removed.
    package let value: [UInt8]?
    /// Whether the member is a secret key's: its history records that it changed, never its values.
    package var secret: Bool

    /// The change of `name` to `value` (`nil`: removed).
    package init(name: String, value: [UInt8]?, secret: Bool = false) {
        self.name = name
        self.value = value
        self.secret = secret
    }
}

/// A storage's history of saves (see ``Storage/history()``).
package struct StorageHistory: Sendable {
    /// The records, oldest first.
    package var records: [HistoryRecord]
    /// What was skipped while reading them (a record cut short by a crash), for the error handler.
    package var notices: [DefaultsError]
    /// Whether the records go back to the first save ever recorded: none older was dropped by the bound or
    /// compacted away. A revert to a revision before the oldest record is then a revert to before every save.
    package var isComplete: Bool
    /// The whole lines that hold no record (a line edited into something else), each with the revision of the
    /// record before it (0: none): the history cannot say what the save such a line stood for changed, so a revert
    /// past it is refused. A last line a crash cut short is only a notice: its save's record is lost, as a record
    /// is when a process dies between its save and the record.
    package var unreadable: [(after: Int, notice: DefaultsError)]

    /// A history of these records and notices.
    package init(
        records: [HistoryRecord], notices: [DefaultsError] = [], isComplete: Bool,
        unreadable: [(after: Int, notice: DefaultsError)] = []
    ) {
        self.records = records
        self.notices = notices
        self.isComplete = isComplete
        self.unreadable = unreadable
    }
}

/// What a storage engine says its members are now.
package enum StorageContent {
    /// Every member: a fresh read of a file.
    case snapshot(StoredMembers)
    /// Only these members changed (an engine that reports key by key, as a watch does).
    case changes([MemberChange])
}

/// What became of a write.
package struct StorageWrite {
    /// What other writers stored since this storage last read or wrote, found while merging; the store
    /// takes it in whether or not the write then succeeded.
    package var outside: StorageContent?
    /// The write's outcome: the members the storage wrote on its own (the schema version) and, when the
    /// data is written but its durability could not be confirmed, the ``DefaultsError/Code-swift.struct/notDurable``
    /// error; or why the write failed (nothing written, except the changes of ``savedDespiteFailure``).
    package var outcome: Result<(stamped: [MemberChange], notDurable: DefaultsError?), DefaultsError>
    /// On a failure, the indexes (in the changes given to the write) of the changes written durably all the
    /// same: an engine that writes a save in several steps (etcd's transactions) may fail after some, or write
    /// every change but one it refuses; empty for the others. The store takes those as saved.
    package var savedDespiteFailure: [Int] = []
    /// Everything the storage holds after a successful write, when it has it in memory at no cost (a file's new
    /// image, sharing its buffer); `nil` otherwise. The store makes it the members it reads unused names from,
    /// so that it holds one copy of the file (not the one it read and the one written).
    package var holds: StoredMembers?
    /// Why the save's history record could not be written, when the save itself succeeded: for the error handler.
    package var historyFailure: DefaultsError?
}

/// Where a store's members live: the seam between the store's in-memory side (cells, typed caches,
/// observers, batches, save scheduling), which knows only names and compact JSON values, and an engine
/// that keeps them: the JSON file (``JSONFileStorage``) or memory (``MemoryStorage``). A remote key-value
/// engine is a third: it loads every member, writes a set of changed members, and reports outside changes
/// as member changes.
///
/// Merging is key by key and the store's changes win: a write stores `changes` on top of what the engine
/// holds now, whatever other writers stored meanwhile, and reports what they stored as ``StorageWrite/outside``.
///
/// Calls come from one thread at a time: the store makes every call (except ``startWatching(on:_:)``'s signal and
/// ``RemoteStorage/whenWritableAgain(_:)``) under its save lock. Every method may block on I/O. None calls user
/// code.
package protocol Storage: AnyObject, Sendable {
    /// What the engine is, fixed when it is made (see ``StorageFacts``).
    var facts: StorageFacts { get }

    /// Reads every member for the first time, bringing the data to the options' schema or moving an
    /// unreadable file aside as the options say. Returns the members (`nil` when nothing is stored yet);
    /// `report` gets the notices for the store's error handler (a file moved aside; a leftover that could not
    /// be removed), with no lock held.
    ///
    /// - Throws: ``DefaultsError`` when the data exists but cannot be read; nothing is written then.
    func open(reporting report: (DefaultsError) -> Void) throws(DefaultsError) -> StoredMembers?

    /// Reads every member again (the store's ``Store/reload()``); `nil` when nothing is stored.
    ///
    /// - Throws: ``DefaultsError`` when the data cannot be read or parsed.
    func read() throws(DefaultsError) -> StoredMembers?

    /// Writes `changes` on top of what the engine holds now (see the type's merging rule): all of them, or on
    /// failure none of them, or (an engine that writes in steps) those of ``StorageWrite/savedDespiteFailure``.
    func write(_ changes: [MemberChange]) -> StorageWrite

    /// One atomic read-modify-write (``Defaults/modify(_:_:)-78wz9``). Under the lock that keeps other writers out
    /// (the lock file; on a remote engine, a transaction), brings what this storage knows up to date, calls
    /// `transform` with what other writers stored since it last read or wrote (`nil`: nothing), and writes the
    /// changes `transform` returns as ``write(_:)`` does, durably, before letting other writers in. When
    /// `transform` returns `nil`, nothing is written. `names` are the members `transform` reads: an engine
    /// that compares revisions instead of locking (etcd's transaction) reports their current values, and
    /// calls `transform` again with the newer ones when one changed before its write; a locking engine calls
    /// it at most once. The returned ``StorageWrite/outside`` holds only what was found after `transform`.
    ///
    /// `transform` runs user code: the engine holds no lock of its own state while it runs.
    ///
    /// `kind` is what the history records of the write (a revert, or a plain save).
    func update(
        reading names: [String], as kind: Defaults.HistoryEntry.Kind, _ transform: (StorageContent?) -> [MemberChange]?
    ) -> StorageWrite

    /// The history of the saves (see ``Defaults/history()-29g0``), oldest first; empty for an engine that keeps none
    /// (memory). A write records each save that changed a value: for each member its value before and after
    /// (only that it changed, for a ``MemberChange/secret`` member), when, by whom, under the next revision.
    ///
    /// - Throws: ``DefaultsError`` when the history exists but cannot be read.
    func history() throws(DefaultsError) -> StorageHistory

    /// The schema kept with the data (``Defaults/publishSchema(for:title:)``), the bytes as stored; `nil` when
    /// there is none. The file engine reads the file ``Defaults/schemaURL(forStoreAt:)`` names; etcd, the
    /// prefix's reserved schema key; memory, what was stored in it.
    ///
    /// - Throws: ``DefaultsError`` when it exists but cannot be read.
    func storedSchema() throws(DefaultsError) -> [UInt8]?

    /// Keeps `bytes` (a schema's JSON text) with the data, in place of any, as durably as the engine writes its
    /// data.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/writeFailed`` when it cannot be written (nothing changed).
    func storeSchema(_ bytes: [UInt8]) throws(DefaultsError)

    /// What changed outside since this storage last read or wrote, or `nil` when nothing did.
    ///
    /// - Throws: ``DefaultsError`` when the data changed and cannot be read; an engine reports one bad
    ///   version once, and `nil` afterwards until it changes again.
    func outsideChanges() throws(DefaultsError) -> StorageContent?

    /// Starts noticing outside changes: `signal` runs on `queue` whenever ``outsideChanges()`` may have
    /// something to say. Calling it again does nothing.
    func startWatching(on queue: DispatchQueue, _ signal: @escaping @Sendable () -> Void)

    /// Stops noticing outside changes.
    func stopWatching()

}

/// What a storage engine is, fixed when it is made: one value, so that an engine states its facts in one place and the
/// store reads them once.
package struct StorageFacts: Sendable {
    /// Where the data lives, for messages: the file's path, `etcd://HOST:PORT/PREFIX`; `nil` in memory.
    package var location: String?

    /// Where the schema kept with the data lives, for messages: a file's path, an etcd key, `memory` (see
    /// ``Storage/storedSchema()``).
    package var schemaLocation: String

    /// Whether data written survives the process (the store then saves unsaved changes when it goes away).
    package var isPersistent: Bool

    /// The shortest name, in bytes of UTF-8, that the engine can store: 1 for one that has no empty key (etcd
    /// with the empty prefix, whose key would be empty), 0 for the others. A set of a shorter name is refused
    /// when it is made, so that it never reaches a save (where it would fail every later save).
    package var minimumNameLength: Int

    /// The most keys one ``Storage/update(reading:as:_:)`` may read and change: `Int.max` for the file and memory
    /// engines; for etcd, what one transaction takes besides the history record. A revert of more keys is refused
    /// before anything is written.
    package var maximumKeysPerUpdate: Int

    /// The facts of an engine; a name may be empty and an update may change any number of keys unless said.
    package init(
        location: String?, schemaLocation: String, isPersistent: Bool, minimumNameLength: Int = 0,
        maximumKeysPerUpdate: Int = .max
    ) {
        self.location = location
        self.schemaLocation = schemaLocation
        self.isPersistent = isPersistent
        self.minimumNameLength = minimumNameLength
        self.maximumKeysPerUpdate = maximumKeysPerUpdate
    }
}

extension Storage {
    /// Where the data lives, for messages (``StorageFacts/location``).
    package var location: String? { facts.location }
}

/// A storage whose write can be known durable only after it returned (the JSON file: the flush of its directory
/// may fail after the rename), and whose unreadable data can be moved out of the way. The store asks once, when it
/// is made, whether its storage is one; the others have nothing to confirm and nothing to move.
package protocol DurableStorage: Storage {
    /// Whether an earlier write is not yet known to be durable (its directory flush failed).
    var hasUnconfirmedWrite: Bool { get }

    /// Retries confirming an earlier write's durability; does nothing when none is unconfirmed.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/notDurable`` while it still cannot be confirmed.
    func confirmDurability() throws(DefaultsError)

    /// Moves data that cannot be read out of the way, so the next write stores the store's state in its
    /// place. Returns where it went and the notice for the store's error handler, or `nil` when the data
    /// reads correctly (or there is none) and nothing was moved.
    ///
    /// - Throws: ``DefaultsError`` when moving fails (nothing moved).
    func moveAsideUnreadable() throws(DefaultsError) -> (location: String, notice: DefaultsError)?
}

/// A storage another system holds (etcd): it finds problems on its own, can be out of reach, and can hold values the
/// store cannot take (text another tool stored that is not JSON). The store asks once, when it is made, whether its
/// storage is one; the others find nothing on their own, are always reachable and hold only what the store wrote or
/// validated.
package protocol RemoteStorage: Storage {
    /// What the engine found on its own since it was last asked, for the store's error handler (a remote engine's
    /// conflicts after an outage; a local copy it could not write); the engine signals (as for outside changes) when it
    /// has some.
    func takeNotices() -> [DefaultsError]

    /// Sets what the engine calls once it can write again after a write failed because it could not reach its data (a
    /// remote engine none of whose endpoints answered): the store's save of its unsaved changes, on a thread of the
    /// engine's.
    func whenWritableAgain(_ signal: @escaping @Sendable () -> Void)

    /// Why the member `name` holds a value the store cannot take (another tool stored text that is not JSON in a remote
    /// engine), or `nil` when it holds none such. Such a member is left out of what the engine reports, so the store
    /// serves the default for it; a read that throws throws this error (`decodingFailed`). The engine keeps the member
    /// as it is until the store writes the name. Asked only when a read decodes a name with no stored value (never on a
    /// cached read). For a `secret` value (a secret key's) the error says where the text stops being JSON (line and
    /// column) but quotes no part of it.
    func unreadableValue(named name: String, secret: Bool) -> DefaultsError?

    /// The names of the members that hold a value the store cannot take (see ``unreadableValue(named:secret:)``),
    /// sorted by their UTF-8 bytes.
    func unreadableNames() -> [String]
}

/// The storage of a store opened on `path`: the JSON file there (absolute and resolved, see ``Defaults``), or
/// memory when `path` is `nil`. Whoever opens a store makes its storage (this, or an engine of another target)
/// and hands it to ``Store/init(storage:options:)``. Reads nothing.
package func makeStorage(path: String?, options: Defaults.Options) -> any Storage {
    guard let path else { return MemoryStorage() }
    let schemaPath = Defaults.schemaURL(forStoreAt: URL(fileURLWithPath: path)).path
    return JSONFileStorage(path: path, schemaPath: schemaPath, options: options)
}
