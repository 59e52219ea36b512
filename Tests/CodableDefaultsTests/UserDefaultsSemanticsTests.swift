import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Domains, string keys, typed getters and coercions, suites and `standard`.
@Suite struct UserDefaultsSemanticsTests {
    @Test func domainsInLookupOrder() throws {
        let dir = try TemporaryDirectory()
        let defaults = try Defaults(
            url: dir.file(), saveMode: .manual, arguments: ["program", "-count", "100", "-other", "x"])
        let count = Defaults.Key<Int>("count", default: -1)
        let fresh = Defaults.Key<Int>("fresh", default: -1)
        #expect(defaults[count] == 100, "argument domain first")
        defaults.register(defaults: ["count": 7, "fresh": 3])
        #expect(defaults[count] == 100)
        #expect(defaults[fresh] == 3, "registered when nothing is stored")
        defaults[fresh] = 4
        #expect(defaults[fresh] == 4, "stored before registered")
        defaults.removeValue(forKey: "fresh")
        #expect(defaults[fresh] == 3, "remove reverts to the registered value")
        defaults.register(defaults: ["fresh": 5])
        #expect(defaults[fresh] == 5, "a later registration replaces the earlier one")

        // A set of an argument key persists, but reads keep the argument's value.
        defaults.set(42, forKey: "count")
        #expect(defaults.integer(forKey: "count") == 100)
        #expect(defaults[count] == 100)
        #expect(defaults.hasStoredValue(forKey: "count"))
        try defaults.save()
        let file = try text(dir.file())
        #expect(file == "{\n  \"count\": 42\n}\n", "argument and registered values are never written")
        #expect(try openFresh(dir.file())[count] == 42)
    }

    /// A batch reads through the same domains as the store: what it removed reads as the registered value,
    /// and an argument value wins over what it set.
    @Test func domainsInLookupOrderInsideABatch() throws {
        let dir = try TemporaryDirectory()
        let defaults = try Defaults(url: dir.file(), saveMode: .manual, arguments: ["program", "-count", "100"])
        let count = Defaults.Key<Int>("count", default: -1)
        let fresh = Defaults.Key<Int>("fresh", default: -1)
        defaults.register(defaults: ["fresh": 3])
        defaults[fresh] = 4
        defaults.batch { batch in
            #expect(batch[fresh] == 4)
            batch.reset(fresh)
            #expect(batch[fresh] == 3, "a removal in a batch reverts to the registered value")
            batch[count] = 7
            #expect(batch[count] == 100, "the argument domain comes first in a batch too")
        }
        #expect(defaults[fresh] == 3)
        #expect(defaults[count] == 100)
    }

    @Test func stringKeysAndTypedValues() {
        let defaults = Defaults.inMemory()
        defaults.register(defaults: ["count": 7, "name": "Guest"])
        #expect(defaults.integer(forKey: "count") == 7)
        #expect(defaults.integer(forKey: "missing") == 0)
        defaults.set(42, forKey: "count")
        #expect(defaults.integer(forKey: "count") == 42)
        defaults.set(Profile(name: "A", age: 3), forKey: "profile")
        #expect(defaults.value(Profile.self, forKey: "profile") == Profile(name: "A", age: 3))
        #expect(defaults.object(forKey: "profile") == .object(["name": .string("A"), "age": .number(3)]))
        #expect(defaults[.profile] == Profile(name: "A", age: 3), "typed and string keys share values")
        defaults.removeValue(forKey: "count")
        #expect(defaults.integer(forKey: "count") == 7)
        defaults.set(nil as Int?, forKey: "name")
        #expect(defaults.string(forKey: "name") == "Guest")
        #expect(
            defaults.dictionaryRepresentation() == [
                "count": .number(7), "name": .string("Guest"),
                "profile": .object(["name": .string("A"), "age": .number(3)]),
            ])
    }

    @Test func storedNullIsNotAMissingValue() throws {
        let dir = try TemporaryDirectory()
        try write("{\"n\": null}", to: dir.file())
        let defaults = try openFresh(dir.file())
        #expect(defaults.object(forKey: "n") == .null)
        #expect(defaults.object(forKey: "missing") == nil)
        #expect(defaults.dictionaryRepresentation() == ["n": .null])
    }

    @Test func parsingJSONTextIsStrict() throws {
        #expect(
            try JSONValue(parsing: " {\"a\": [1, 2.5, \"x\", true, null]} ")
                == .object(["a": .array([.number(1), .number(2.5), .string("x"), .bool(true), .null])]))
        #expect(try JSONValue(parsing: "18446744073709551615") == .number(JSONNumber(UInt64.max)))
        let error = #expect(throws: DefaultsError.self) { try JSONValue(parsing: "{\"a\": 1,\n \"a\": 2}") }
        #expect(error?.code == .invalidJSON)
        #expect(error?.line == 2)
        #expect(error?.column == 2)
        #expect(throws: DefaultsError.self) { try JSONValue(parsing: "hello") }
        #expect(try JSONValue(parsing: "1e400").description == "1e400", "a number beyond Double is kept")
    }

    @Test func suitesOfOtherApplications() throws {
        let url = try Defaults.suiteURL(named: "prefs", application: "other-app")
        #expect(url.lastPathComponent == "prefs.json")
        #expect(url.deletingLastPathComponent().path == Defaults.standardDirectory(forApplication: "other-app").path)
        #expect(throws: DefaultsError.self) { try Defaults.suiteURL(named: "prefs", application: "../escape") }
    }

    @Test func setNilRemovesAndNeverLoops() {
        let defaults = Defaults.inMemory()
        defaults.set("x", forKey: "k")
        defaults.set(nil as String?, forKey: "k")
        #expect(defaults.object(forKey: "k") == nil)
        #expect(!defaults.hasStoredValue(forKey: "k"))
    }

    @Test func integersStayExact() {
        let defaults = Defaults.inMemory()
        defaults.set(Int64.max, forKey: "big")
        defaults.set(UInt64.max, forKey: "bigger")
        #expect(defaults.object(forKey: "big") == .number(JSONNumber(Int64.max)))
        #expect(defaults.object(forKey: "bigger") == .number(JSONNumber(UInt64.max)))
        #expect(defaults.integer(forKey: "big") == Int.max)
        #expect(defaults.value(UInt64.self, forKey: "bigger") == .max)
    }

    // Each row: the stored JSON, then integer, double, bool and string of it.
    static let coercionRows: [(json: String, integer: Int, double: Double, bool: Bool, string: String?)] = [
        ("12", 12, 12, true, "12"),
        ("0", 0, 0, false, "0"),
        ("-3", -3, -3, true, "-3"),
        ("2.75", 2, 2.75, true, "2.75"),
        ("-2.75", -2, -2.75, true, "-2.75"),
        ("1e300", 0, 1e300, true, "1e300"),
        ("true", 1, 1, true, "1"),
        ("false", 0, 0, false, "0"),
        ("\"12\"", 12, 12, true, "12"),
        ("\" 12.7 \"", 12, 12.7, true, " 12.7 "),
        ("\"YES\"", 0, 0, true, "YES"),
        ("\"true\"", 0, 0, true, "true"),
        ("\"yes\"", 0, 0, true, "yes"),
        ("\"1\"", 1, 1, true, "1"),
        ("\"0\"", 0, 0, false, "0"),
        ("\"no\"", 0, 0, false, "no"),
        ("\"abc\"", 0, 0, false, "abc"),
        ("\"+Infinity\"", 0, .infinity, true, "+Infinity"),
        // Where Foundation differs (see "Coming from UserDefaults"): it reads a leading number and ignores the
        // rest ("12abc" → 12, "1e3" → 1), and takes a string starting with Y or T as true.
        ("\"12abc\"", 0, 0, false, "12abc"),
        ("\"1e3\"", 1000, 1000, true, "1e3"),
        ("\"Y\"", 0, 0, false, "Y"),
        ("\"0.5\"", 0, 0.5, true, "0.5"),
        ("1.0", 1, 1, true, "1.0"),
        ("null", 0, 0, false, nil),
        ("[1]", 0, 0, false, nil),
        ("{\"a\":1}", 0, 0, false, nil),
    ]

    @Test(arguments: coercionRows.indices)
    func coercionTable(row index: Int) throws {
        let row = Self.coercionRows[index]
        let dir = try TemporaryDirectory()
        try write("{\"v\": \(row.json)}", to: dir.file())
        let defaults = try openFresh(dir.file())
        #expect(defaults.integer(forKey: "v") == row.integer, "integer of \(row.json)")
        #expect(defaults.double(forKey: "v") == row.double, "double of \(row.json)")
        #expect(defaults.float(forKey: "v") == Float(row.double), "float of \(row.json)")
        #expect(defaults.bool(forKey: "v") == row.bool, "bool of \(row.json)")
        #expect(defaults.string(forKey: "v") == row.string, "string of \(row.json)")
    }

    @Test func missingKeysGiveTheUserDefaultsResults() {
        let defaults = Defaults.inMemory()
        #expect(defaults.integer(forKey: "x") == 0)
        #expect(defaults.double(forKey: "x") == 0)
        #expect(defaults.float(forKey: "x") == 0)
        #expect(defaults.bool(forKey: "x") == false)
        #expect(defaults.string(forKey: "x") == nil)
        #expect(defaults.data(forKey: "x") == nil)
        #expect(defaults.url(forKey: "x") == nil)
        #expect(defaults.array(forKey: "x") == nil)
        #expect(defaults.stringArray(forKey: "x") == nil)
        #expect(defaults.dictionary(forKey: "x") == nil)
        #expect(defaults.object(forKey: "x") == nil)
        #expect(defaults.value(Int.self, forKey: "x") == nil)
    }

    @Test func containersDataAndURLs() {
        let defaults = Defaults.inMemory()
        defaults.set(["a", "b"], forKey: "strings")
        defaults.set([1, 2], forKey: "numbers")
        defaults.set(["k": 1], forKey: "dict")
        defaults.set(Data([0, 1, 255]), forKey: "data")
        defaults.set(URL(string: "https://example.com/x?y=1")!, forKey: "web")
        defaults.set(URL(fileURLWithPath: "/tmp/a b"), forKey: "file")
        defaults.set("/etc/hosts", forKey: "path")
        #expect(defaults.stringArray(forKey: "strings") == ["a", "b"])
        #expect(defaults.stringArray(forKey: "numbers") == nil)
        #expect(defaults.array(forKey: "numbers") == [.number(1), .number(2)])
        #expect(defaults.dictionary(forKey: "dict") == ["k": .number(1)])
        #expect(defaults.data(forKey: "data") == Data([0, 1, 255]))
        #expect(defaults.url(forKey: "web") == URL(string: "https://example.com/x?y=1"))
        #expect(defaults.url(forKey: "file") == URL(fileURLWithPath: "/tmp/a b"))
        #expect(defaults.url(forKey: "path") == URL(fileURLWithPath: "/etc/hosts"))
        #expect(defaults.url(forKey: "strings") == nil)
    }

    @Test func argumentParsing() {
        let parsed = ArgumentDomain.parse([
            "program", "-n", "3", "-name", "x y", "-flag", "true", "-list", "[1,2]", "--verbose", "-quoted",
            "\"q\"", "-neg", "-5", "-", "-obj", "{\"a\": 1}", "--", "-after", "1",
        ])
        func json(_ name: String) -> String? { parsed[MemberName(name)].map { String(decoding: $0, as: UTF8.self) } }
        #expect(json("n") == "3")
        #expect(json("name") == "\"x y\"")
        #expect(json("flag") == "true")
        #expect(json("list") == "[1,2]")
        #expect(json("quoted") == "\"q\"")
        #expect(json("neg") == "-5")
        #expect(json("obj") == "{\"a\":1}")
        #expect(json("verbose") == nil)
        #expect(json("after") == nil)
        #expect(parsed.count == 7)
    }

    @Test func argumentValuesReadThroughEveryAPI() {
        let store = Store(storage: MemoryStorage(), options: .default)
        let defaults = Defaults(store: store, saveMode: .manual, url: nil)
        _ = store.setArguments(ArgumentDomain.parse(["p", "-n", "3", "-name", "x y", "-list", "[1,2]"]))
        #expect(defaults.integer(forKey: "n") == 3)
        #expect(defaults.string(forKey: "name") == "x y")
        #expect(defaults.array(forKey: "list") == [.number(1), .number(2)])
        #expect(defaults[Defaults.Key<[Int]>("list", default: [])] == [1, 2])
        #expect(defaults.keys.isEmpty, "arguments are not stored")
    }

    @Test(arguments: ["", ".", "..", "a/b", "/abs", "nul\u{0}byte", String(repeating: "x", count: 251)])
    func invalidSuiteNamesAreRefused(name: String) {
        let error = #expect(throws: DefaultsError.self) { try Defaults.suiteURL(name) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func suitesLiveBesideStandard() throws {
        let url = try Defaults.suiteURL("com.example.shared")
        #expect(url.deletingLastPathComponent().path == Defaults.standardDirectory.path)
        #expect(url.lastPathComponent == "com.example.shared.json")
        #expect(try Defaults.suiteURL(String(repeating: "x", count: 250)).lastPathComponent.utf8.count == 255)
    }

    @Test func standardDirectoryRules() throws {
        func path(_ environment: [String: String]) -> String {
            Defaults.standardDirectory(environment: environment, applicationIdentifier: "app").path
        }
        #expect(path(["CODABLE_DEFAULTS_DIRECTORY": "/override", "XDG_CONFIG_HOME": "/xdg"]) == "/override")
        #if canImport(Darwin)
            // Application Support in the user's domain; XDG_CONFIG_HOME is a Linux convention, ignored here.
            let support = try #require(
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first)
            #expect(path(["XDG_CONFIG_HOME": "/xdg"]) == support.appendingPathComponent("app").path)
            #expect(path(["CODABLE_DEFAULTS_DIRECTORY": ""]) == support.appendingPathComponent("app").path)
        #else
            #expect(path(["XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"]) == "/xdg/app")
            #expect(path(["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"]) == "/home/u/.config/app")
            #expect(path(["HOME": "/home/u"]) == "/home/u/.config/app")
            #expect(path(["CODABLE_DEFAULTS_DIRECTORY": "", "HOME": "/home/u"]) == "/home/u/.config/app")
        #endif
    }

    @Test func storeThatFailsToLoadServesDefaultsAndNeverWritesOverTheFile() throws {
        let dir = try TemporaryDirectory()
        try write("{\"count\": 1,", to: dir.file())
        let before = try bytes(dir.file())
        let errors = ErrorLog()
        let defaults = Defaults.open(tolerating: dir.file(), arguments: ["p"], onError: errors.handler)
        #expect(defaults.loadError?.code == .invalidJSON)
        #expect(errors.errors.map(\.code) == [.invalidJSON], "the load error is reported once")
        #expect(defaults[.count] == 0)
        defaults.register(defaults: ["count": 5])
        #expect(defaults[.count] == 5)
        defaults[.count] = 9
        #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(try bytes(dir.file()) == before)
        // Fixed by hand: the next save merges into it and the load error clears.
        try write("{\"other\": 1}", to: dir.file())
        try defaults.save()
        #expect(defaults.loadError == nil)
        #expect(try text(dir.file()) == "{\n  \"count\": 9,\n  \"other\": 1\n}\n")
    }
}
