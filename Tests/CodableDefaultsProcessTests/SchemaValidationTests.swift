import CodableDefaults
import CodableDefaultsTestSupport
import Foundation
import Testing

/// Whether python3 with the `jsonschema` package (Debian's python3-jsonschema, which `.ci/run` installs) is
/// here: an independent JSON Schema validator.
let hasPythonJSONSchema: Bool = {
    do {
        return try runCommandBlocking(["python3", "-c", "import jsonschema"]).status == .exited(0)
    } catch {
        return false
    }
}()

/// The generated schema, checked by an independent validator against good and bad store files.
@Suite struct SchemaValidationTests {
    private static let validator = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        errors = sorted("$" + "".join("." + str(p) for p in e.absolute_path) for e in validator.iter_errors(json.load(open(sys.argv[2]))))
        for path in errors: print(path)
        sys.exit(1 if errors else 0)
        """

    private func validate(_ store: String, in directory: TemporaryDirectory) async throws -> [String] {
        let file = directory.file("store.json")
        try write(store, to: file)
        let (status, output) = try await runCommand(
            ["python3", "-c", Self.validator, directory.file("store.schema.json").path, file.path])
        #expect(status == .exited(output.isEmpty ? 0 : 1))
        return output
    }

    @Test(.enabled(if: hasPythonJSONSchema, "needs python3 and its jsonschema package (python3-jsonschema)"))
    func anIndependentValidatorAcceptsGoodFilesAndRefusesBadOnes() async throws {
        let directory = try TemporaryDirectory()
        try Defaults.writeSchema(for: SchemaKeys.keys, to: directory.file("store.schema.json"))
        // What the library itself writes for values its keys accept.
        let defaults = try Defaults(url: directory.file("written.json"), saveMode: .manual)
        for key in SchemaKeys.keys {
            if let key = key as? Defaults.Key<Double> { try defaults.set(0.25, for: key) }
            if let key = key as? Defaults.Key<Int>, key.name == "retries" { try defaults.set(10, for: key) }
            if let key = key as? Defaults.Key<SchemaKeys.Theme> { try defaults.set(.dark, for: key) }
            if let key = key as? Defaults.Key<Profile> { try defaults.set(Profile(name: "Ana", age: 30), for: key) }
            if let key = key as? Defaults.Key<String?>, key.name == "nickname" { try defaults.set("Ana", for: key) }
        }
        try await defaults.save()
        #expect(try await validate(try text(directory.file("written.json")), in: directory) == [])
        #expect(try await validate(#"{"unknown": {"any": "thing"}, "$schemaVersion": 2}"#, in: directory) == [])
        await #expect(
            try validate(
                #"{"volume": 1.5, "retries": -1, "nickname": "", "tags": ["a", "b", "c"], "theme": "blue"}"#,
                in: directory) == ["$.nickname", "$.retries", "$.tags", "$.theme", "$.volume"])
        #expect(
            try await validate(#"{"profile": "Ana", "token": 12}"#, in: directory) == [
                "$.profile", "$.token",
            ])
    }

    /// Reads each schema of a corpus file and checks each of its documents as JSON Schema 2020-12 says, numbers
    /// exact (as `Decimal`; `integer` any whole number, `1.0` and `1e400` included): one line per document, the
    /// JSON Pointers of the values that break a rule, sorted, as a JSON array. `additionalProperties: false` is
    /// reported by jsonschema at the object; here at each member it refuses, as `Defaults.Schema` reports it.
    private static let differential = """
        import decimal, json, sys, jsonschema
        from decimal import Decimal
        decimal.getcontext().Emax = decimal.MAX_EMAX
        decimal.getcontext().Emin = decimal.MIN_EMIN
        def is_integer(checker, value):
            if isinstance(value, bool): return False
            if isinstance(value, int): return True
            if not isinstance(value, Decimal): return False
            sign, digits, exponent = value.as_tuple()
            zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
            return value == 0 or exponent + zeros >= 0
        checker = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", is_integer)
        Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=checker)
        def pointer(path):
            return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
        corpus = json.load(open(sys.argv[1]), parse_float=Decimal)
        count = 0
        for case in corpus:
            validator = Validator(case["schema"])
            for document in case["documents"]:
                paths = set()
                for error in validator.iter_errors(document):
                    path = list(error.absolute_path)
                    if error.validator == "additionalProperties" and error.validator_value is False:
                        listed = error.schema.get("properties", {})
                        paths.update(pointer(path + [name]) for name in error.instance if name not in listed)
                    else:
                        paths.add(pointer(path))
                print(json.dumps(sorted(paths)))
                count += 1
        print("checked", count)
        """

    /// The schema generated for a dictionary with a length, a struct with an optional property, an enum with
    /// associated values and a string range takes every value the program can store, as python's validator says
    /// too: a dictionary's other keys, the optional left out, the enum's other case, another string in the range.
    @Test(.enabled(if: hasPythonJSONSchema, "needs python3 and its jsonschema package (python3-jsonschema)"))
    func anIndependentValidatorTakesTheProgramsOtherValues() async throws {
        let directory = try TemporaryDirectory()
        try Defaults.writeSchema(for: SchemaKeys.otherValueKeys, to: directory.file("store.schema.json"))
        let defaults = try Defaults(url: directory.file("written.json"), saveMode: .manual)
        try defaults.set(["b": 2, "c": 3], for: SchemaKeys.limits)
        try defaults.set(SchemaKeys.Account(name: "Bo", nickname: nil), for: SchemaKeys.account)
        try defaults.set(.named("x"), for: SchemaKeys.mode)
        try defaults.set("q", for: SchemaKeys.word)
        try await defaults.save()
        #expect(try await validate(try text(directory.file("written.json")), in: directory) == [])
        #expect(
            try await validate(#"{"limits": {"a": 1, "b": 2, "c": 3}, "word": 1}"#, in: directory) == [
                "$.limits", "$.word",
            ])
    }

    /// Schemas and documents both validators check, each keyword accepted and refused, numbers past `Double`,
    /// strings past one Unicode scalar a character, and names that differ only in normalization.
    private static let corpus: [String] = [
        #"{"schema": {"type": "integer"}, "documents": [1, 1.0, 1e400, -0, 100e-2, 1.5, 1e-400, 123e-2, "1", true, null]}"#,
        #"{"schema": {"type": ["string", "null"]}, "documents": ["a", null, 1, false, [], {}]}"#,
        #"{"schema": {"type": "number"}, "documents": [1, 1.5, 1e400, "1", true, null]}"#,
        #"{"schema": {"type": "boolean"}, "documents": [true, false, 0, "true"]}"#,
        #"{"schema": {"type": "array"}, "documents": [[], {}, "[]"]}"#,
        #"{"schema": {"type": "object"}, "documents": [{}, [], null]}"#,
        #"{"schema": {"enum": ["light", "dark", 1, {"a": [1]}, null]}, "documents": ["dark", 1.0, 10e-1, {"a": [1e0]}, null, "blue", 2, {"a": [1, 2]}, true, false]}"#,
        #"{"schema": {"enum": [false, 0]}, "documents": [false, 0, true, 1, 0.0]}"#,
        #"{"schema": {"const": 3}, "documents": [3, 3.0, 30e-1, 4, "3"]}"#,
        #"{"schema": {"enum": [1, 2, "a"], "const": 1}, "documents": [1, 1.0, 2, "a", null]}"#,
        #"{"schema": {"enum": [2], "const": 1}, "documents": [1, 2]}"#,
        #"{"schema": {"maxLength": 1e20, "minItems": 0}, "documents": ["abc", []]}"#,
        #"{"schema": {"minLength": 1e20}, "documents": ["abc", 1]}"#,
        #"{"schema": {"minimum": 0.1, "maximum": 1e400}, "documents": [0.1, 0.1000, 0.10000000000000000001, 0.09999999999999999999, 1e400, 10e399, 1.0000000000000000001e400, "x"]}"#,
        #"{"schema": {"exclusiveMinimum": 9007199254740992, "exclusiveMaximum": 123456789012345678901234567890}, "documents": [9007199254740992, 9007199254740993, 9007199254740992.5, 123456789012345678901234567889, 123456789012345678901234567890, 1.2345678901234567890123456789e29]}"#,
        #"{"schema": {"exclusiveMinimum": -1e-400, "maximum": -0}, "documents": [-0, 0, -1e-400, -1e-401, 1e-400]}"#,
        #"{"schema": {"minLength": 2, "maxLength": 3}, "documents": ["ab", "e\u0301", "\ud83d\ude00", "\ud83d\udc4d\ud83c\udffd", "a", "abcd", "\u00e9", 7]}"#,
        #"{"schema": {"minItems": 1, "maxItems": 2, "uniqueItems": true}, "documents": [[1], [1, 2], [], [1, 2, 3], [1, 1.0], [{"a": 1, "b": 2}, {"b": 2, "a": 1}], ["\u00e9", "e\u0301"], [0, false], [[1], [1.0]], {}]}"#,
        #"{"schema": {"items": {"type": "integer", "maximum": 5}}, "documents": [[], [1, 5], [1, "x", 6], "x"]}"#,
        #"{"schema": {"properties": {"a": {"type": "string"}, "a/b~": {"properties": {"c": {"enum": [1]}}}}, "required": ["a"]}, "documents": [{"a": "x"}, {"a": 1}, {}, {"a": "x", "a/b~": {"c": 2}}, {"a": "x", "a/b~": {"c": 1}}, []]}"#,
        #"{"schema": {"properties": {"a": {}}, "additionalProperties": false}, "documents": [{"a": 1}, {}, {"a": 1, "b": 2, "c": 3}, 5]}"#,
        #"{"schema": {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}, "documents": [{"a": "x", "b": 2}, {"b": "x", "c": 1.0}]}"#,
        #"{"schema": {"minProperties": 1, "maxProperties": 2}, "documents": [{"a": 1}, {}, {"a": 1, "b": 2, "c": 3}, []]}"#,
        // jsonschema reports a `false` member schema at the object, not the member: only validity is compared.
        #"{"schema": {"properties": {"t": true, "f": false}}, "documents": [{"t": 1}, {"f": null}, {"x": 1}], "validityOnly": true}"#,
        #"{"schema": false, "documents": [{}, 1, null]}"#,
        #"{"schema": true, "documents": [{}, 1, null]}"#,
        #"{"schema": {"properties": {"\u00e9": {"type": "integer"}}, "required": ["\u00e9"]}, "documents": [{"\u00e9": 1}, {"e\u0301": "x"}, {"\u00e9": "x"}]}"#,
        #"{"schema": {"enum": ["\u00e9", {"\u00e9": 1}]}, "documents": ["\u00e9", "e\u0301", {"\u00e9": 1}, {"e\u0301": 1}]}"#,
        #"{"schema": {"const": "\u00c5"}, "documents": ["\u00c5", "\u212b", "A\u030a"]}"#,
        #"{"schema": {"title": "T", "description": "d", "default": "x", "format": "email", "x-rules": ["r"], "x-secret": true, "type": "string"}, "documents": ["not an address", 1]}"#,
    ]

    @Test(.enabled(if: hasPythonJSONSchema, "needs python3 and its jsonschema package (python3-jsonschema)"))
    func theCheckerAndAnIndependentValidatorAgreeOnEveryDocumentOfACorpus() async throws {
        var cases = try Self.corpus.map { try JSONValue(parsing: $0) }
        // The generated schema, with a file of the defaults, the library's own file of them, and bad files.
        let generated = try Defaults.schema(for: SchemaKeys.keys, title: "Demo")
        let directory = try TemporaryDirectory()
        let defaults = try Defaults(url: directory.file(), saveMode: .manual)
        for key in SchemaKeys.keys {
            if let key = key as? Defaults.Key<Double> { try defaults.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<Int> { try defaults.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<[String]> { try defaults.set(["a", "b"], for: key) }
            if let key = key as? Defaults.Key<SchemaKeys.Theme> { try defaults.set(.dark, for: key) }
            if let key = key as? Defaults.Key<Profile> { try defaults.set(Profile(name: "Ana", age: 30), for: key) }
            if let key = key as? Defaults.Key<String?> { try defaults.set("Ana", for: key) }
        }
        try await defaults.save()
        let documents: [JSONValue] = [
            try JSONValue(parsing: try text(directory.file())),
            [
                "volume": 0.5, "retries": 3, "tags": [], "theme": "light", "even": 0,
                "profile": ["age": 0, "name": "Guest"],
            ],
            ["unknown": ["any": "thing"], "$schemaVersion": 2],
            try JSONValue(
                parsing: #"""
                    {"volume": 1.5, "retries": -1, "nickname": "", "tags": ["a", "b", "c"], "theme": "blue",
                     "even": 2.5, "token": 12, "profile": {"name": 1, "age": "x"}}
                    """#),
            ["retries": 10.0, "nickname": "123456789", "tags": [1], "profile": [:]],
            [],
        ]
        cases.append(["schema": generated, "documents": .array(documents)])

        let file = directory.file("corpus.json")
        try write(JSONValue.array(cases).description, to: file)
        let (status, output) = try await runCommand(["python3", "-c", Self.differential, file.path], timeout: 120)
        #expect(status == .exited(0))
        var lines = output[...]
        var checked = 0
        for value in cases {
            guard case .object(let members) = value, let schemaJSON = members["schema"],
                case .array(let documents)? = members["documents"]
            else {
                Issue.record("a case of the corpus is not {schema, documents}")
                continue
            }
            let schema = try Defaults.Schema(schemaJSON)
            for document in documents {
                let line = lines.popFirst()
                let expected = try JSONValue(parsing: try #require(line, "python stopped early"))
                let found = schema.violations(of: document)
                let paths = JSONValue.array(Set(found.map(\.pointer)).sorted().map { .string($0) })
                if members["validityOnly"] == true {
                    #expect(found.isEmpty == (expected == []), "\(schemaJSON) checking \(document): \(found)")
                } else {
                    #expect(paths == expected, "\(schemaJSON) checking \(document): \(found)")
                }
                checked += 1
            }
        }
        #expect(Array(lines) == ["checked \(checked)"])
        #expect(checked > 130)
    }
}
