import CodableDefaults
import Foundation

/// How `history` prints a store's history, and the UTC times it prints and `undo --to` takes.
///
/// A save is a block: a header line, `REVISION  TIME  USER@HOST  PROGRAM[PID]`, followed by `  (revert to N)`
/// for a revert, then a line per key it changed, as ``DiffText`` writes them (a secret value as `<secret>`).
/// With `--json`, a save is one line of JSON (JSON Lines), the fields of the history's own records:
/// `{"revision":7,"time":"2026-12-03T04:05:06.789Z","pid":41,"user":"ana","program":"app","host":"box",`
/// `"kind":"save","changes":{"volume":{"old":0.5,"new":0.8},"token":{"secret":"changed"}}}`.
enum HistoryText {
    /// The block of `entry`: its header line and a line per change, each ending with a newline.
    static func block(_ entry: HistoryEntry) -> String {
        var header = "\(entry.revision)  \(time(entry.date))  "
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
    static func jsonLine(_ entry: HistoryEntry) -> String {
        func quoted(_ text: String) -> String { JSONText.compact(.string(text)) }
        var line = "{\"revision\":\(entry.revision),\"time\":\(quoted(time(entry.date)))"
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

    /// The keys any of `history`'s changes shows as secret (``HistoryEntry/Value/secret``), sorted by UTF-8 bytes.
    static func secretKeys(in history: [HistoryEntry]) -> [String] {
        var keys: [String] = []
        var seen = Set<[UInt8]>()
        for entry in history {
            for change in entry.changes where change.oldValue == .secret || change.newValue == .secret {
                if seen.insert(Array(change.key.utf8)).inserted { keys.append(change.key) }
            }
        }
        return keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// `changes` with the values of `secretKeys` written as ``HistoryEntry/Value/secret``.
    static func withholding(_ secretKeys: [String], in changes: [HistoryEntry.Change]) -> [HistoryEntry.Change] {
        let secret = Set(secretKeys.map { Array($0.utf8) })
        return changes.map { change in
            guard secret.contains(Array(change.key.utf8)) else { return change }
            var withheld = change
            if change.oldValue != .absent { withheld.oldValue = .secret }
            if change.newValue != .absent { withheld.newValue = .secret }
            return withheld
        }
    }

    // MARK: Times

    /// The milliseconds since 1970 of a history entry's date (which is to the millisecond).
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date of `milliseconds` since 1970 as the library's ``Defaults/revert(to:dryRun:)`` reads it: it takes the
    /// milliseconds rounded down, so the date is half a millisecond later, which no rounding of a `Double` moves
    /// across a millisecond.
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: (Double(milliseconds) + 0.5) / 1000)
    }

    /// `date` in UTC, to the millisecond: `2026-12-03T04:05:06.789Z`.
    static func time(_ date: Date) -> String {
        let (days, dayMilliseconds) = milliseconds(date).quotientAndRemainder(dividingBy: 86_400_000)
        let (day, ms) = dayMilliseconds < 0 ? (days - 1, dayMilliseconds + 86_400_000) : (days, dayMilliseconds)
        let (year, month, dayOfMonth) = civil(days: day)
        func padded(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(dayOfMonth, 2))T\(padded(ms / 3_600_000, 2))"
            + ":\(padded(ms / 60_000 % 60, 2)):\(padded(ms / 1000 % 60, 2)).\(padded(ms % 1000, 3))Z"
    }

    /// The milliseconds since 1970 of a UTC time written `YYYY-MM-DDTHH:MM:SSZ`, or with one to three digits of
    /// a second's fraction (`2026-12-03T04:05:06.789Z`); `nil` for any other text, or a day or time that does not
    /// exist (`2026-02-30`, `24:00:00`).
    static func milliseconds(parsing text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20 || (22...24).contains(bytes.count), bytes.last == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), day >= 1, hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction: Int64 = 0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), let digits = number(20..<(bytes.count - 1)) else { return nil }
            fraction = digits * [100, 10, 1][bytes.count - 22]
        }
        let days = days(year: year, month: month, day: day)
        // A day past the month's end (February 30) comes back as another date.
        guard civil(days: days) == (year, month, day) else { return nil }
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + fraction
    }

    /// Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day counted from 1970-01-01.
    private static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
