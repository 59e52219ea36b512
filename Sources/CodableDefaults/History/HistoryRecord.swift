#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One save as the history keeps it: values as compact JSON bytes (exact, as stored), one line of JSON in the
/// file's history (see `HistoryLog`), or one record of an etcd prefix's history.
///
/// A line is a JSON object:
/// `{"revision":7,"time":"2026-12-03T04:05:06.789Z","pid":41,"user":"ana","program":"app","host":"box",`
/// `"kind":"save","changes":{"volume":{"old":0.5,"new":0.8},"token":{"secret":"changed"}}}`. A change without
/// `old` added the key, one without `new` removed it; a secret key's change says only `added`, `removed` or
/// `changed`. A revert has `"kind":"revert","to":REVISION`.
package struct HistoryRecord: Sendable, Equatable {
    /// A value before or after a change.
    package enum Value: Sendable, Equatable {
        /// Nothing stored.
        case absent
        /// The stored value, compact JSON.
        case json([UInt8])
        /// A secret key's value: present, not kept.
        case secret
    }

    /// One key's change.
    package struct Change: Sendable, Equatable {
        /// The key.
        package var name: String
        /// Before the save.
        package var old: Value
        /// After the save.
        package var new: Value

        /// A change of `name`.
        package init(name: String, old: Value, new: Value) {
            self.name = name
            self.old = old
            self.new = new
        }

        /// The change of `name` from `old` to `new` (`nil`: absent), the values withheld when `secret`.
        package init(name: String, old: [UInt8]?, new: [UInt8]?, secret: Bool) {
            self.name = name
            self.old = old.map { secret ? .secret : .json($0) } ?? .absent
            self.new = new.map { secret ? .secret : .json($0) } ?? .absent
        }
    }

    /// The revision: 1, 2, … on a store file; etcd's revision of the transaction on etcd.
    package var revision: Int
    /// When, in milliseconds since 1970 (UTC).
    package var milliseconds: Int64
    /// Who.
    package var author: Defaults.HistoryEntry.Author
    /// A save or a revert.
    package var kind: Defaults.HistoryEntry.Kind
    /// The changes, sorted by the names' UTF-8 bytes.
    package var changes: [Change]

    /// A record of these parts; `changes` are sorted by name.
    package init(
        revision: Int, milliseconds: Int64, author: Defaults.HistoryEntry.Author, kind: Defaults.HistoryEntry.Kind,
        changes: [Change]
    ) {
        self.revision = revision
        self.milliseconds = milliseconds
        self.author = author
        self.kind = kind
        self.changes = changes.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The public value: compact JSON parsed into a ``JSONValue``.
    static func value(_ value: Value) -> Defaults.HistoryEntry.Value {
        switch value {
        case .absent: return .absent
        case .secret: return .secret
        case .json(let bytes):
            // The bytes were validated when the record was read (or are what the store wrote); only two member
            // names that differ in Unicode normalization alone, which a JSONValue cannot hold apart, fail here.
            do throws(JSONParseError) {
                return .json(try JSONValueBytes.parse(bytes))
            } catch {
                return .json(.string(String(decoding: bytes, as: UTF8.self)))
            }
        }
    }

    /// The public entry: values parsed into ``JSONValue``s.
    package var entry: Defaults.HistoryEntry {
        let value = Self.value
        return Defaults.HistoryEntry(
            revision: revision, date: Date(timeIntervalSince1970: Double(milliseconds) / 1000), author: author,
            kind: kind,
            changes: changes.map {
                Defaults.HistoryEntry.Change(key: $0.name, oldValue: value($0.old), newValue: value($0.new))
            }
        )
    }

    /// The keys whose change this record keeps without values.
    package var secretNames: Set<String> {
        Set(changes.lazy.filter { $0.old == .secret || $0.new == .secret }.map(\.name))
    }

    /// Withholds the values of the changes of `names`: each says only whether a value was there.
    package mutating func withholdValues(of names: Set<String>) {
        guard !names.isEmpty else { return }
        for index in changes.indices where names.contains(changes[index].name) {
            if changes[index].old != .absent { changes[index].old = .secret }
            if changes[index].new != .absent { changes[index].new = .secret }
        }
    }

    // MARK: The line

    /// The record as one line of compact JSON, without the line break.
    package var line: [UInt8] {
        var out: [UInt8] = []
        func member(_ name: String, _ value: some Sequence<UInt8>, first: Bool = false) {
            if !first { out.append(Mark.comma) }
            JSONParser.appendQuoted(name, to: &out)
            out.append(Mark.colon)
            out.append(contentsOf: value)
        }
        func quoted(_ text: String) -> [UInt8] {
            var bytes: [UInt8] = []
            JSONParser.appendQuoted(text, to: &bytes)
            return bytes
        }
        out.append(Mark.openBrace)
        member("revision", String(revision).utf8, first: true)
        member("time", quoted(HistoryTime.text(milliseconds: milliseconds)))
        member("pid", String(author.processID).utf8)
        member("user", quoted(author.user))
        member("program", quoted(author.program))
        member("host", quoted(author.host))
        switch kind {
        case .save:
            member("kind", quoted("save"))
        case .revert(let target):
            member("kind", quoted("revert"))
            member("to", String(target).utf8)
        }
        var changesObject: [UInt8] = [Mark.openBrace]
        for (index, change) in changes.enumerated() {
            if index > 0 { changesObject.append(Mark.comma) }
            JSONParser.appendQuoted(change.name, to: &changesObject)
            changesObject.append(Mark.colon)
            changesObject.append(contentsOf: Self.object(of: change))
        }
        changesObject.append(Mark.closeBrace)
        member("changes", changesObject)
        out.append(Mark.closeBrace)
        return out
    }

    /// `{"old":…,"new":…}`, or `{"secret":"added|removed|changed"}` for a secret key's change.
    private static func object(of change: Change) -> [UInt8] {
        var out: [UInt8] = [Mark.openBrace]
        if change.old == .secret || change.new == .secret {
            let what = change.old == .absent ? "added" : change.new == .absent ? "removed" : "changed"
            out.append(contentsOf: Array("\"secret\":\"\(what)\"".utf8))
        } else {
            var first = true
            for (name, value) in [("old", change.old), ("new", change.new)] {
                guard case .json(let bytes) = value else { continue }
                if !first { out.append(Mark.comma) }
                first = false
                JSONParser.appendQuoted(name, to: &out)
                out.append(Mark.colon)
                out.append(contentsOf: bytes)
            }
        }
        out.append(Mark.closeBrace)
        return out
    }

    /// Why a line is not a record.
    package struct Malformed: Error {
        /// What is wrong, in a few words.
        package var message: String
        /// The 1-based column in the line where the JSON stops being valid, when it does.
        package var column: Int?
    }

    /// Reads a record from one line (without its line break).
    ///
    /// - Throws: ``Malformed`` for a line that is not valid JSON (a record cut short by a crash) or not a record.
    package init(line: [UInt8]) throws(Malformed) {
        let members: [ParsedMember]
        do {
            members = try JSONParser.parse(line, maxDepth: 1 << 16)
        } catch {
            throw Malformed(message: error.message, column: error.column)
        }
        var fields: [String: [UInt8]] = [:]
        for member in members { fields[member.key] = member.value }
        func string(_ name: String) throws(Malformed) -> String {
            let missing = Malformed(message: "the record has no text \"\(name)\"")
            guard let bytes = fields[name], bytes.first == Mark.quote else { throw missing }
            let value: JSONValue
            do throws(JSONParseError) {
                value = try JSONValueBytes.parse(bytes)
            } catch {
                throw missing
            }
            guard case .string(let text) = value else { throw missing }
            return text
        }
        func object(_ bytes: [UInt8]?, _ what: String) throws(Malformed) -> [ParsedMember] {
            guard let bytes, bytes.first == Mark.openBrace else { throw Malformed(message: "\(what) is not an object") }
            do throws(JSONParseError) {
                return try JSONParser.parse(bytes, maxDepth: 1 << 16)
            } catch {
                throw Malformed(message: "\(what) is not an object")
            }
        }
        func integer(_ name: String) throws(Malformed) -> Int {
            guard let bytes = fields[name], let number = Int(String(decoding: bytes, as: UTF8.self)) else {
                throw Malformed(message: "the record has no whole number \"\(name)\"")
            }
            return number
        }
        revision = try integer("revision")
        guard let time = HistoryTime.milliseconds(text: try string("time")) else {
            throw Malformed(message: "the record's \"time\" is not a UTC time")
        }
        milliseconds = time
        author = Defaults.HistoryEntry.Author(
            processID: Int32(truncatingIfNeeded: try integer("pid")), user: try string("user"),
            program: try string("program"), host: try string("host"))
        switch try string("kind") {
        case "save": kind = .save
        case "revert": kind = .revert(toRevision: try integer("to"))
        default: throw Malformed(message: "the record's \"kind\" is neither \"save\" nor \"revert\"")
        }
        let changeMembers = try object(fields["changes"], "the record's \"changes\"")
        var changes: [Change] = []
        for member in changeMembers {
            let parts = try object(member.value, "the change of \"\(member.key)\"")
            var old = Value.absent
            var new = Value.absent
            for part in parts {
                switch part.key {
                case "old": old = .json(part.value)
                case "new": new = .json(part.value)
                case "secret":
                    switch String(decoding: part.value, as: UTF8.self) {
                    case "\"added\"": new = .secret
                    case "\"removed\"": old = .secret
                    default:
                        old = .secret
                        new = .secret
                    }
                default: continue
                }
            }
            changes.append(Change(name: member.key, old: old, new: new))
        }
        self.changes = changes
    }
}

/// The ASCII bytes a record's line is built of.
private enum Mark {
    static let quote = UInt8(ascii: "\"")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
}

/// UTC times as the history writes them: `2026-12-03T04:05:06.789Z`, computed without the platform's calendar.
enum HistoryTime {
    /// Milliseconds since 1970 now.
    static func now() -> Int64 { milliseconds(of: Date()) ?? 0 }

    /// The millisecond `date` falls in, since 1970: the whole milliseconds, where a date made from a millisecond
    /// (`Date(timeIntervalSince1970: Double(ms) / 1000)`, as a record's ``Defaults/HistoryEntry/date`` is) gives that
    /// millisecond back, before 1970 too, though its `Double` is a hair below it. `nil` for a date that is not a
    /// number or beyond what milliseconds in an `Int64` hold (about 292 million years from 1970).
    static func milliseconds(of date: Date) -> Int64? {
        let scaled = date.timeIntervalSince1970 * 1000
        guard scaled.isFinite else { return nil }
        let nearest = scaled.rounded()
        // A hair off a whole millisecond is that millisecond: a `Date` keeps its time from 2001 as a `Double`, so
        // the seconds since 1970 of a date made from a millisecond come back a few of that `Double`'s units off.
        let hair = max(date.timeIntervalSinceReferenceDate.ulp * 1000, nearest.ulp) * 8
        let value = abs(scaled - nearest) <= hair ? nearest : scaled.rounded(.down)
        guard value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0 else { return nil }
        return Int64(value)
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    static func text(milliseconds: Int64) -> String {
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, ms) = dayMilliseconds < 0 ? (days - 1, dayMilliseconds + 86_400_000) : (days, dayMilliseconds)
        let (year, month, dayOfMonth) = civil(days: day)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        func three(_ value: Int64) -> String { value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        let paddedYear = String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText
        return "\(paddedYear)-\(two(month))-\(two(dayOfMonth))T\(two(ms / 3_600_000)):\(two(ms / 60_000 % 60))"
            + ":\(two(ms / 1000 % 60)).\(three(ms % 1000))Z"
    }

    /// The milliseconds of a UTC time written `YYYY-MM-DDTHH:MM:SSZ`, with an optional fraction of a second of one
    /// to nine digits (to the millisecond, rounded down); `nil` for any other text, or a day or time that does not
    /// exist (`2026-02-30`, `24:00:00`).
    static func milliseconds(text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 30, bytes.last == UInt8(ascii: "Z") else { return nil }
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
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21, let digits = number(20..<(bytes.count - 1))
            else { return nil }
            let count = bytes.count - 21
            fraction = count >= 3 ? digits / pow10(count - 3) : digits * pow10(3 - count)
        }
        let days = Self.days(year: year, month: month, day: day)
        // A day past the month's end (February 30) comes back as another date.
        guard civil(days: days) == (year, month, day) else { return nil }
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + fraction
    }

    private static func pow10(_ exponent: Int) -> Int64 { (0..<exponent).reduce(1) { value, _ in value * 10 } }

    /// Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day counted from 1970-01-01.
    static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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
