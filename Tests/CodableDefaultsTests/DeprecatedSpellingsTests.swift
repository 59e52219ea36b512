import CodableDefaults
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The spellings replaced when the API took one spelling per act (see `Defaults+Deprecated.swift`) still compile
/// and do what their replacements do (`flushAll()` only compiles: it would save other tests' stores). The tests are
/// deprecated themselves, so calling the old API warns nowhere.
@Suite struct DeprecatedSpellingsTests {
    @available(*, deprecated, message: "tests the deprecated spellings")
    @Test func theReplacedSpellingsDoWhatTheirReplacementsDo() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try Defaults(url: url, saveMode: .manual)
        let volume = Defaults.Key<Double>("volume", default: 0.5)
        let theme = Defaults.Key<String>("theme", default: "light")
        #expect(!defaults.hasStoredValue(volume))
        defaults[volume] = 0.8
        #expect(defaults.hasStoredValue(volume) == defaults.hasStoredValue(for: volume))
        #expect(defaults.hasStoredValue(volume))
        #expect(defaults.source(of: volume) == defaults.source(for: volume))
        #expect(try defaults.layeredValues(of: volume) == defaults.layeredValues(for: volume))

        try defaults.flush()
        #expect(try String(contentsOf: url, encoding: .utf8).contains("\"volume\": 0.8"))

        var values = defaults.updates(volume).makeAsyncIterator()
        #expect(await values.next() == 0.8)
        var names = defaults.updates(of: volume, theme).makeAsyncIterator()
        #expect(await names.next() == ["volume", "theme"])
        var listed = defaults.updates(of: [volume, theme]).makeAsyncIterator()
        #expect(await listed.next() == ["volume", "theme"])

        // `flushAll()` saves every store open in the process, other tests' stores with their planned faults
        // among them (a save of theirs between two of their steps spends a fault, or writes what they expect
        // unwritten): it is named here, so that it still compiles, and not called. What it calls, the saving of
        // every open store, `SaveAllTests` tests on the stores of its own directory.
        _ = Defaults.flushAll
    }
}
