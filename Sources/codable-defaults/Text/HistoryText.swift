import CodableDefaults
import Foundation

/// How `history` prints a store's history (its times as the library writes them,
/// ``CodableDefaults/Defaults/HistoryEntry/timeText(_:)``).
///
/// A save is a block: a header line, `REVISION  TIME  USER@HOST  PROGRAM[PID]`, followed by `  (revert to N)`
/// for a revert, then a line per key it changed, as ``DiffText`` writes them (a secret value as `<secret>`).
/// With `--json`, a save is one line of JSON (JSON Lines), the fields of the history's own records:
/// `{"revision":7,"time":"2026-12-03T04:05:06.789Z","pid":41,"user":"ana","program":"app","host":"box",`
/// `"kind":"save","changes":{"volume":{"old":0.5,"new":0.8},"token":{"secret":"changed"}}}`.
enum HistoryText {
    /// The block of `entry`: its header line and a line per change, each ending with a newline.
    static func block(_ entry: Defaults.HistoryEntry) -> String {
        var header = "\(entry.revision)  \(Defaults.HistoryEntry.timeText(entry.date))  "
        header += "\(KeyText.line(entry.author.user))@\(KeyText.line(entry.author.host))  "
        header += "\(KeyText.line(entry.author.program))[\(entry.author.processID)]"
        if case .revert(let revision) = entry.kind { header += "  (revert to \(revision))" }
        return header + "\n" + DiffText.lines(entry.changes).joined()
    }

    /// `entry` as one line of compact JSON, with a final newline.
    ///
    /// The members, in this order: `revision`, `time` (UTC, to the millisecond), `pid`, `user`, `program`, `host`,
    /// `kind` (`"save"` or `"revert"`), `to` (a revert's revision only), and `changes`: an object with a member
    /// per key, sorted by the keys' UTF-8 bytes, holding `old` (absent when the save added the key) and `new`
    /// (absent when it removed it), each the value as compact JSON; or, for a secret key, only
    /// `"secret":"added"`, `"removed"` or `"changed"`. Written by hand, so two keys that differ only in Unicode
    /// normalization stay two members.
    static func jsonLine(_ entry: Defaults.HistoryEntry) -> String {
        func quoted(_ text: String) -> String { JSONText.compact(.string(text)) }
        var line = "{\"revision\":\(entry.revision),\"time\":\(quoted(Defaults.HistoryEntry.timeText(entry.date)))"
        line += ",\"pid\":\(entry.author.processID),\"user\":\(quoted(entry.author.user))"
        line += ",\"program\":\(quoted(entry.author.program)),\"host\":\(quoted(entry.author.host))"
        switch entry.kind {
        case .save: line += ",\"kind\":\"save\""
        case .revert(let revision): line += ",\"kind\":\"revert\",\"to\":\(revision)"
        }
        let changes = entry.changes.map { change -> String in
            let parts: String
            if change.oldValue == .secret || change.newValue == .secret {
                let what = change.oldValue == .absent ? "added" : change.newValue == .absent ? "removed" : "changed"
                parts = "\"secret\":\"\(what)\""
            } else {
                var members: [String] = []
                if case .json(let old) = change.oldValue { members.append("\"old\":" + JSONText.compact(old)) }
                if case .json(let new) = change.newValue { members.append("\"new\":" + JSONText.compact(new)) }
                parts = members.joined(separator: ",")
            }
            return quoted(change.key) + ":{" + parts + "}"
        }
        return line + ",\"changes\":{" + changes.joined(separator: ",") + "}}\n"
    }

    /// The keys any of `history`'s changes shows as secret (``CodableDefaults/Defaults/HistoryEntry/Value/secret``),
    /// sorted by UTF-8 bytes.
    static func secretKeys(in history: [Defaults.HistoryEntry]) -> [String] {
        var keys: [String] = []
        var seen = Set<[UInt8]>()
        for entry in history {
            for change in entry.changes where change.oldValue == .secret || change.newValue == .secret {
                if seen.insert(Array(change.key.utf8)).inserted { keys.append(change.key) }
            }
        }
        return keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// `changes` with the values of `secretKeys` written as ``CodableDefaults/Defaults/HistoryEntry/Value/secret``.
    static func withholding(
        _ secretKeys: [String], in changes: [Defaults.HistoryEntry.Change]
    ) -> [Defaults.HistoryEntry.Change] {
        let secret = Set(secretKeys.map { Array($0.utf8) })
        return changes.map { change in
            guard secret.contains(Array(change.key.utf8)) else { return change }
            var withheld = change
            if change.oldValue != .absent { withheld.oldValue = .secret }
            if change.newValue != .absent { withheld.newValue = .secret }
            return withheld
        }
    }
}
