#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    // MARK: Reading the history

    /// The saves the store's history kept, newest first.
    ///
    /// Every save that changes a value is recorded, by every process and tool that writes the store: each key's
    /// value before and after, when, by whom, under a revision that only grows. A store file keeps its history
    /// beside it in `.<name>.history` (JSON Lines, one record a save; see the History article), bounded by
    /// ``Options/history`` (by default the last 100 saves or 1 MiB). A secret key's change is recorded without
    /// its values (``Defaults/HistoryEntry/Value/secret``). A store in memory keeps none: this returns an empty array.
    ///
    /// Reads the history file; takes no lock, so it may run while another process saves (its record, still being
    /// written, is then not seen). A record a crash cut short is skipped, and reported once to the error handler.
    ///
    /// - Throws: ``DefaultsError`` (`readFailed`, `fileTooLarge`, `notARegularFile`) when the history file exists
    ///   but cannot be read.
    public func history() throws(DefaultsError) -> [Defaults.HistoryEntry] {
        try store.historyRecords().reversed().map(\.entry)
    }

    /// The saves that changed `name`, newest first, each with only that key's change; see ``history()-29g0``.
    ///
    /// - Throws: What ``history()-29g0`` throws.
    public func history(forKey name: String) throws(DefaultsError) -> [Defaults.HistoryEntry] {
        try store.historyRecords().reversed().compactMap { record in
            var narrowed = record
            narrowed.changes = record.changes.filter { $0.name.utf8.elementsEqual(name.utf8) }
            return narrowed.changes.isEmpty ? nil : narrowed.entry
        }
    }

    /// The saves that changed `key`, newest first; see ``history(forKey:)-6sdju``.
    ///
    /// - Throws: What ``history()-29g0`` throws.
    public func history<Value>(for key: Key<Value>) throws(DefaultsError) -> [Defaults.HistoryEntry] {
        if key.isSecret { store.markSecret([key.name]) }
        return try history(forKey: key.name)
    }

    // MARK: Reverting

    /// Puts every key a save after `revision` changed back to what it held at `revision`, as one new change.
    ///
    /// The revert is atomic, as ``modify(_:_:)-78wz9`` is: under the store's lock and the file's lock file, the history
    /// is read again (a save another process recorded meanwhile is taken into account), the keys are written durably,
    /// and the history records the change as ``Defaults/HistoryEntry/Kind/revert(toRevision:)``. It is itself a change:
    /// reverting it (or undoing it) brings the values back. Observers are told as for any change. Keys no save after
    /// `revision` changed are not touched; an unsaved change of a reverted key is replaced.
    ///
    /// What a key held at `revision` is the value before the first recorded change after it: a save whose record
    /// was lost (a crash between the store's write and its record) is not undone.
    ///
    /// - Parameters:
    ///   - revision: The revision to go back to: the store as it was right after that save (0: before the first
    ///     save recorded).
    ///   - dryRun: Whether to only say what the revert would change now (from the history and the store's values
    ///     as they are, without the locks), writing nothing. A real run reads both again under the locks.
    /// - Returns: The changes made (or, with `dryRun`, that would be made), sorted by key; empty when every key
    ///   already holds what it held then.
    /// - Throws: ``DefaultsError``: `historyUnavailable` when the store keeps no history, has recorded nothing,
    ///   the records after `revision` were dropped by the bound ("history before revision N is gone"), or a
    ///   secret key would have to be restored (revert the other keys one by one); or what ``modify(_:_:)-78wz9``
    ///   throws. Nothing is written then (`notDurable` alone means the change is written).
    @discardableResult
    public func revert(toRevision revision: Int, dryRun: Bool = false) throws(DefaultsError) -> [Defaults.HistoryEntry
        .Change]
    {
        try reverting { try store.revert(nil, to: .revision(revision), dryRun: dryRun) }
    }

    /// Puts the key `name` back to what it held at `revision`, as one new change; see
    /// ``revert(toRevision:dryRun:)-1e5l3``.
    ///
    /// - Throws: What ``revert(toRevision:dryRun:)-1e5l3`` throws; `reservedKey` for the schema version.
    @discardableResult
    public func revert(forKey name: String, toRevision revision: Int, dryRun: Bool = false) throws(DefaultsError)
        -> [Defaults.HistoryEntry.Change]
    {
        if let refusal = refusalIfAny(name) { throw refusal }
        return try reverting { try store.revert([MemberName(name)], to: .revision(revision), dryRun: dryRun) }
    }

    /// Puts the store back to what it held at `date` (after the last save recorded at or before it), as one new
    /// change; see ``revert(toRevision:dryRun:)-1e5l3``.
    ///
    /// - Throws: What ``revert(toRevision:dryRun:)-1e5l3`` throws; `historyUnavailable` when `date` is before every
    ///   record the history kept and older ones were dropped.
    @discardableResult
    public func revert(to date: Date, dryRun: Bool = false) throws(DefaultsError) -> [Defaults.HistoryEntry.Change] {
        let revision = try revision(at: date)
        return try reverting { try store.revert(nil, to: .revision(revision), dryRun: dryRun) }
    }

    /// Puts the key `name` back to what it held at `date`; see ``revert(to:dryRun:)-74bh6``.
    ///
    /// - Throws: What ``revert(to:dryRun:)-74bh6`` throws; `reservedKey` for the schema version.
    @discardableResult
    public func revert(forKey name: String, to date: Date, dryRun: Bool = false) throws(DefaultsError)
        -> [Defaults.HistoryEntry.Change]
    {
        if let refusal = refusalIfAny(name) { throw refusal }
        let revision = try revision(at: date)
        return try reverting { try store.revert([MemberName(name)], to: .revision(revision), dryRun: dryRun) }
    }

    /// Undoes the last save recorded (by any process): its keys go back to what they held before it, as one
    /// new change. Undoing again undoes the undo. See ``revert(toRevision:dryRun:)-1e5l3``.
    ///
    /// The save taken back is the last one the history holds under the store's lock and the file's lock file:
    /// a save another process recorded while the undo was prepared is the one undone, and no other.
    ///
    /// - Throws: What ``revert(toRevision:dryRun:)-1e5l3`` throws.
    @discardableResult
    public func undo(dryRun: Bool = false) throws(DefaultsError) -> [Defaults.HistoryEntry.Change] {
        try reverting { try store.revert(nil, to: .beforeLastSave, dryRun: dryRun) }
    }

    /// Undoes the last recorded change of the key `name`: it goes back to what it held before that save, as one new
    /// change. See ``revert(toRevision:dryRun:)-1e5l3``; the save is the last of `name` under the locks, as for
    /// ``undo(dryRun:)-9zhy9``.
    ///
    /// - Throws: What ``revert(toRevision:dryRun:)-1e5l3`` throws; `historyUnavailable` when no recorded save changed
    ///   `name`.
    @discardableResult
    public func undo(forKey name: String, dryRun: Bool = false) throws(DefaultsError) -> [Defaults.HistoryEntry.Change]
    {
        if let refusal = refusalIfAny(name) { throw refusal }
        return try reverting { try store.revert([MemberName(name)], to: .beforeLastSave, dryRun: dryRun) }
    }

    /// Runs a revert of the store given no `check`: it then throws only ``DefaultsError``s (its retry is its own),
    /// which this passes on typed. Another error would be a new kind of failure inside the revert: it is reported
    /// as a `DefaultsError` all the same, never dropped.
    private func reverting(
        _ body: () throws -> [Defaults.HistoryEntry.Change]
    ) throws(DefaultsError) -> [Defaults.HistoryEntry.Change] {
        do {
            return try body()
        } catch let error as DefaultsError {
            throw error
        } catch {
            throw DefaultsError(.invalidArgument, "the revert failed: \(error)", path: store.path)
        }
    }

    /// What a revert of the tool goes back to.
    package enum RevertPoint: Sendable {
        /// Before the last save recorded (of the key, with one): ``undo(dryRun:)-9zhy9``,
        /// ``undo(forKey:dryRun:)-3o1re``.
        case beforeLastSave
        /// Right after the save of this revision: ``revert(toRevision:dryRun:)-1e5l3``.
        case revision(Int)
        /// As the store was at this time: ``revert(to:dryRun:)-74bh6``.
        case date(Date)
    }

    /// The reverts and undos above in one call, for the command-line tool, whose `check` sees each key's new value
    /// (compact JSON; `nil` for a removal) before anything is written, under the locks, and refuses the revert by
    /// throwing (the tool checks them against the store's schema).
    ///
    /// - Throws: What the revert or undo throws, or what `check` throws; nothing is written then.
    package func revert(
        forKey name: String?, to point: RevertPoint, dryRun: Bool,
        check: @escaping (_ changes: [(key: String, value: JSONValue?)]) throws -> Void
    ) throws -> [Defaults.HistoryEntry.Change] {
        if let name, let refusal = refusalIfAny(name) { throw refusal }
        let names = name.map { Set([MemberName($0)]) }
        let target: Store.RevertTarget =
            switch point {
            case .beforeLastSave: .beforeLastSave
            case .revision(let revision): .revision(revision)
            case .date(let date): .revision(try revision(at: date))
            }
        return try store.revert(names, to: target, dryRun: dryRun) { changes in
            try check(changes.map { change in (change.name, try change.new.map { try JSONValueBytes.parse($0) }) })
        }
    }

    /// The revision the store was at, at `date`: the last recorded at or before it.
    private func revision(at date: Date) throws(DefaultsError) -> Int {
        let history = try store.readHistory()
        let records = history.records
        guard let milliseconds = HistoryTime.milliseconds(of: date) else {
            // Beyond what a record's time can be: after every record, or before every one.
            if date.timeIntervalSince1970.isNaN {
                throw DefaultsError(
                    .invalidArgument, "the date is not a number (NaN); nothing was written", path: store.path)
            }
            if date.timeIntervalSince1970 > 0 { return records.last?.revision ?? 0 }
            return try revision(before: history)
        }
        if let last = records.last(where: { $0.milliseconds <= milliseconds }) { return last.revision }
        return try revision(before: history)
    }

    /// The revision before every record of `history`: 0, when nothing older was dropped.
    private func revision(before history: StorageHistory) throws(DefaultsError) -> Int {
        let records = history.records
        guard let oldest = records.first else { return 0 }
        guard history.isComplete else {
            throw DefaultsError(
                .historyUnavailable,
                "history before revision \(oldest.revision) is gone, and it is older than that; nothing was written",
                path: store.path)
        }
        return 0
    }
}
