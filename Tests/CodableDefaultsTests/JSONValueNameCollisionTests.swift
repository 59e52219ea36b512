import CodableDefaultsTestSupport
import Testing

@testable import CodableDefaults

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``JSONValue`` object cannot hold two member names that differ only in Unicode normalization (its
/// `String` keys would merge them): every path that builds one fails loudly instead of dropping a member.
@Suite struct JSONValueNameCollisionTests {
    /// `é` as one code point, and as `e` and a combining accent: different bytes, equal Swift strings.
    static let composed = CollidingNames.composed
    static let decomposed = CollidingNames.decomposed
    /// A store file with such a pair inside the value of `v`.
    static let file = CollidingNames.file

    @Test func parsingThrowsAtTheSecondNameWithBothSpellings() throws {
        let text = "{\"a\": {\"\(Self.composed)\": 1,\n   \"\(Self.decomposed)\": 2}}"
        let error = try #require(throws: DefaultsError.self) { try JSONValue(parsing: text) }
        #expect(error.code == .invalidJSON)
        #expect(error.line == 2)
        #expect(error.column == 4)
        #expect(error.message.contains(#""\u00E9""#), "\(error.message)")
        #expect(error.message.contains(#""e\u0301""#), "\(error.message)")
        // Escaped spellings in the text, and whitespace and escapes before the name, count the same way.
        let escaped = #"[ "\"x\"" , { "\u00e9" : 1 , "e\u0301" : 2 } ]"#
        let second = try #require(throws: DefaultsError.self) { try JSONValue(parsing: escaped) }
        #expect(second.line == 1)
        #expect(second.column == 30)
        // Names of equal bytes stay a plain duplicate; names in different objects do not collide.
        #expect(throws: DefaultsError.self) { try JSONValue(parsing: #"{"\u00e9": 1, "\u00E9": 2}"#) }
        let apart = try JSONValue(parsing: "[{\"\(Self.composed)\": 1}, {\"\(Self.decomposed)\": 2}]")
        #expect(apart.description == "[{\"\(Self.composed)\":1},{\"\(Self.decomposed)\":2}]")
    }

    @Test func typedReadsFailNamingTheKeyAndKeepTheValue() throws {
        let dir = try TemporaryDirectory()
        try write(Self.file, to: dir.file())
        let defaults = try openFresh(dir.file())
        let errors = ErrorLog()
        defaults.onError = errors.handler

        let value = Defaults.Key<JSONValue>("v", default: .null)
        let error = try #require(throws: DefaultsError.self) { try defaults.value(for: value) }
        #expect(error.code == .decodingFailed)
        #expect(error.key == "v")
        #expect(error.message.contains(#""e\u0301""#), "\(error.message)")
        let members = Defaults.Key<[String: JSONValue]>("v", default: [:])
        #expect(throws: DefaultsError.self) { try defaults.value(for: members) }
        #expect(defaults.object(forKey: "v") == nil)

        // A read-then-write through the subscript reads the default (reporting why) and writes it back:
        // the value the file holds stays until then, and nothing else is merged away.
        #expect(defaults[value] == .null)
        #expect(errors.errors.contains { $0.code == .decodingFailed })
        try defaults.save()
        #expect(try text(dir.file()) == Self.file)
        #expect(defaults.object(forKey: "w") == .number(3))
    }

    @Test func migrationsRefuseANestedCollision() throws {
        let dir = try TemporaryDirectory()
        try write(Self.file, to: dir.file())
        let step = Defaults.Migration(to: 1) { _ in }
        let error = try #require(throws: DefaultsError.self) {
            try openFresh(dir.file(), options: Defaults.Options(migrations: [step]))
        }
        #expect(error.code == .migrationFailed)
        #expect(error.key == "v")
        #expect(error.message.contains(#""\u00E9""#), "\(error.message)")
        #expect(try text(dir.file()) == Self.file)
    }
}
