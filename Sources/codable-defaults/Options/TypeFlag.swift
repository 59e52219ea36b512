import CodableDefaults
import Foundation

/// A type flag, spelled as `defaults(1)` spells it: `-int 5`, `-array a b c`, `-dict-add k v`.
///
/// A command takes one when its last argument is declared `typedValues` (`write FILE KEY [-TYPE] VALUE...`). The
/// flag follows the command's other arguments and ends the options: every argument after it is one of its values,
/// taken as it is.
enum TypeFlag: String, CaseIterable, Sendable {
    case int, float, bool, string, date, data, array, dict
    case arrayAdd = "array-add"
    case dictAdd = "dict-add"

    /// The flag for an argument (`-int`, `-integer`, `-bool`, `-boolean`, ...), or `nil` when it is none.
    init?(argument: String) {
        guard argument.hasPrefix("-"), !argument.hasPrefix("--") else { return nil }
        let name = argument.dropFirst()
        switch name {
        case "integer": self = .int
        case "boolean": self = .bool
        default:
            guard let flag = TypeFlag(rawValue: String(name)) else { return nil }
            self = flag
        }
    }

    /// The flag as written on a command line.
    var spelling: String { "-" + rawValue }

    /// The command line of `command` (a command that takes a type flag) with the flag in its place, for messages:
    /// `write FILE KEY -int VALUE`.
    func usage(in command: CommandConfiguration) -> String {
        let before = command.arguments.prefix { $0.arity != .typedValues }.map(\.synopsis)
        return ([command.name] + before + [spelling, valueSynopsis]).joined(separator: " ")
    }

    /// The values the flag takes, for messages.
    var valueSynopsis: String {
        switch self {
        case .array, .arrayAdd: return "VALUE..."
        case .dict, .dictAdd: return "KEY VALUE..."
        default: return "VALUE"
        }
    }
}

/// A value `write` stores, converted from the arguments of a type flag.
enum TypedValue: Sendable {
    /// Stored as this JSON value.
    case json(JSONValue)
    /// Stored as a `Date`, with the library's encoding (its `timeIntervalSinceReferenceDate`).
    case date(Date)
    /// Stored as `Data`, with the library's encoding (a Base64 string).
    case data(Data)
    /// Appended to the array stored under the key (a missing key starts an empty array).
    case arrayAdd([JSONValue])
    /// Merged into the object stored under the key (a missing key starts an empty object).
    case dictAdd([(String, JSONValue)])

    /// Converts the values of `flag`.
    ///
    /// - Throws: A usage error of `write` naming the flag and the value it cannot take.
    init(_ flag: TypeFlag, _ values: [String]) throws(ToolError) {
        func one() throws(ToolError) -> String {
            guard let value = values.first else {
                throw .usage("missing VALUE after \(flag.spelling)")
            }
            if values.count > 1 {
                throw .usage(
                    "\(flag.spelling) takes one VALUE; unexpected argument '\(values[1])'")
            }
            return value
        }
        func refuse(_ value: String, _ expected: String) -> ToolError {
            .usage("\(flag.spelling) \(shellQuoted(value)): \(expected)")
        }
        switch flag {
        case .int:
            let text = try one()
            guard let number = Self.integer(text) else {
                throw refuse(text, "not an integer (digits, with an optional sign)")
            }
            self = .json(.number(number))
        case .float:
            let text = try one()
            guard let number = Self.number(text) else {
                throw refuse(text, "not a number (as in 1.5, -2, 1e3)")
            }
            self = .json(.number(number))
        case .bool:
            let text = try one()
            switch text.lowercased() {
            case "yes", "true", "1": self = .json(.bool(true))
            case "no", "false", "0": self = .json(.bool(false))
            default: throw refuse(text, "not a boolean (YES, NO, true, false, 1 or 0, in any case)")
            }
        case .string:
            self = .json(.string(try one()))
        case .date:
            let text = try one()
            guard let date = Self.date(text) else {
                throw refuse(
                    text,
                    "not an ISO 8601 date and time with a time zone that exists (as in 2026-12-01T10:00:00Z)")
            }
            self = .date(date)
        case .data:
            let text = try one()
            guard let data = Self.hexData(text) else {
                throw refuse(text, "not hexadecimal bytes (an even number of 0-9, a-f, as in 48656c6c6f)")
            }
            self = .data(data)
        case .array:
            self = .json(.array(values.map(JSONValue.string)))
        case .arrayAdd:
            self = .arrayAdd(values.map(JSONValue.string))
        case .dict, .dictAdd:
            guard values.count % 2 == 0 else {
                throw .usage(
                    "\(flag.spelling) takes pairs of KEY VALUE; '\(values.last ?? "")' has no value")
            }
            let pairs = stride(from: 0, to: values.count, by: 2).map { (values[$0], JSONValue.string(values[$0 + 1])) }
            if flag == .dict {
                var members: [String: JSONValue] = [:]
                for (key, value) in pairs { members[key] = value }
                self = .json(.object(members))
            } else {
                self = .dictAdd(pairs)
            }
        }
    }

    /// `text` as a JSON integer: an optional sign, then digits (leading zeros dropped); any size.
    static func integer(_ text: String) -> JSONNumber? {
        var digits = Substring(text)
        var sign = ""
        if let first = digits.first, first == "-" || first == "+" {
            sign = first == "-" ? "-" : ""
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let trimmed = digits.drop { $0 == "0" }
        let literal = trimmed.isEmpty ? "0" : sign + trimmed
        do {
            return try JSONNumber(parsing: literal)
        } catch {
            return nil
        }
    }

    /// `text` as a JSON number, spelled as JSON spells one; `+` before it is dropped.
    static func number(_ text: String) -> JSONNumber? {
        let literal = text.hasPrefix("+") ? String(text.dropFirst()) : text
        do {
            return try JSONNumber(parsing: literal)
        } catch {
            return nil
        }
    }

    /// `text` as an ISO 8601 date and time with a time zone (`2026-12-01T10:00:00Z`, `...T10:00:00.25+02:00`),
    /// or `nil` when it is not one or names a moment that does not exist (February 30, hour 24, second 60):
    /// Foundation's parser would roll those over into the next month, day or minute.
    ///
    /// Fractional seconds are kept to what a `Date` holds (a `Double` of seconds since 2001: about a tenth of a
    /// microsecond in this century), not cut to milliseconds as `ISO8601DateFormatter` cuts them.
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, existingDateTime(bytes[0..<19]) else { return nil }
        // The fractional seconds, if any, are read here; the rest (date, time and zone) by Foundation.
        var fraction = 0.0
        var end = 19
        if bytes[19] == UInt8(ascii: ".") {
            end = 20
            while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
            guard end > 20, let value = Double("0." + String(decoding: bytes[20..<end], as: UTF8.self)) else {
                return nil
            }
            fraction = value
        }
        let whole = String(decoding: bytes[0..<19] + bytes[end...], as: UTF8.self)
        guard let date = ISO8601DateFormatter().date(from: whole) else { return nil }
        return Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate + fraction)
    }

    /// Whether `text` is `YYYY-MM-DDTHH:MM:SS` naming a day and a time that exist (the Gregorian calendar's
    /// month lengths and leap years; hours 0-23, minutes and seconds 0-59).
    private static func existingDateTime(_ text: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(text)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1.asciiValue }),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return false }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    /// `text` as hexadecimal bytes, as `defaults -data` takes them: two digits a byte, in either case.
    static func hexData(_ text: String) -> Data? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var data = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            data.append(high << 4 | low)
        }
        return data
    }
}
