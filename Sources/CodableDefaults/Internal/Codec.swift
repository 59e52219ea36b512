#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How values become JSON fragments and back: one configuration for every encode and decode, so that what
/// is written reads back equal.
///
/// - Keys of nested objects are sorted, output is compact, `/` is not escaped.
/// - `Double.infinity`, `-infinity` and `nan` are the strings `"+Infinity"`, `"-Infinity"` and `"NaN"`.
/// - `Date` is its `timeIntervalSinceReferenceDate` as a JSON number, which reads back `==` (an ISO 8601
///   string would round to milliseconds).
/// - `Data` is a Base64 string.
enum Codec {
    /// The strings that stand for non-finite floating-point numbers in the file.
    static let positiveInfinity = "+Infinity"
    /// See ``positiveInfinity``.
    static let negativeInfinity = "-Infinity"
    /// See ``positiveInfinity``.
    static let notANumber = "NaN"

    /// A new encoder with the store's configuration. Encoders are cheap; make one per save.
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: positiveInfinity, negativeInfinity: negativeInfinity, nan: notANumber)
        encoder.dateEncodingStrategy = .deferredToDate
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    /// A new decoder with the store's configuration.
    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: positiveInfinity, negativeInfinity: negativeInfinity, nan: notANumber)
        decoder.dateDecodingStrategy = .deferredToDate
        decoder.dataDecodingStrategy = .base64
        return decoder
    }

    /// Encodes one value as a compact JSON fragment.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` naming the key.
    static func encode(_ value: some Encodable, key: String, encoder: JSONEncoder) throws(DefaultsError) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw DefaultsError(.encodingFailed, "the value cannot be encoded as JSON: \(error)", key: key)
        }
    }

    /// Decodes a stored fragment as `type`.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/decodingFailed`` naming the key, the type and where inside
    ///   the value the mismatch is.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from fragment: [UInt8], key: String, path: String?
    ) throws(DefaultsError) -> Value {
        do {
            return try makeDecoder().decode(type, from: Data(fragment))
        } catch {
            throw DefaultsError(
                .decodingFailed,
                "the stored value does not decode as \(Value.self): \(describe(error)); it is kept unchanged",
                path: path, key: key)
        }
    }

    /// A short description of a decoding error: what was wrong and at which coding path.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func at(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return (path.isEmpty ? "" : "at \(path): ") + context.debugDescription
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return at(context)
        case .keyNotFound(let key, let context):
            return at(context) + " (missing key \"\(key.stringValue)\")"
        @unknown default:
            return "\(error)"
        }
    }
}
