#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// The address of the JSON Schema dialect the generated schemas declare (2020-12).
    public static let jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// The JSON Schema (draft 2020-12) of a store file holding `keys`, generated from the keys: for each key a
    /// property with its type (from the key's value type and the encoding of its default), its constraints
    /// (`minimum`, `maximum`, `minLength`, `maxLength`, `minItems`, `maxItems`, `enum`; a `CaseIterable` enum's
    /// cases as `enum`), its summary (`description`), its default (`default`), and `"x-secret": true` for a secret
    /// key, whose property tells none of its values (no default, no shape taken from it, no allowed values: those
    /// rules are named in `x-rules`). A rule of your own (``Constraint/custom(_:_:)``) has no schema
    /// keyword: the schema says it only in the property's `x-rules`.
    ///
    /// Editors and CI can check a settings file with any JSON Schema validator against it. The schema lists the
    /// keys as `properties` and requires none (a key without a stored value reads its default); keys it does not
    /// list are allowed (the tool's `check --strict` reports them). A type the schema does not know from its
    /// Swift type alone (a `Codable` struct or enum) is described by what every value of it has in common with its
    /// default, its JSON type (`object`, `string`, ...), never by the members its default happens to encode: a
    /// dictionary's keys, an optional property left out, an enum's other cases would be refused. An array of a
    /// standard type says its elements' type in `items`. A non-finite `Double` (stored as the string `"+Infinity"`, `"-Infinity"` or
    /// `"NaN"`) does not match a `number` property.
    ///
    /// - Parameters:
    ///   - keys: The keys the program declares.
    ///   - title: The schema's `title`, if any.
    /// - Returns: The schema, an object.
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` when a default or a constraint's value does not
    ///   encode; ``DefaultsError/Code-swift.struct/invalidArgument`` for two keys of one name.
    public static func schema(for keys: [AnyKey], title: String? = nil) throws(DefaultsError) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for key in keys {
            guard properties[key.name] == nil else {
                throw DefaultsError(
                    .invalidArgument, "two keys of the schema have the same name", key: key.name)
            }
            properties[key.name] = .object(try key.schemaProperty())
        }
        var schema: [String: JSONValue] = [
            "$schema": .string(jsonSchemaDialect), "type": "object", "properties": .object(properties),
        ]
        if let title { schema["title"] = .string(title) }
        return .object(schema)
    }

    /// Writes ``schema(for:title:)`` of `keys` to `url`, pretty-printed with sorted keys, atomically and durably
    /// (as a store file is written). A conventional place is beside the store, named after it:
    /// `settings.json` → `settings.schema.json`, where the tool finds it (see ``schemaURL(forStoreAt:)``).
    ///
    /// - Throws: What ``schema(for:title:)`` throws; ``DefaultsError/Code-swift.struct/writeFailed`` (path and
    ///   `errno`) when the file cannot be written; ``DefaultsError/Code-swift.struct/notDurable`` when it was
    ///   written but its directory could not be flushed (it is in place, but may not survive a power loss).
    public static func writeSchema(for keys: [AnyKey], title: String? = nil, to url: URL) throws(DefaultsError) {
        let schema = try schema(for: keys, title: title)
        var bytes = Array(Self.pretty(schema, indent: "").utf8)
        bytes.append(0x0A)
        let (_, notDurable) = try DurableFile(path: url.path, role: "schema").write(bytes)
        if let notDurable { throw notDurable }
    }

    /// Where a store file's schema is looked for by the tool: beside it, its name with `.schema.json` in place of
    /// its extension (`settings.json` → `settings.schema.json`; `settings` → `settings.schema.json`).
    public static func schemaURL(forStoreAt url: URL) -> URL {
        url.deletingPathExtension().appendingPathExtension("schema.json")
    }

    /// `value` as JSON text, two spaces an indent level, members sorted by their names' UTF-8 bytes; a schema is
    /// a few levels deep, so the recursion is shallow.
    static func pretty(_ value: JSONValue, indent: String) -> String {
        let inner = indent + "  "
        switch value {
        case .array(let elements) where !elements.isEmpty:
            return "[\n" + elements.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members) where !members.isEmpty:
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            let lines = sorted.map {
                inner + JSONValue.string($0.key).description + ": " + pretty($0.value, indent: inner)
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n\(indent)}"
        default:
            return value.description
        }
    }
}

extension Defaults.Key {
    /// Adds to `property` what the key's type, default and constraints say (see ``Defaults/schema(for:title:)``).
    func describeForSchema(into property: inout [String: JSONValue]) throws(DefaultsError) {
        let encoder = Codec.makeEncoder()
        func json(_ value: any Encodable & Sendable) throws(DefaultsError) -> JSONValue {
            let bytes = try Codec.encode(value, key: name, encoder: encoder, maxDepth: 512)
            do throws(JSONParseError) {
                return try JSONValueBytes.parse(bytes)
            } catch {
                throw DefaultsError(.encodingFailed, "the value encodes to JSON the store cannot read", key: name)
            }
        }
        let valueType = SchemaType.unwrapped(Value.self)
        // A secret key's schema tells no value: not its default, nor the shape of it, nor the values it may hold.
        let encodedDefault = isNil(defaultValue) || isSecret ? nil : try json(defaultValue)
        property.merge(SchemaType.describe(valueType, example: encodedDefault)) { current, _ in current }
        if !isSecret, let cases = SchemaType.cases(of: valueType) { property["enum"] = .array(cases) }
        if let encodedDefault { property["default"] = encodedDefault }
        var rules: [JSONValue] = []
        for constraint in constraints {
            let tellsValues = constraint.keywords.contains { $0.name == "enum" || $0.name == "const" }
            if isSecret && tellsValues {
                rules.append(.string("one of the values the program allows (withheld: the key is secret)"))
                continue
            }
            var keywords: [(String, JSONValue)] = []
            for (keyword, value) in constraint.keywords { keywords.append((keyword, try json(value))) }
            // A bound JSON Schema cannot say (a range of strings: "minimum" takes numbers only) is a rule the
            // program checks, named in x-rules, never a keyword that makes the schema invalid.
            if keywords.isEmpty || !keywords.allSatisfy(SchemaType.fits) {
                rules.append(.string(constraint.rule))
                continue
            }
            for (keyword, value) in keywords { property[keyword] = value }
        }
        if !rules.isEmpty { property["x-rules"] = .array(rules) }
    }
}

/// What a Swift type is in JSON Schema terms.
enum SchemaType {
    /// `type` itself, or the wrapped type of an `Optional`.
    static func unwrapped(_ type: Any.Type) -> Any.Type {
        (type as? any OptionalValue.Type)?.wrappedType ?? type
    }

    /// The `type` (and for arrays `items`, for objects `properties` and `required`) of `type`, from what it is
    /// and from `example`, a value of it encoded.
    static func describe(_ type: Any.Type, example: JSONValue?) -> [String: JSONValue] {
        if let known = known(type) { return known }
        guard let example else { return [:] }
        return describe(example: example)
    }

    /// The schema of a value of the standard types, or `nil`.
    private static func known(_ type: Any.Type) -> [String: JSONValue]? {
        let id = ObjectIdentifier(type)
        // Any JSON value: nothing to say.
        if id == ObjectIdentifier(JSONValue.self) { return [:] }
        let integers: [Any.Type] = [
            Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self,
            UInt16.self, UInt32.self, UInt64.self,
        ]
        if integers.contains(where: { ObjectIdentifier($0) == id }) { return ["type": "integer"] }
        if id == ObjectIdentifier(Double.self) || id == ObjectIdentifier(Float.self)
            || id == ObjectIdentifier(Date.self)
        {
            return ["type": "number"]
        }
        if id == ObjectIdentifier(String.self) || id == ObjectIdentifier(Data.self) || id == ObjectIdentifier(URL.self)
        {
            return ["type": "string"]
        }
        if id == ObjectIdentifier(Bool.self) { return ["type": "boolean"] }
        let arrays: [(Any.Type, JSONValue)] = [
            ([String].self, "string"), ([Int].self, "integer"), ([Double].self, "number"), ([Bool].self, "boolean"),
        ]
        if let (_, element) = arrays.first(where: { ObjectIdentifier($0.0) == id }) {
            return ["type": "array", "items": ["type": element]]
        }
        if id == ObjectIdentifier([String: String].self) {
            return ["type": "object", "additionalProperties": ["type": "string"]]
        }
        return nil
    }

    /// The schema every value of a type shares with `example`, its encoded default: its JSON type only. Which
    /// members an object has, or what its members hold, differs from value to value (a dictionary's keys, an
    /// optional property left out, an enum's cases), so it is not said.
    private static func describe(example: JSONValue) -> [String: JSONValue] {
        switch example {
        case .null: return [:]
        case .bool: return ["type": "boolean"]
        case .number: return ["type": "number"]
        case .string: return ["type": "string"]
        case .array: return ["type": "array"]
        case .object: return ["type": "object"]
        }
    }

    /// Whether a keyword's value is of the kind JSON Schema takes for it: a number for a bound, a whole number
    /// of at least 0 for a count.
    static func fits(_ keyword: (String, JSONValue)) -> Bool {
        switch keyword.0 {
        case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
            if case .number = keyword.1 { return true }
            return false
        case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
            if case .number(let number) = keyword.1 { return number.isWhole && JSONNumber.order(number, 0) >= 0 }
            return false
        default:
            return true
        }
    }

    /// The cases of a `CaseIterable` type, or `nil`.
    static func cases(of type: Any.Type) -> [JSONValue]? {
        guard let iterable = type as? any (CaseIterable & Encodable).Type else { return nil }
        return allCases(of: iterable)
    }

    /// The cases of `type`, each encoded; `nil` when one does not encode.
    private static func allCases<T: CaseIterable & Encodable>(of type: T.Type) -> [JSONValue]? {
        var encoded: [JSONValue] = []
        let encoder = Codec.makeEncoder()
        for value in type.allCases {
            do {
                encoded.append(try JSONValueBytes.parse(Array(try encoder.encode(value))))
            } catch {
                return nil
            }
        }
        return encoded
    }
}
