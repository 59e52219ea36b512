import CodableDefaults

/// What `undo` changes, computed from a store's history (``Defaults/history()``) without writing, for
/// `undo --dry-run`: by the rules of ``Defaults/revert(toRevision:)`` and its siblings, which compute it again
/// under the store's lock in a real run.
///
/// The revision to go back to is the one before the last save (`undo`), before the last save that changed KEY
/// (`undo KEY`), the one given (`--to REVISION`), or the last one recorded at or before a time (`--to TIME`). A
/// key's value at revision R is the old value of its first recorded change after R; keys no save after R changed
/// are not touched. The history cannot say (``DefaultsError/Code-swift.struct/historyUnavailable``, with the
/// library's words) when it has no saves, when records after R were dropped, or when a secret key's value would
/// have to be put back.
enum RevertPlan {
    /// Where `undo` goes back to.
    enum Target: Sendable, Equatable {
        /// Before the last save (of KEY, with one).
        case last
        /// Right after the save of this revision (0: before the first).
        case revision(Int)
        /// As the store was at this time, in milliseconds since 1970 (UTC).
        case time(milliseconds: Int64)
    }

    /// The revision `target` names, in `history` (newest first), for `key` (every key when `nil`).
    ///
    /// - Throws: ``DefaultsError`` (`historyUnavailable`) when the history cannot say, as the library throws it;
    ///   `path` is the store's, for the message.
    static func revision(
        _ target: Target, key: String?, in history: [HistoryEntry], path: String?
    ) throws(DefaultsError) -> Int {
        switch target {
        case .revision(let revision):
            return revision
        case .last:
            guard let key else { return (history.first?.revision ?? 1) - 1 }
            guard let last = history.first(where: { $0.changes.contains { sameKey($0.key, key) } }) else {
                throw DefaultsError(
                    .historyUnavailable, "the history has no change of the key to undo; nothing was written",
                    path: path, key: key)
            }
            return last.revision - 1
        case .time(let milliseconds):
            if let last = history.first(where: { HistoryText.milliseconds($0.date) <= milliseconds }) {
                return last.revision
            }
            guard let oldest = history.last, oldest.revision != 1 else { return 0 }
            throw DefaultsError(
                .historyUnavailable,
                "history before revision \(oldest.revision) is gone, and it is older than that; nothing was written",
                path: path)
        }
    }

    /// What each key to restore (`key`, or every key a save after `revision` changed) held at `revision`, sorted
    /// by the keys' UTF-8 bytes: its value, or `nil` when it had none.
    ///
    /// - Throws: ``DefaultsError`` (`historyUnavailable`) when the history has no saves, when records after
    ///   `revision` were dropped, or a secret key's value is needed.
    static func values(
        at revision: Int, of key: String?, in history: [HistoryEntry], path: String?
    ) throws(DefaultsError) -> [(key: String, value: JSONValue?)] {
        guard let latest = history.first?.revision, let oldest = history.last?.revision else {
            throw DefaultsError(
                .historyUnavailable,
                "the store's history has no saves to revert (it is off, or nothing was saved since it was turned "
                    + "on); nothing was written", path: path)
        }
        guard revision < latest else { return [] }
        guard revision >= oldest - 1 else {
            throw DefaultsError(
                .historyUnavailable,
                "history before revision \(oldest) is gone (the history keeps its newest saves only); nothing was "
                    + "written", path: path)
        }
        var values: [(key: String, value: JSONValue?)] = []
        var seen = Set<[UInt8]>()
        for entry in history.reversed() where entry.revision > revision {
            for change in entry.changes where key.map({ sameKey(change.key, $0) }) ?? true {
                guard seen.insert(Array(change.key.utf8)).inserted else { continue }
                switch change.oldValue {
                case .absent: values.append((change.key, nil))
                case .json(let value): values.append((change.key, value))
                case .secret:
                    throw DefaultsError(
                        .historyUnavailable,
                        "the history keeps no value of a secret key, so it cannot be put back; nothing was written",
                        path: path, key: change.key)
                }
            }
        }
        return values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// Whether two keys are the same key: byte for byte, as the store tells keys apart.
    private static func sameKey(_ one: String, _ other: String) -> Bool {
        one.utf8.elementsEqual(other.utf8)
    }
}
