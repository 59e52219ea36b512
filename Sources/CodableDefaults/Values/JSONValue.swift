#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Any JSON value, for untyped access to a store: what ``Defaults/observe(forKey:options:_:)`` reports.
///
/// Numbers are exact: a ``number(_:)`` holds a ``JSONNumber``, which keeps the number's literal as written
/// (`123456789012345678901234567890`, `1e400` and `1.50` stay as they are) and converts on demand. Wherever
/// the store turns JSON into a `JSONValue` and back (reads and writes of `JSONValue`, `JSONValue?`,
/// `[JSONValue]` and `[String: JSONValue]` keys, ``init(parsing:)``, ``description``, migrations and the
/// `codable-defaults` tool) it uses its own scanner and writer, so a value written back is the JSON it was
/// read from, up to whitespace, member order and string escapes.
///
/// One JSON object cannot be a `JSONValue`: one with two member names that differ only in Unicode
/// normalization (`"\u00E9"` and `"e\u0301"`), which JSON counts as two names but the `[String: JSONValue]`
/// of ``object(_:)`` would merge. Such a value is refused, never merged: ``init(parsing:)`` throws, and a read
/// of a stored one as a `JSONValue` reports ``DefaultsError/Code-swift.struct/decodingFailed`` and leaves it
/// in the file as it is.
///
/// A value can be written as a Swift literal: `true`, `5`, `0.8`, `"text"`, `["a", "b"]`, `["width": 800]`;
/// JSON `null` is ``null`` (there is no `nil` literal, so `values["x"] = nil` in a migration removes a member).
///
/// Equality is structural, with numbers compared by value (`1 == 1.0`, see ``JSONNumber``) and strings
/// as Swift compares them.
///
/// `JSONValue` is `Sendable`, `Hashable` and `Codable`; it can itself be stored under a key. Nested inside
/// another `Codable` type it goes through that type's encoder and decoder instead: see
/// ``encode(to:)`` and ``init(from:)`` for what they keep.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its literal.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Parses JSON text strictly (RFC 8259: valid UTF-8, no duplicate keys, no trailing text, nesting up to
    /// 512 levels), and refuses an object with two member names that differ only in Unicode normalization,
    /// which a `JSONValue` cannot hold apart.
    ///
    /// Numbers of any size are kept exactly, as their literals (`1e400` too).
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: #"{"volume": 0.8}"#)
    /// ```
    ///
    /// - Parameter text: The JSON text: any value, with whitespace around it allowed.
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidJSON`` with the line and column of the problem (for
    ///   two names that differ only in normalization, of the second, with both spellings escaped).
    public init(parsing text: String) throws(DefaultsError) {
        do {
            self = try JSONValueBytes.parse(Array(text.utf8))
        } catch {
            throw DefaultsError(.invalidJSON, error.message, line: error.line, column: error.column)
        }
    }

    /// Decodes any JSON value from any decoder, trying each kind in turn; a number is tried as `Int64`,
    /// `UInt64`, `Decimal`, then `Double` (see ``JSONNumber/init(from:)``).
    ///
    /// The store does not come here for a value it reads as a `JSONValue` itself (it keeps the literals); a
    /// `JSONValue` nested in another type does, and keeps only what its decoder gives.
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
        } else if let value = probe(JSONNumber.self) {
            self = .number(value)
        } else if let value = probe([JSONValue].self) {
            self = .array(value)
        } else if let value = probe([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a JSON value"))
        }
    }

    /// Encodes the value as the JSON it stands for, through any encoder.
    ///
    /// The store does not come here for a value it stores as a `JSONValue` itself (it writes the literals). A
    /// `JSONValue` nested in another type does, and there a number is encoded as `Int64` or `UInt64` when it
    /// is such a whole number, else as `Decimal` when that is exact, else as the nearest `Double` (see
    /// ``JSONNumber/encode(to:)``).
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as compact JSON text: members sorted by the UTF-8 bytes of their names, numbers as their
    /// literals. Never fails, for any depth.
    public var description: String {
        String(decoding: JSONValueBytes.write(self).bytes, as: UTF8.self)
    }
}
