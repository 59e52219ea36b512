import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// `JSONValue`'s literals: each kind, a name given twice, and a migration step written with them.
@Suite struct JSONValueLiteralTests {
    @Test func eachKindOfLiteral() {
        let flag: JSONValue = true
        let count: JSONValue = 5
        let volume: JSONValue = 0.8
        let name: JSONValue = "Ann"
        let tags: JSONValue = ["a", "b", 3, false, .null]
        let window: JSONValue = ["width": 800, "title": "Main", "ratio": 1.5, "tags": ["x"], "inner": ["a": 1]]
        #expect(flag == .bool(true))
        #expect(count == .number(JSONNumber(5)))
        #expect(count.description == "5")
        #expect(volume == .number(JSONNumber(0.8)))
        #expect(volume.description == "0.8", "the shortest text that reads back as the same Double")
        #expect(name == .string("Ann"))
        #expect(tags == .array([.string("a"), .string("b"), .number(3), .bool(false), .null]))
        #expect(
            window
                == .object([
                    "width": .number(800), "title": .string("Main"), "ratio": .number(1.5),
                    "tags": .array([.string("x")]), "inner": .object(["a": .number(1)]),
                ]))
        let empty: JSONValue = [:]
        let none: JSONValue = []
        #expect(empty == .object([:]))
        #expect(none == .array([]))
    }

    @Test func aNameGivenTwiceKeepsTheLastValue() {
        let value = JSONValue(dictionaryLiteral: ("a", 1), ("b", 2), ("a", 3))
        #expect(value == .object(["a": .number(3), "b": .number(2)]))
        let composed = JSONValue(dictionaryLiteral: ("\u{E9}", 1), ("e\u{301}", 2))
        #expect(composed == .object(["\u{E9}": .number(2)]), "names String compares as equal are one name")
    }

    @Test func aMigrationWritesLiteralsAndNilStillRemoves() throws {
        let dir = try TemporaryDirectory()
        try write("{\"legacy\": 1, \"soundLevel\": 80}", to: dir.file())
        let step = Defaults.Migration(to: 1) { values in
            values["count"] = 5
            values["volume"] = 0.8
            values["enabled"] = true
            values["name"] = "Guest"
            values["tags"] = ["a", "b"]
            values["window"] = ["width": 800, "height": 600]
            values["cleared"] = .null
            values["legacy"] = nil
            if values["soundLevel"] == 80 { values["soundLevel"] = nil }
        }
        let defaults = try openFresh(dir.file(), options: .init(migrations: [step]))
        #expect(defaults.integer(forKey: "count") == 5)
        #expect(defaults.object(forKey: "cleared") == .null)
        #expect(!defaults.hasStoredValue(forKey: "legacy"), "assigning nil removes the member")
        #expect(!defaults.hasStoredValue(forKey: "soundLevel"))
        #expect(
            try text(dir.file()) == """
                {
                  "$schemaVersion": 1,
                  "cleared": null,
                  "count": 5,
                  "enabled": true,
                  "name": "Guest",
                  "tags": ["a","b"],
                  "volume": 0.8,
                  "window": {"height":600,"width":800}
                }

                """)
    }
}
