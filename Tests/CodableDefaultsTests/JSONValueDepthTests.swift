import CodableDefaultsTestSupport
import Testing

@testable import CodableDefaults

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `JSONValue` nests as deeply as the store's ``Defaults/Options/maximumDepth`` allows, no less.
@Suite struct JSONValueDepthTests {
    /// `[[...[1]...]]`, `depth` arrays deep.
    static func nested(_ depth: Int) -> JSONValue {
        var value: JSONValue = .number(1)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }

    @Test func aDeeperLimitStoresAndReadsDeeperValues() throws {
        let dir = try TemporaryDirectory()
        let options = Defaults.Options(maximumDepth: 1000)
        let key = Defaults.Key<JSONValue>("deep", default: .null)
        let defaults = try openFresh(dir.file(), options: options)
        try defaults.set(Self.nested(600), for: key)
        try defaults.save()
        #expect(try openFresh(dir.file(), options: options).value(for: key) == Self.nested(600))

        let error = try #require(throws: DefaultsError.self) { try defaults.set(Self.nested(1000), for: key) }
        #expect(error.code == .encodingFailed)
        #expect(error.message.contains("at most 999"), "\(error.message)")
        #expect(error.message.contains("limit of 1000"), "\(error.message)")
    }

    @Test func aFileWrittenWithADeeperLimitReadsBackAsJSONValue() throws {
        let dir = try TemporaryDirectory()
        let deep = String(repeating: "[", count: 700) + "1" + String(repeating: "]", count: 700)
        try write("{\"deep\": \(deep)}\n", to: dir.file())
        let defaults = try openFresh(dir.file(), options: Defaults.Options(maximumDepth: 701))
        let value = try defaults.value(for: Defaults.Key<JSONValue>("deep", default: .null))
        #expect(value == Self.nested(700))
    }
}
