import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Counts its own encodes and decodes, per test (each test uses its own counter).
final class CodingCounter: @unchecked Sendable {
    private let lock = Lock()
    private var encodes = 0
    private var decodes = 0
    var encodeCount: Int { lock.withLock { encodes } }
    var decodeCount: Int { lock.withLock { decodes } }
    func encoded() { lock.withLock { encodes += 1 } }
    func decoded() { lock.withLock { decodes += 1 } }

    /// The counters by name, so a value decoded by the store finds the counter of its test.
    static let all = Locked<[String: CodingCounter]>([:])
    static func named(_ name: String) -> CodingCounter {
        all.withLock { all in
            if let counter = all[name] { return counter }
            let counter = CodingCounter()
            all[name] = counter
            return counter
        }
    }
}

/// A value that reports every encode and decode to the counter named in it.
struct Counted: Codable, Sendable, Equatable {
    var counter: String
    var number: Int

    enum CodingKeys: String, CodingKey {
        case counter, number
    }

    init(counter: String, number: Int) {
        self.counter = counter
        self.number = number
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        counter = try container.decode(String.self, forKey: .counter)
        number = try container.decode(Int.self, forKey: .number)
        CodingCounter.named(counter).decoded()
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(counter, forKey: .counter)
        try container.encode(number, forKey: .number)
        CodingCounter.named(counter).encoded()
    }
}

/// The cache promises: decode at most once, never re-encode unchanged values, decode nothing on load.
@Suite struct CacheTests {
    @Test func loadingDecodesNothingAndReadingDecodesOnce() throws {
        let dir = try TemporaryDirectory()
        let name = UUID().uuidString
        try write(
            "{\"a\": {\"counter\": \"\(name)\", \"number\": 1}, \"b\": {\"counter\": \"\(name)\", \"number\": 2}}",
            to: dir.file())
        let counter = CodingCounter.named(name)
        let defaults = try openFresh(dir.file())
        #expect(counter.decodeCount == 0, "opening decodes no value")
        let key = Defaults.Key<Counted>("a", default: Counted(counter: name, number: 0))
        for _ in 0..<100 { #expect(defaults[key].number == 1) }
        #expect(try defaults.value(for: key).number == 1)
        #expect(counter.decodeCount == 1, "an unchanged value is decoded once")
    }

    @Test func savingNeverReencodesUnchangedValues() throws {
        let dir = try TemporaryDirectory()
        let name = UUID().uuidString
        let counter = CodingCounter.named(name)
        let defaults = try openFresh(dir.file())
        let key = Defaults.Key<Counted>("c", default: Counted(counter: name, number: 0))
        defaults[key] = Counted(counter: name, number: 5)
        #expect(counter.encodeCount == 0, "a set does not encode")
        try defaults.save()
        #expect(counter.encodeCount == 1, "the save encodes it once")
        for value in 1...5 {
            defaults[.count] = value
            try defaults.save()
        }
        #expect(counter.encodeCount == 1, "later saves of other keys do not encode it again")
        #expect(defaults[key].number == 5)
        #expect(counter.decodeCount == 0, "the value set is served from the cache, not decoded")
    }
}
