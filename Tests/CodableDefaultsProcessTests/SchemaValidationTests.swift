import CodableDefaults
import CodableDefaultsTestSupport
import Foundation
import Testing

/// Whether python3 with the `jsonschema` package (Debian's python3-jsonschema, which `.ci/run` installs) is
/// here: an independent JSON Schema validator.
let hasPythonJSONSchema: Bool = {
    do {
        return try runCommand(["python3", "-c", "import jsonschema"]).status == .exited(0)
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

    private func validate(_ store: String, in directory: TemporaryDirectory) throws -> [String] {
        let file = directory.file("store.json")
        try write(store, to: file)
        let (status, output) = try runCommand(
            ["python3", "-c", Self.validator, directory.file("store.schema.json").path, file.path])
        #expect(status == .exited(output.isEmpty ? 0 : 1))
        return output
    }

    @Test(.enabled(if: hasPythonJSONSchema, "needs python3 and its jsonschema package (python3-jsonschema)"))
    func anIndependentValidatorAcceptsGoodFilesAndRefusesBadOnes() throws {
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
        try defaults.save()
        #expect(try validate(try text(directory.file("written.json")), in: directory) == [])
        #expect(try validate(#"{"unknown": {"any": "thing"}, "$schemaVersion": 2}"#, in: directory) == [])
        #expect(
            try validate(
                #"{"volume": 1.5, "retries": -1, "nickname": "", "tags": ["a", "b", "c"], "theme": "blue"}"#,
                in: directory) == ["$.nickname", "$.retries", "$.tags", "$.theme", "$.volume"])
        #expect(try validate(#"{"profile": {"name": "Ana"}, "token": 12}"#, in: directory) == ["$.profile", "$.token"])
    }
}
