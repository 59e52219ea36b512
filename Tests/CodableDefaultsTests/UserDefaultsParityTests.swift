import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The behaviours Foundation's own `UserDefaults` tests pin (swift-corelibs-foundation,
/// `Tests/Foundation/TestUserDefaults.swift`), each through the same calls, and the one place we deliberately
/// differ from them.
@Suite struct UserDefaultsParityTests {
    @Test func registeredValuesReadBackThroughTheTypedGetters() {
        let bytes: [UInt8] = [0, 1, 2, 3, 4]
        let defaults = Defaults.inMemory()
        defaults.register(defaults: ["int": 5, "string": "hello", "data": Data(bytes)])
        defaults.register(defaults: ["url": URL(fileURLWithPath: "/hello/world")])
        defaults.register(defaults: ["boolText": "YES", "intText": "1234", "doubleText": "12.34"])
        for name in ["int", "string", "data", "url", "boolText", "intText", "doubleText"] {
            defaults.removeObject(forKey: name)
        }
        #expect(defaults.integer(forKey: "int") == 5)
        #expect(defaults.string(forKey: "string") == "hello")
        #expect(defaults.data(forKey: "data") == Data(bytes))
        #expect(defaults.url(forKey: "url") == URL(fileURLWithPath: "/hello/world"))
        #expect(defaults.bool(forKey: "boolText") == true)
        #expect(defaults.integer(forKey: "intText") == 1234)
        #expect(defaults.double(forKey: "doubleText") == 12.34)
    }

    @Test func storedValuesConvertAsFoundationsTestsExpect() {
        let defaults = Defaults.inMemory()
        func stored(_ value: some Codable & Sendable) -> Defaults {
            defaults.set(value, forKey: "key1")
            return defaults
        }
        #expect(stored("hello").string(forKey: "key1") == "hello")
        #expect(
            stored(URL(fileURLWithPath: "/hello/world")).url(forKey: "key1") == URL(fileURLWithPath: "/hello/world"))
        #expect(stored(Data([0, 1, 2, 3, 4])).data(forKey: "key1") == Data([0, 1, 2, 3, 4]))
        #expect(stored("YES").bool(forKey: "key1") == true)
        #expect(stored(true).integer(forKey: "key1") == 1)
        #expect(stored(12.34 as Float).integer(forKey: "key1") == 12)
        #expect(stored(12.34).integer(forKey: "key1") == 12)
        #expect(stored("1234").integer(forKey: "key1") == 1234)
        #expect(stored(true).float(forKey: "key1") == 1)
        #expect(stored(42).float(forKey: "key1") == 42)
        #expect(stored(12.34).float(forKey: "key1") == 12.34)
        #expect(stored("1234").float(forKey: "key1") == 1234)
        #expect(stored(true).double(forKey: "key1") == 1)
        #expect(stored(42).double(forKey: "key1") == 42)
        #expect(stored("12.34").double(forKey: "key1") == 12.34)
        #expect(stored(true).string(forKey: "key1") == "1")
        #expect(stored(false).string(forKey: "key1") == "0")
        #expect(stored(42).string(forKey: "key1") == "42")
        #expect(stored(12.34 as Float).string(forKey: "key1") == "12.34")
        #expect(stored(12.34).string(forKey: "key1") == "12.34")
    }

    /// Foundation expects `Double(12.34 as Float)` (12.340000152587890625): it keeps the `Float`'s binary value.
    /// The file holds the `Float`'s shortest text, `12.34`, so every reader of the file sees 12.34.
    @Test func aFloatReadsBackAsTheNumberItsTextSpells() throws {
        let dir = try TemporaryDirectory()
        let defaults = try Defaults(url: dir.file(), saveMode: .manual)
        defaults.set(12.34 as Float, forKey: "key1")
        #expect(defaults.double(forKey: "key1") == 12.34)
        #expect(defaults.double(forKey: "key1") != Double(12.34 as Float))
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"key1\": 12.34\n}\n")
    }

    /// The other differences the README and "Coming from UserDefaults" list, each as they state it.
    @Test func documentedDifferences() {
        let defaults = Defaults.inMemory()
        defaults.set(1.0, forKey: "k")
        #expect(defaults.string(forKey: "k") == "1")
        defaults.set(1e300, forKey: "k")
        #expect(defaults.string(forKey: "k") == "1e+300")
        #expect(defaults.integer(forKey: "k") == 0)
        defaults.set(Double.infinity, forKey: "k")
        #expect(defaults.string(forKey: "k") == "+Infinity")
        #expect(defaults.double(forKey: "k") == .infinity)
        #expect(defaults.integer(forKey: "k") == 0)
        defaults.set(-Double.infinity, forKey: "k")
        #expect(defaults.string(forKey: "k") == "-Infinity")
        defaults.set(Double.nan, forKey: "k")
        #expect(defaults.string(forKey: "k") == "NaN")
        #expect(defaults.double(forKey: "k").isNaN)
        defaults.set("inf", forKey: "k")
        #expect(defaults.double(forKey: "k") == .infinity)
        defaults.set("99999999999999999999", forKey: "k")
        #expect(defaults.integer(forKey: "k") == 0)
        defaults.set(Int64.max, forKey: "k")
        #expect(defaults.string(forKey: "k") == "9223372036854775807")
        defaults.set("yellow", forKey: "k")
        #expect(defaults.bool(forKey: "k") == false)
        defaults.set("T", forKey: "k")
        #expect(defaults.bool(forKey: "k") == false)
        defaults.set("AAEC", forKey: "k")
        #expect(defaults.data(forKey: "k") == Data([0, 1, 2]))
        defaults.set("https://example.com", forKey: "k")
        #expect(defaults.url(forKey: "k") == URL(string: "https://example.com"))
        defaults.set("docs/a.txt", forKey: "k")
        #expect(defaults.url(forKey: "k") == nil)
    }

    @Test func removeObjectIsRemoveValue() throws {
        let dir = try TemporaryDirectory()
        let defaults = try Defaults(url: dir.file(), saveMode: .manual)
        defaults.register(defaults: ["count": 7])
        defaults.set(8, forKey: "count")
        let changes = ChangeLog()
        let token = defaults.observe(forKey: "count") { change in changes.append(change.newValue) }
        defaults.removeObject(forKey: "count")
        #expect(!defaults.hasStoredValue(forKey: "count"))
        #expect(defaults.integer(forKey: "count") == 7, "reads fall back to the registered value")
        #expect(changes.values == [.number(7)])
        try defaults.save()
        #expect(try text(dir.file()) == "{}\n")
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults.removeObject(forKey: Defaults.schemaVersionKey)
        #expect(errors.errors.map(\.code) == [.reservedKey], "refused as removeValue(forKey:) refuses it")
        token.cancel()
    }
}

/// Collects the values an observer saw.
private final class ChangeLog: Sendable {
    private let storage = Locked<[JSONValue?]>([])

    var values: [JSONValue?] { storage.withLock { $0 } }

    func append(_ value: JSONValue?) { storage.withLock { $0.append(value) } }
}
