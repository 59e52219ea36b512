import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaults

@Suite struct DefaultsTests {
    @Test func readsDefaultsWhenNothingIsStored() {
        let defaults = Defaults.inMemory()
        #expect(defaults[.volume] == 0.5)
        #expect(defaults[.profile] == Profile(name: "Guest", age: 0))
        #expect(defaults[.token] == nil)
        #expect(defaults.keys.isEmpty)
        #expect(!defaults.hasStoredValue(for: .volume))
    }

    @Test func setReadResetAndOptionalNilRemoves() throws {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 0.8
        defaults[.profile].age += 1
        defaults[.token] = "abc"
        #expect(defaults[.volume] == 0.8)
        #expect(defaults[.profile] == Profile(name: "Guest", age: 1))
        #expect(defaults[.token] == "abc")
        #expect(defaults.keys == ["profile", "token", "volume"])
        #expect(defaults.hasStoredValue(for: .token))

        defaults[.token] = nil
        #expect(defaults[.token] == nil)
        #expect(!defaults.hasStoredValue(for: .token))

        defaults.reset(.volume, .profile)
        #expect(defaults[.volume] == 0.5)
        #expect(defaults[.profile] == Profile(name: "Guest", age: 0))
        #expect(defaults.keys.isEmpty)
        #expect(try defaults.value(for: .volume) == 0.5)
    }

    @Test func removeAllRevertsEveryKey() {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 1
        defaults[.count] = 3
        defaults.removeAll()
        #expect(defaults.keys.isEmpty)
        #expect(defaults[.volume] == 0.5)
        #expect(defaults[.count] == 0)
    }

    @Test func inMemoryStoresAreIndependentAndNeverTouchDisk() throws {
        let a = Defaults.inMemory()
        let b = Defaults.inMemory()
        a[.count] = 1
        #expect(b[.count] == 0)
        #expect(a.url == nil)
        try a.save()
        try a.reload()
        #expect(a[.count] == 1)
    }

    @Test func twoKeyObjectsWithOneNameShareTheValue() {
        let defaults = Defaults.inMemory()
        let asInt = Defaults.Key<Int>("n", default: 0)
        let asDouble = Defaults.Key<Double>("n", default: 0)
        let asString = Defaults.Key<String>("n", default: "none")
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults[asInt] = 42
        #expect(defaults[asDouble] == 42.0)
        #expect(defaults[asString] == "none")
        #expect(errors.errors.map(\.code) == [.decodingFailed])
        defaults[asDouble] = 2.5
        #expect(defaults[asInt] == 0)  // 2.5 is not an Int: default, and reported
        #expect(errors.errors.count == 2)
        #expect(defaults[asDouble] == 2.5)
    }

    @Test func keysMayBeAnyString() throws {
        let dir = try TemporaryDirectory()
        let names = ["a.b/c", "", "with \"quotes\" and \\", "tab\there", "ünïcødé 🎛️", "line\nbreak", "\u{1}"]
        do {
            let defaults = try openFresh(dir.file())
            for (index, name) in names.enumerated() { defaults[Defaults.Key<Int>(name, default: -1)] = index }
            try defaults.save()
        }
        let reopened = try openFresh(dir.file())
        for (index, name) in names.enumerated() {
            #expect(reopened[Defaults.Key<Int>(name, default: -1)] == index)
        }
        #expect(Set(reopened.keys) == Set(names))
    }

    @Test func twoDefaultsOnOneFileShareOneStore() throws {
        let dir = try TemporaryDirectory()
        let first = try Defaults(url: dir.file(), saveMode: .manual)
        // Another spelling of the same path (through a directory that exists: `..` after a missing one names no
        // file, as for the kernel).
        try FileManager.default.createDirectory(
            at: dir.url.appendingPathComponent("sub"), withIntermediateDirectories: true)
        let second = try Defaults(url: dir.url.appendingPathComponent("./sub/../settings.json"))
        first[.count] = 7
        #expect(second[.count] == 7)
        second.reset(.count)
        #expect(first[.count] == 0)
        #expect(first.store === second.store)
    }

    @Test func symlinkedStorePathWritesTheTarget() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("real.json")
        try write("{}\n", to: target)
        let link = dir.file("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let defaults = try Defaults(url: link, saveMode: .manual)
        defaults[.count] = 5
        try defaults.save()
        #expect(try text(target) == "{\n  \"count\": 5\n}\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
    }

    @Test func loudReadThrowsForAValueThatDoesNotDecode() throws {
        let dir = try TemporaryDirectory()
        try write("{\"volume\": \"loud\"}", to: dir.file())
        let defaults = try openFresh(dir.file())
        let errors = ErrorLog()
        defaults.onError = errors.handler
        #expect(defaults[.volume] == 0.5)
        #expect(defaults[.volume] == 0.5)
        #expect(errors.errors.count == 1, "reported once per stored value, not at every read")
        let error = try #require(errors.errors.first)
        #expect(error.code == .decodingFailed)
        #expect(error.key == "volume")
        #expect(error.path == dir.file().path)
        #expect(throws: DefaultsError.self) { try defaults.value(for: .volume) }
        #expect(defaults.hasStoredValue(for: .volume))
    }

    @Test func loudWriteThrowsWhenAValueCannotBeEncoded() throws {
        struct Refuses: Codable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
            init() {}
            init(from decoder: any Decoder) throws {}
        }
        let defaults = Defaults.inMemory()
        let key = Defaults.Key<Refuses>("refuses", default: Refuses())
        #expect(throws: DefaultsError.self) { try defaults.set(Refuses(), for: key) }
        #expect(!defaults.hasStoredValue(for: key))
        try defaults.set(0.25, for: .volume)
        #expect(defaults[.volume] == 0.25)
    }

    @Test func rejectsURLsThatAreNotFiles() throws {
        #expect(throws: DefaultsError.self) { try Defaults(url: URL(string: "https://example.com/x.json")!) }
        let dir = try TemporaryDirectory()
        let error = #expect(throws: DefaultsError.self) { try Defaults(url: dir.url) }
        #expect(error?.code == .notARegularFile || error?.code == .invalidArgument)
    }

    /// A user type's `==` runs outside the store's lock, so it may use the store itself.
    @Test func userEqualityMayUseTheStore() {
        let defaults = Defaults.inMemory()
        StoreReadingValue.store.withLock { $0 = defaults }
        let key = Defaults.Key<StoreReadingValue>("v", default: StoreReadingValue(number: 0))
        let finished = DispatchSemaphore(value: 0)
        Thread {
            defaults[key] = StoreReadingValue(number: 1)
            _ = defaults[key]
            defaults[key] = StoreReadingValue(number: 1)  // compared with ==, which reads the store
            finished.signal()
        }.start()
        #expect(finished.wait(timeout: .now() + 60) == .success, "a == that uses the store must not deadlock")
        #expect(defaults[key].number == 1)
    }
}

/// An `Equatable` value whose `==` reads the store it is kept in.
struct StoreReadingValue: Codable, Sendable, Equatable {
    static let store = LockedBox<Defaults?>(nil)
    var number: Int

    static func == (lhs: Self, rhs: Self) -> Bool {
        _ = store.withLock { $0 }?[.count]
        return lhs.number == rhs.number
    }
}

/// A value behind a lock, for test globals.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
