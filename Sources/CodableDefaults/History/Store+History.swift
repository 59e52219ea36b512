extension Store {
    /// The history, its records oldest first. A record that could not be read (cut short by a crash) is skipped
    /// and reported to the error handler, once.
    ///
    /// - Throws: ``DefaultsError`` when the history exists but cannot be read.
    func readHistory() throws(DefaultsError) -> StorageHistory {
        var history = try storage.history()
        if !history.notices.isEmpty {
            let fresh = state.withLock { state in
                history.notices.filter { state.errors.reportedHistoryNotices.insert($0.description).inserted }
            }
            for notice in fresh { report(notice) }
        }
        history.records.sort { $0.revision < $1.revision }
        // A key this program uses as secret, or that a record marks secret, is secret in every record (a writer
        // that did not know it recorded its values), and for this store from now on (a revert of it records no
        // value, and returns none).
        let marked = history.records.reduce(into: Set<String>()) { $0.formUnion($1.secretNames) }
        let named = Set(history.records.lazy.flatMap { $0.changes.map(\.name) })
        let secret: Set<String> = state.withLock { state in
            for name in marked { state.cell(named: name).isSecret = true }
            return Set(named.filter { state.existingCell(named: $0)?.isSecret == true })
        }
        if !secret.isEmpty {
            for index in history.records.indices { history.records[index].withholdValues(of: secret) }
        }
        return history
    }

    /// The history's records, oldest first; see ``readHistory()``.
    func historyRecords() throws(DefaultsError) -> [HistoryRecord] { try readHistory().records }

    /// What a revert puts back.
    enum RevertTarget: Sendable, Equatable {
        /// The store as it was right after the save recorded at this revision (0: before every save recorded).
        case revision(Int)
        /// The store as it was before the last save recorded (of one of the keys, when the revert names keys): the
        /// last under the locks, as the history read there says, so that an undo racing other writers takes back
        /// exactly one save, never theirs.
        case beforeLastSave
    }

    /// Puts `names` (every recorded key when `nil`) back to what they held at `target`, as one atomic change recorded
    /// as a revert (see ``Defaults/revert(toRevision:dryRun:)-1e5l3``). Returns the changes made; with `dryRun`, the
    /// changes it would make now, from the history and the store's values as they are (without the locks), and writes
    /// nothing.
    ///
    /// `check`, when given, sees each key's new value (compact JSON; `nil` for a removal) before anything is
    /// written, under the locks (or, with `dryRun`, as the dry run finds them), and refuses the revert by throwing.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/historyUnavailable`` when the history cannot say what a key
    ///   held then; what ``modify(_:secretNames:as:resealing:opensSealed:namesUnderLock:_:)`` or `check` throws. Nothing is written then.
    func revert(
        _ names: Set<MemberName>?, to target: RevertTarget, dryRun: Bool = false,
        check: ((_ changes: [(name: String, new: [UInt8]?)]) throws -> Void)? = nil
    ) throws -> [Defaults.HistoryEntry.Change] {
        // The keys to restore are found from the history before the locks are taken; under them, the history is
        // read again, and the revert starts over (the target found anew) when another writer recorded a save in
        // between.
        for _ in 0..<8 {
            let history = try readHistory()
            let records = history.records
            guard let latest = records.last?.revision else {
                throw DefaultsError(
                    .historyUnavailable,
                    facts.isPersistent
                        ? "the store's history has no saves to revert (it is off, or nothing was saved since it "
                            + "was turned on); nothing was written"
                        : "a store in memory keeps no history; nothing was written", path: path)
            }
            let revision = try Self.revision(of: target, names: names, in: history, path: path)
            guard revision <= latest else {
                throw DefaultsError(
                    .invalidArgument,
                    "revision \(revision) is newer than the last one the history recorded, \(latest); nothing was "
                        + "written", path: path)
            }
            let wanted = try Self.values(at: revision, of: names, in: history, path: path)
            if wanted.isEmpty { return [] }
            guard wanted.count <= facts.maximumKeysPerUpdate else {
                throw DefaultsError(
                    .historyUnavailable,
                    "the revert would change \(wanted.count) keys, more than one update here takes "
                        + "(\(facts.maximumKeysPerUpdate)); revert fewer keys (key by key); nothing was written",
                    path: path)
            }
            let ordered = wanted.keys.sorted { $0.string.utf8.lexicographicallyPrecedes($1.string.utf8) }
            var made: [(name: String, old: [UInt8]?, new: [UInt8]?)] = []
            if dryRun {
                let stored: [StoredValue] = state.withLock { state in
                    ordered.map { state.cell(named: $0.string).stored }
                }
                for (name, value) in zip(ordered, stored) {
                    let current = try fragment(of: value, name: name.string)
                    if current != wanted[name]! { made.append((name.string, current, wanted[name]!)) }
                }
                try check?(made.map { ($0.name, $0.new) })
            } else {
                do {
                    try modify(ordered.map(\.string), as: .revert(toRevision: revision)) { fragments in
                        guard try storage.history().records.map(\.revision).max() == latest else { throw Retry() }
                        made = []
                        for (index, name) in ordered.enumerated() where fragments[index] != wanted[name]! {
                            made.append((name.string, fragments[index], wanted[name]!))
                        }
                        try check?(made.map { ($0.name, $0.new) })
                        for (index, name) in ordered.enumerated() { fragments[index] = wanted[name]! }
                    }
                } catch is Retry {
                    continue
                }
            }
            let secret: [Bool] = state.withLock { state in
                made.map { state.existingCell(named: $0.name)?.isSecret ?? false }
            }
            return zip(made, secret).map { made, secret in
                let change = HistoryRecord.Change(name: made.name, old: made.old, new: made.new, secret: secret)
                return Defaults.HistoryEntry.Change(
                    key: made.name, oldValue: HistoryRecord.value(change.old), newValue: HistoryRecord.value(change.new)
                )
            }
        }
        throw DefaultsError(
            .lockTimeout, "other writers kept recording saves while the revert was prepared; nothing was written",
            path: path)
    }

    /// The revision `target` stands for in `history`.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidArgument`` for a revision below 0;
    ///   ``DefaultsError/Code-swift.struct/historyUnavailable`` when no recorded save changed one of `names`, or
    ///   a record has a revision no save can have.
    static func revision(
        of target: RevertTarget, names: Set<MemberName>?, in history: StorageHistory, path: String?
    ) throws(DefaultsError) -> Int {
        switch target {
        case .revision(let revision):
            guard revision >= 0 else {
                throw DefaultsError(
                    .invalidArgument, "revision \(revision) is below 0, where revisions start; nothing was written",
                    path: path)
            }
            return revision
        case .beforeLastSave:
            let last = history.records.last { record in
                names.map { names in record.changes.contains { names.contains(MemberName($0.name)) } } ?? true
            }
            guard let last else {
                throw DefaultsError(
                    .historyUnavailable, "the history has no change of the key to undo; nothing was written",
                    path: path, key: names?.count == 1 ? names!.first!.string : nil)
            }
            guard last.revision >= 1 else {
                throw DefaultsError(
                    .historyUnavailable,
                    "the history's last record has revision \(last.revision), which no save can have; nothing was "
                        + "written", path: path)
            }
            return last.revision - 1
        }
    }

    /// Another writer recorded a save between reading the history and taking the locks.
    private struct Retry: Error {}

    /// What each of `names` (every key a record after `target` changed, when `nil`) held at revision `target`:
    /// the value before the first recorded change after it (`nil`: absent), keyed by the names' bytes (two names
    /// that differ only in Unicode normalization are two keys). Keys no record after `target` changed are left
    /// out: they hold now what they held then.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/historyUnavailable`` when records after `target` were dropped,
    ///   a line after it holds no record (the history cannot say what its save changed), a record has a revision
    ///   no save can have, or a secret key's value is needed.
    static func values(
        at target: Int, of names: Set<MemberName>?, in history: StorageHistory, path: String?
    ) throws(DefaultsError) -> [MemberName: [UInt8]?] {
        let records = history.records
        if let bad = records.first(where: { $0.revision < 1 }) {
            throw DefaultsError(
                .historyUnavailable,
                "the history holds a record of revision \(bad.revision), which no save can have; nothing was written",
                path: path)
        }
        if let unreadable = history.unreadable.first(where: { $0.after >= target }) {
            let place =
                unreadable.notice.line.map { " (line \($0) of \(unreadable.notice.path ?? "the history"))" } ?? ""
            throw DefaultsError(
                .historyUnavailable,
                "a line of the history after revision \(target) holds no record\(place), so the history cannot say what "
                    + "to restore; nothing was written", path: path)
        }
        guard let oldest = records.first, target < records.last!.revision else { return [:] }
        guard history.isComplete || target >= oldest.revision - 1 else {
            throw DefaultsError(
                .historyUnavailable,
                "history before revision \(oldest.revision) is gone (its records were dropped by the history's "
                    + "bound, or compacted away by the storage); nothing was written", path: path)
        }
        var values: [MemberName: [UInt8]?] = [:]
        for record in records where record.revision > target {
            for change in record.changes where names.map({ $0.contains(MemberName(change.name)) }) ?? true {
                let name = MemberName(change.name)
                guard values[name] == nil else { continue }
                switch change.old {
                case .absent: values[name] = .some(nil)
                case .json(let bytes): values[name] = .some(bytes)
                case .secret:
                    throw DefaultsError(
                        .historyUnavailable,
                        "the history keeps no value of a secret key, so it cannot be put back; nothing was written",
                        path: path, key: change.name)
                }
            }
        }
        return values
    }
}
