import CodableDefaults

/// The lines of `diff` and of a dry run: one per key whose stored value differs between two stores.
///
/// Each line is a mark, a space, the key as `keys` prints it (``KeyText/line(_:)``: a JSON string when it
/// would be ambiguous, so it never holds a tab), a tab, and the values as compact JSON:
///
/// - `+ KEY<TAB>NEW`: the key has a value only in the new store;
/// - `- KEY<TAB>OLD`: only in the old store;
/// - `~ KEY<TAB>OLD → NEW`: in both, with values that are not equal.
///
/// Lines are sorted by the keys' UTF-8 bytes, the store file's order. Keys are told apart byte for byte, as the store
/// tells them (two keys that differ only in Unicode normalization are two keys). Values are compared as the library
/// compares ``CodableDefaults/JSONValue``s: numbers by value (`1`, `1.0` and `1e0` are equal), objects whatever the
/// order of their members, strings as Swift compares them (by canonical equivalence). A value only spelled otherwise is
/// no difference.
enum DiffText {
    /// A key whose stored value differs between two stores: `old` is `nil` when the key is only in the new one,
    /// `new` when it is only in the old one.
    struct Change {
        /// The key.
        let key: String
        /// Its value in the old store, or `nil` when it has none there.
        let old: JSONValue?
        /// Its value in the new store, or `nil` when it has none there.
        let new: JSONValue?
    }

    /// The lines from the members of `old` to those of `new`, each list sorted by the keys' UTF-8 bytes (as
    /// ``Tool/storedMembers(_:includingReserved:)`` gives them), each line ending with a newline.
    /// The values of the keys `isSecret` says are secret are written `<secret>`: the line says that such a key
    /// was added, removed or changed, never its values.
    static func lines(
        from old: [(key: String, value: JSONValue)], to new: [(key: String, value: JSONValue)],
        isSecret: (String) -> Bool = { _ in false }
    ) -> [String] {
        lines(changes(from: old, to: new), isSecret: isSecret)
    }

    /// The line of each change, in the order given, each ending with a newline (a change with neither value
    /// has none); the values of the keys `isSecret` says are secret written `<secret>`.
    static func lines(_ changes: [Change], isSecret: (String) -> Bool = { _ in false }) -> [String] {
        changes.compactMap { change in
            let secret = isSecret(change.key)
            func shown(_ value: JSONValue?) -> String? {
                value.map { secret ? Tool.secretPlaceholder : JSONText.compact($0) }
            }
            return line(change.key, shown(change.old), shown(change.new))
        }
    }

    /// The line of each change a store's history recorded (or a revert made), in the order given, as the lines of
    /// `diff` are written; a secret value (``CodableDefaults/Defaults/HistoryEntry/Value/secret``) is written
    /// `<secret>` (not JSON, so a script tells it apart), as `explain` writes one.
    static func lines(_ changes: [Defaults.HistoryEntry.Change]) -> [String] {
        changes.compactMap { change in line(change.key, text(of: change.oldValue), text(of: change.newValue)) }
    }

    /// A history value as a line shows it: compact JSON, `<secret>`, or `nil` when absent.
    private static func text(of value: Defaults.HistoryEntry.Value) -> String? {
        switch value {
        case .absent: nil
        case .json(let value): JSONText.compact(value)
        case .secret: "<secret>"
        }
    }

    /// The keys whose values differ from the members of `old` to those of `new`, each list sorted by the keys'
    /// UTF-8 bytes; the changes are in that order too.
    static func changes(
        from old: [(key: String, value: JSONValue)], to new: [(key: String, value: JSONValue)]
    ) -> [Change] {
        var changes: [Change] = []
        var oldIndex = old.startIndex
        var newIndex = new.startIndex
        while oldIndex < old.endIndex || newIndex < new.endIndex {
            let oldMember = oldIndex < old.endIndex ? old[oldIndex] : nil
            let newMember = newIndex < new.endIndex ? new[newIndex] : nil
            switch (oldMember, newMember) {
            case (let removed?, let added?) where removed.key.utf8.elementsEqual(added.key.utf8):
                if removed.value != added.value {
                    changes.append(Change(key: removed.key, old: removed.value, new: added.value))
                }
                oldIndex += 1
                newIndex += 1
            case (let removed?, let added?) where removed.key.utf8.lexicographicallyPrecedes(added.key.utf8):
                changes.append(Change(key: removed.key, old: removed.value, new: nil))
                oldIndex += 1
            case (_, let added?):
                changes.append(Change(key: added.key, old: nil, new: added.value))
                newIndex += 1
            case (let removed?, nil):
                changes.append(Change(key: removed.key, old: removed.value, new: nil))
                oldIndex += 1
            case (nil, nil):
                return changes
            }
        }
        return changes
    }

    /// The line of `key` going from `old` to `new` (values as they are printed; `nil`: no value), or `nil`
    /// when it has neither.
    private static func line(_ key: String, _ old: String?, _ new: String?) -> String? {
        switch (old, new) {
        case (let old?, let new?): line("~", key, old + " → " + new)
        case (let old?, nil): line("-", key, old)
        case (nil, let new?): line("+", key, new)
        case (nil, nil): nil
        }
    }

    /// One line: the mark, the key, a tab and the values.
    private static func line(_ mark: String, _ key: String, _ values: String) -> String {
        "\(mark) \(KeyText.line(key))\t\(values)\n"
    }
}
