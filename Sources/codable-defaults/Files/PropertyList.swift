import CodableDefaults
import Foundation

/// Property lists, as `defaults(1)` reads and writes them: `import` takes an XML or binary one (what
/// `defaults export` writes), `export` writes an XML one when DEST ends in `.plist` (what `defaults import` reads).
///
/// A value becomes what the library stores for it, so typed keys read it: a date the number of seconds since
/// 2001-01-01 00:00 UTC (as a `Date` is stored), data its base64 text (as `Data` is), an integer, a real, a boolean,
/// a string, an array or a dictionary its JSON counterpart. The other way, each JSON value becomes its property-list
/// counterpart (a number an integer when it is whole and fits in 64 bits, else a real); null, which a property list
/// cannot hold, is refused, naming its key.
enum PropertyList {
    /// Whether `bytes` start as a property list does: `bplist00` (binary), or XML whose first element is `plist`
    /// (after an XML declaration and a document type, when there are).
    static func looksLikeOne(_ bytes: Data) -> Bool {
        if bytes.starts(with: Array("bplist".utf8)) { return true }
        let head = String(decoding: bytes.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return head.hasPrefix("<?xml") && head.contains("<plist") || head.hasPrefix("<!DOCTYPE plist")
            || head.hasPrefix("<plist")
    }

    /// The members of the dictionary the property list `bytes` (read from `path`) holds, as JSON values, sorted
    /// by key.
    ///
    /// - Throws: Status 4 naming `path`: not a property list (with the parser's words), not a dictionary at its
    ///   top, or a real that is not a number (NaN, an infinity).
    static func members(of bytes: Data, path: String) throws(ToolError) -> [(key: String, value: JSONValue)] {
        let dictionary: [String: Value]
        do {
            dictionary = try PropertyListDecoder().decode([String: Value].self, from: bytes)
        } catch {
            throw ToolError(.badFile, "\(path): not a property list holding a dictionary: \(Self.describe(error))")
        }
        var members: [(key: String, value: JSONValue)] = []
        for (key, value) in dictionary {
            guard let json = value.json else {
                throw ToolError(.badFile, "\(path): key \(KeyText.message(key)): a real that is not a number")
            }
            members.append((key, json))
        }
        return members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// The XML property list of `members` (a dictionary), for the file `path`.
    ///
    /// - Throws: Status 1 naming the first key whose value holds null, which a property list cannot.
    static func xml(_ members: [(key: String, value: JSONValue)], path: String) throws(ToolError) -> String {
        var dictionary: [String: Value] = [:]
        for (key, value) in members {
            guard let converted = Value(value) else {
                throw ToolError(
                    .failure,
                    "\(path): key \(KeyText.message(key)): its value holds null, which a property list cannot hold; "
                        + "export to a .json file instead")
            }
            dictionary[key] = converted
        }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        do {
            return String(decoding: try encoder.encode(dictionary), as: UTF8.self)
        } catch {
            throw ToolError(.failure, "\(path): the property list cannot be made: \(error)")
        }
    }

    /// The parser's words for why `error` refused a property list: its own description, without the type names
    /// of the decoding error around it.
    private static func describe(_ error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else {
            if case DecodingError.typeMismatch(_, let context) = error {
                return "a value at \(context.codingPath.map(\.stringValue).joined(separator: "/")) is of no "
                    + "property-list type"
            }
            return "\(error)"
        }
        if let underlying = context.underlyingError as NSError?,
            let said = underlying.userInfo[NSDebugDescriptionErrorKey] as? String
        {
            return said
        }
        return context.debugDescription
    }

    /// One property-list value.
    private enum Value: Codable {
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case string(String)
        case date(Date)
        case data(Data)
        case array([Value])
        case dictionary([String: Value])

        /// Reads the value as the type the property list gives it. Each type is tried in turn: a decoder refuses
        /// a value of another type (a boolean is not an integer, a date not a string), and the last try, a
        /// dictionary, throws the error of a value of none.
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .real(value)
            } else if let value = try? container.decode(Date.self) {
                self = .date(value)
            } else if let value = try? container.decode(Data.self) {
                self = .data(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([Value].self) {
                self = .array(value)
            } else {
                self = .dictionary(try container.decode([String: Value].self))
            }
        }

        /// The value of `json`, or `nil` when it holds null.
        init?(_ json: JSONValue) {
            switch json {
            case .null: return nil
            case .bool(let value): self = .bool(value)
            case .number(let number):
                if let integer = number.int64Value {
                    self = .integer(integer)
                } else {
                    self = .real(number.doubleValue)
                }
            case .string(let value): self = .string(value)
            case .array(let elements):
                var values: [Value] = []
                for element in elements {
                    guard let value = Value(element) else { return nil }
                    values.append(value)
                }
                self = .array(values)
            case .object(let members):
                var values: [String: Value] = [:]
                for (key, member) in members {
                    guard let value = Value(member) else { return nil }
                    values[key] = value
                }
                self = .dictionary(values)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .bool(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .real(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .date(let value): try container.encode(value)
            case .data(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .dictionary(let value): try container.encode(value)
            }
        }

        /// The JSON value the library stores for the value, or `nil` for a real that is not a number.
        var json: JSONValue? {
            switch self {
            case .bool(let value): return .bool(value)
            case .integer(let value): return .number(JSONNumber(value))
            case .real(let value): return JSONNumber(value).map(JSONValue.number)
            case .string(let value): return .string(value)
            // As a `Date` is stored (its Codable form: seconds since the reference date) and `Data` (base64).
            case .date(let value): return JSONNumber(value.timeIntervalSinceReferenceDate).map(JSONValue.number)
            case .data(let value): return .string(value.base64EncodedString())
            case .array(let values):
                var elements: [JSONValue] = []
                for value in values {
                    guard let element = value.json else { return nil }
                    elements.append(element)
                }
                return .array(elements)
            case .dictionary(let values):
                var members: [String: JSONValue] = [:]
                for (key, value) in values {
                    guard let member = value.json else { return nil }
                    members[key] = member
                }
                return .object(members)
            }
        }
    }
}
