import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The JSON Schema generated from the keys a program declares.
@Suite struct SchemaTests {
    static let keys = SchemaKeys.keys

    @Test func eachKeyIsAPropertyWithItsTypeRulesSummaryAndDefault() throws {
        guard case .object(let schema) = try Defaults.schema(for: Self.keys, title: "Demo") else {
            Issue.record("not an object")
            return
        }
        #expect(schema["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(schema["type"] == "object" && schema["title"] == "Demo")
        guard case .object(let properties)? = schema["properties"] else {
            Issue.record("no properties")
            return
        }
        #expect(
            properties["volume"]
                == [
                    "type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.5,
                    "description": "Playback volume.",
                ])
        #expect(properties["retries"] == ["type": "integer", "minimum": 0, "maximum": 10, "default": 3])
        #expect(properties["nickname"] == ["type": "string", "minLength": 1, "maxLength": 8])
        #expect(
            properties["tags"] == [
                "type": "array", "items": ["type": "string"], "minItems": 0, "maxItems": 2, "default": [],
            ])
        #expect(properties["theme"] == ["type": "string", "enum": ["light", "dark"], "default": "light"])
        #expect(properties["even"] == ["type": "integer", "default": 0, "x-rules": ["an even number"]])
        #expect(properties["token"] == ["type": "string", "description": "API token.", "x-secret": true])
        #expect(
            properties["profile"]
                == [
                    "type": "object", "default": ["age": 0, "name": "Guest"],
                ])
    }

    /// A secret key's schema tells none of its values: no default, no allowed values (`enum`), no shape of its
    /// default; its rules that would tell them are named in `x-rules`.
    @Test func aSecretKeysSchemaTellsNoneOfItsValues() throws {
        struct Credentials: Codable, Sendable, Equatable {
            var LEAKMEMBER: String
        }
        let keys: [Defaults.AnyKey] = [
            Defaults.Key<String>(
                "mode", default: "LEAKDEFAULT", constraints: [.oneOf(["LEAKDEFAULT", "LEAKOTHER"])], secret: true),
            Defaults.Key<Credentials>("credentials", default: Credentials(LEAKMEMBER: "x"), secret: true),
        ]
        let text = Defaults.pretty(try Defaults.schema(for: keys, title: nil), indent: "")
        #expect(!text.contains("LEAK"), "\(text)")
        let schema = try Defaults.Schema(parsing: text)
        #expect(schema.isSecret("mode") && schema.isSecret("credentials"))
        guard case .object(let mode)? = schema.property(named: "mode") else {
            Issue.record("no property mode")
            return
        }
        #expect(mode["type"] == "string" && mode["enum"] == nil && mode["default"] == nil)
        #expect(mode["x-rules"] == ["one of the values the program allows (withheld: the key is secret)"])
    }

    /// The generated schema takes every value the program can store, not only its defaults: a dictionary's other
    /// keys, an optional property left out, an enum's other case; a length on a dictionary counts its members; a
    /// range JSON Schema cannot say (of strings) is named in x-rules, and the schema stays one the store reads.
    @Test func theGeneratedSchemaTakesEveryValueTheProgramCanStore() throws {
        typealias Account = SchemaKeys.Account
        typealias Mode = SchemaKeys.Mode
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        try defaults.publishSchema(for: SchemaKeys.otherValueKeys)
        let schema = try #require(try defaults.publishedSchema(), "the published schema reads back")
        let encoder = JSONEncoder()
        func json(_ value: some Encodable) throws -> JSONValue {
            try JSONValue(parsing: String(decoding: try encoder.encode(value), as: UTF8.self))
        }
        let values: [(String, JSONValue)] = [
            ("limits", try json(["b": 2, "c": 3])), ("account", try json(Account(name: "Bo", nickname: nil))),
            ("mode", try json(Mode.named("x"))), ("word", "q"),
        ]
        for (name, value) in values {
            #expect(schema.violations(of: value, forKey: name) == [], "\(name): \(value)")
        }
        #expect(
            schema.violations(of: try json(["a": 1, "b": 2, "c": 3]), forKey: "limits").map(\.keyword) == [
                "maxProperties"
            ])
        guard case .object(let property)? = schema.property(named: "word") else {
            Issue.record("no property word")
            return
        }
        #expect(property["minimum"] == nil && property["x-rules"] == ["between a and z"], "\(property)")
    }

    @Test func writeSchemaWritesItBesideTheStoreByTheDocumentedName() throws {
        let directory = try TemporaryDirectory()
        let url = Defaults.schemaURL(forStoreAt: directory.file("settings.json"))
        #expect(url.lastPathComponent == "settings.schema.json")
        try Defaults.writeSchema(for: Self.keys, to: url)
        let written = try JSONValue(parsing: try text(url))
        #expect(written == (try Defaults.schema(for: Self.keys)))
        #expect(try text(url).hasPrefix("{\n  \"$schema\": "))
    }

    @Test func twoKeysOfOneNameAreRefused() {
        let error = #expect(throws: DefaultsError.self) {
            try Defaults.schema(for: [Defaults.Key<Int>("a", default: 0), Defaults.Key<String>("a", default: "")])
        }
        #expect(error?.code == .invalidArgument && error?.key == "a")
    }
}
