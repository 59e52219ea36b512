import Foundation

/// One property-list value, as `PropertyListDecoder` reads it: the tool's `import` of a property list and
/// ``Defaults/moveValues(fromUserDefaults:keys:sourceNames:removingMovedValues:marker:)-8ya8a`` read values through it.
///
/// ``json`` is what the library stores for it, so typed keys read it: a date the number of seconds since
/// 2001-01-01 00:00 UTC (as a `Date` is stored), data its base64 text (as `Data` is).
package enum PropertyListValue: Codable, Sendable, Equatable {
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// Reads the value as the type the property list gives it. Each type is tried in turn: a decoder refuses
    /// a value of another type (a boolean is not an integer, a date not a string), and the last try, a
    /// dictionary, throws the error of a value of none.
    package init(from decoder: any Decoder) throws {
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
        } else if let value = try? container.decode([PropertyListValue].self) {
            self = .array(value)
        } else {
            self = .dictionary(try container.decode([String: PropertyListValue].self))
        }
    }

    /// The value of `json`, or `nil` when it holds null.
    package init?(_ json: JSONValue) {
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
            var values: [PropertyListValue] = []
            for element in elements {
                guard let value = PropertyListValue(element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case .object(let members):
            var values: [String: PropertyListValue] = [:]
            for (key, member) in members {
                guard let value = PropertyListValue(member) else { return nil }
                values[key] = value
            }
            self = .dictionary(values)
        }
    }

    package func encode(to encoder: any Encoder) throws {
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
    package var json: JSONValue? {
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
