#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Any JSON value, for untyped access to a store: what ``Defaults/observe(forKey:options:_:)`` reports.
///
/// Integers are kept exact: a whole number that fits `Int64` is ``int(_:)``, a larger positive one that fits
/// `UInt64` is ``uint(_:)``, and only other numbers are ``double(_:)``. Encoding a `JSONValue` writes the
/// same JSON it was decoded from, up to whitespace, number spelling and member order.
///
/// `JSONValue` is `Sendable`, `Hashable` and `Codable`; it can itself be stored under a key.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number that fits `Int64`.
    case int(Int64)
    /// A whole number above `Int64.max` that fits `UInt64`.
    case uint(UInt64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Parses JSON text strictly (RFC 8259: valid UTF-8, no duplicate keys, no trailing text, nesting up to
    /// 512 levels).
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: #"{"volume": 0.8}"#)
    /// ```
    ///
    /// - Parameter text: The JSON text: any value, with whitespace around it allowed.
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidJSON`` with the line and column of the problem, or
    ///   when a number cannot be represented (beyond the range of `Double`).
    public init(parsing text: String) throws(DefaultsError) {
        let fragment: [UInt8]
        do {
            fragment = try Document.compactValue(Array(text.utf8))
        } catch {
            throw DefaultsError(.invalidJSON, error.message, line: error.line, column: error.column)
        }
        do {
            self = try Codec.makeDecoder().decode(JSONValue.self, from: Data(fragment))
        } catch {
            throw DefaultsError(.invalidJSON, "the value cannot be represented: \(error)")
        }
    }

    /// Decodes any JSON value.
    ///
    /// - Throws: `DecodingError.dataCorrupted` if the decoder holds something JSON cannot.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // A single-value container cannot say which kind it holds, so each kind is tried in turn; a failed
        // try only means "not this kind". If no kind fits, the error below says so.
        func probe<T: Decodable>(_ type: T.Type) -> T? {
            do { return try container.decode(type) } catch { return nil }
        }
        if container.decodeNil() {
            self = .null
        } else if let value = probe(Bool.self) {
            self = .bool(value)
        } else if let value = probe(String.self) {
            // Strings first: with the store's configuration "NaN" would otherwise decode as a Double.
            self = .string(value)
        } else if let value = probe(Int64.self) {
            self = .int(value)
        } else if let value = probe(UInt64.self) {
            self = .uint(value)
        } else if let value = probe(Double.self) {
            self = .double(value)
        } else if let value = probe([JSONValue].self) {
            self = .array(value)
        } else if let value = probe([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a JSON value"))
        }
    }

    /// Encodes the value as the JSON it stands for.
    ///
    /// - Throws: What the encoder throws (for a non-finite ``double(_:)``, unless the encoder converts those).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .uint(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as compact JSON text with sorted keys.
    public var description: String {
        do {
            return String(decoding: try Codec.makeEncoder().encode(self), as: UTF8.self)
        } catch {
            return "\(error)"
        }
    }
}
