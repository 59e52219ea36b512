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
    /// A ``JSONValue`` (also `JSONValue?`, `[JSONValue]`, `[String: JSONValue]`) is written by the store's own
    /// writer, so its numbers keep their literals; see `JSONValueBytes`.
    ///
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - key: The key it is stored under, for the error.
    ///   - encoder: The encoder of values that are not ``JSONValue``s.
    ///   - maxDepth: The store's ``Defaults/Options/maximumDepth``, which every value must fit in.
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` naming the key. Its message never embeds
    ///   the value (which may be large, or nested too deep to print).
    static func encode(
        _ value: some Encodable, key: String, encoder: JSONEncoder, maxDepth: Int
    ) throws(DefaultsError) -> [UInt8] {
        if let json = JSONValueBytes.jsonValue(of: value) {
            return try JSONValueBytes.fragment(json, key: key, maxDepth: maxDepth)
        }
        let fragment: [UInt8]
        do {
            fragment = Array(try encoder.encode(value))
        } catch {
            throw DefaultsError(.encodingFailed, "the value cannot be encoded as JSON: \(describe(error))", key: key)
        }
        // Every level takes an opening and a closing bracket: a short value cannot nest too deep, and is not
        // scanned.
        if fragment.count / 2 >= maxDepth {
            let depth = JSONParser.nestingDepth(of: fragment)
            if depth >= maxDepth { throw tooDeep(depth, maxDepth: maxDepth, key: key) }
        }
        return fragment
    }

    /// The error for a value nesting `depth` levels, which the file (whose top-level object is level 1) could
    /// not hold under `maxDepth`: a store never writes a file it would refuse to open.
    static func tooDeep(_ depth: Int, maxDepth: Int, key: String) -> DefaultsError {
        DefaultsError(
            .encodingFailed,
            "the value nests arrays and objects \(depth) levels deep, \(depth + 1) in the file, over the limit "
                + "of \(maxDepth) (Options.maximumDepth, which counts the file's top-level object): a stored value "
                + "may nest at most \(maxDepth - 1), so it was not stored",
            key: key)
    }

    /// Decodes a stored fragment as `type`. The fragment is valid compact JSON, as the store keeps it: from
    /// its file, its own writer or `JSONEncoder`.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/decodingFailed`` naming the key, the type and where inside
    ///   the value the mismatch is; it says the value is `what` (a layer's value names its variable or file), and
    ///   for a `secret` value leaves out what the decoder said (which may quote the value).
    static func decode<Value: Decodable>(
        _ type: Value.Type, from fragment: [UInt8], key: String, path: String?, what: String = "the stored value",
        secret: Bool = false
    ) throws(DefaultsError) -> Value {
        func failure(_ detail: String) -> DefaultsError {
            let shown = secret ? "details withheld: the value is secret" : detail
            return DefaultsError(
                .decodingFailed, "\(what) does not decode as \(Value.self): \(shown); it is kept unchanged",
                path: path, key: key)
        }
        if JSONValueBytes.isJSONValueType(type) {
            // Read with the store's own reader, so that numbers keep their literals, and without validating
            // again: a stored fragment was validated when its file or text was parsed, or made by an encoder.
            // A value of another kind (an object read as `[JSONValue]`) falls through to the decoder for its
            // error message.
            let result = fragment.withUnsafeBytes { bytes in
                Result { () throws(JSONValueBytes.NameCollision) in try JSONValueBytes.value(fromCompact: bytes) }
            }
            do {
                if let value = JSONValueBytes.typed(try result.get(), as: type) { return value }
            } catch {
                throw failure(error.message)
            }
        }
        do {
            return try makeDecoder().decode(type, from: Data(fragment))
        } catch {
            throw failure(describe(decoding: error))
        }
    }

    /// A short description of an encoding error: what was wrong and at which coding path, without the value
    /// (`EncodingError`'s own description embeds it, which for a value that cannot be encoded may describe
    /// itself by encoding again).
    private static func describe(_ error: any Error) -> String {
        if let error = error as? EncodingError {
            switch error {
            case .invalidValue(let value, let context):
                return at(context.codingPath) + context.debugDescription + " (a \(type(of: value)))"
            @unknown default:
                return "an encoding error"
            }
        }
        return describe(decoding: error)
    }

    /// Where inside a value an error is, as `at .profile[2].name: `, or nothing at the top.
    private static func at(_ codingPath: [any CodingKey]) -> String {
        let path = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? "" : "at \(path): "
    }

    /// A short description of a decoding error: what was wrong and at which coding path.
    private static func describe(decoding error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func at(_ context: DecodingError.Context) -> String { Self.at(context.codingPath) + context.debugDescription }
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
