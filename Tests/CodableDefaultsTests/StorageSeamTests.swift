import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The store's in-memory side against the storage seam, through the memory engine: what it writes, and
/// outside changes reported member by member (the way a remote engine's watch reports them).
@Suite struct StorageSeamTests {
    /// A `Defaults` on its own memory storage, and the storage.
    private func opened(_ saveMode: Defaults.SaveMode = .manual) -> (Defaults, MemoryStorage) {
        let storage = MemoryStorage()
        let store = Store(storage: storage, options: .default)
        return (Defaults(store: store, saveMode: saveMode, url: nil), storage)
    }

    private func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aFlushWritesEveryChangedMemberAndOnlyThose() throws {
        let (defaults, storage) = opened()
        defaults[.volume] = 0.25
        defaults[.profile] = Profile(name: "Ann", age: 3)
        #expect(try storage.read()?.members == [], "nothing is written before the flush")
        try defaults.save()
        let members = try #require(try storage.read()?.members)
        #expect(members.map(\.key) == ["profile", "volume"])
        #expect(members.map { String(decoding: $0.value, as: UTF8.self) } == ["{\"age\":3,\"name\":\"Ann\"}", "0.25"])
        defaults.reset(.volume)
        try defaults.save()
        #expect(try storage.read()?.members.map(\.key) == ["profile"])
    }

    @Test func anOutsideChangeReachesReadsAndObserversOnce() async throws {
        let (defaults, storage) = opened()
        let seen = Recorder<Double>()
        let token = defaults.observe(.volume) { seen.append($0.newValue) }
        storage.inject([MemberChange(name: "volume", value: json("0.75"))])
        #expect(try await eventually { seen.values == [0.75] })
        #expect(defaults[.volume] == 0.75)
        #expect(
            !defaults.store.state.withLock { $0.members.cells[MemberName("volume")]!.isDirty }, "saved, not a change")
        storage.inject([MemberChange(name: "volume", value: nil)])
        #expect(try await eventually { seen.values == [0.75, 0.5] })
        #expect(!defaults.hasStoredValue(for: .volume))
        token.cancel()
    }

    @Test func anUnsavedLocalChangeWinsOverAnOutsideChangeAndIsWrittenOverIt() async throws {
        let (defaults, storage) = opened()
        defaults[.count] = 1
        try await defaults.save()
        defaults[.count] = 2
        storage.inject([MemberChange(name: "count", value: json("3")), MemberChange(name: "other", value: json("4"))])
        defaults.store.takeInOutsideChanges()
        #expect(defaults[.count] == 2, "the unsaved change stays")
        #expect(defaults.integer(forKey: "other") == 4, "the outside change of another key is taken in")
        try await defaults.save()
        let members = try #require(try storage.read()?.members)
        #expect(members.map { "\($0.key)=\(String(decoding: $0.value, as: UTF8.self))" } == ["count=2", "other=4"])
    }

    @Test func outsideChangesFoundWhileWritingAreTakenInAndTold() async throws {
        let (defaults, storage) = opened()
        let seen = Recorder<Set<String>>()
        let token = defaults.observeAll { seen.append($0) }
        // Not signalled (no one runs the queue's check before the write): the write finds it.
        storage.inject([MemberChange(name: "theirs", value: json("\"x\""))])
        defaults[.count] = 5
        try await defaults.save()
        #expect(defaults.string(forKey: "theirs") == "x")
        #expect(try await eventually { seen.values.contains(["theirs"]) })
        token.cancel()
    }

    @Test func aSetAfterAModifyOfAnUnsavedKeyListsItOnceForTheNextSave() throws {
        let (defaults, storage) = opened()
        defaults[.count] = 1
        try defaults.modify(.count) { $0 = 2 }  // Writes 2 and clears the key's unsaved flag.
        defaults[.count] = 3
        defaults.set(4, forKey: "other")
        #expect(defaults.store.state.withLock { $0.members.dirty.map(\.name) } == ["count", "other"])
        try defaults.save()
        let members = try #require(try storage.read()?.members)
        #expect(members.map { "\($0.key)=\(String(decoding: $0.value, as: UTF8.self))" } == ["count=3", "other=4"])
        #expect(defaults.store.state.withLock { $0.members.dirty.isEmpty })
    }

    @Test func discardingRevertsToWhatTheStorageHolds() throws {
        let (defaults, _) = opened()
        defaults[.count] = 1
        try defaults.save()
        defaults[.count] = 2
        defaults.discardUnsavedChanges()
        #expect(defaults[.count] == 1)
    }

    @Test func aValueThatFailsToEncodeIsRevertedInMemoryToo() throws {
        struct Unencodable: Codable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
            init() {}
            init(from decoder: any Decoder) throws {}
        }
        let defaults = Defaults.inMemory()
        defaults.set(Unencodable(), forKey: "bad")
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .encodingFailed)
        #expect(!defaults.hasStoredValue(forKey: "bad"))
    }
}
