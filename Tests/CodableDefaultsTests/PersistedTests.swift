import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaults

/// The settings struct of the issue, on a given store.
struct PlayerSettings: Sendable {
    @Persisted var volume: Double
    @Persisted var profile: Profile
    @Persisted var token: String?
    @Persisted var launches: Int
    @Persisted var typedVolume: Double

    init(store: Defaults) {
        _volume = Persisted(wrappedValue: 0.5, key: "volume", store: store)
        _profile = Persisted(wrappedValue: Profile(name: "Guest", age: 0), key: "profile", store: store)
        _token = Persisted(key: "token", store: store)
        _launches = Persisted(wrappedValue: 0, key: "launches", store: store)
        _typedVolume = Persisted(.volume, store: store)
    }
}

/// The same, declared the way users write it, with the attribute's arguments.
struct DeclaredSettings: Sendable {
    static let store = Defaults.inMemory()
    @Persisted(key: "volume", store: store) var volume: Double = 0.5
    @Persisted(key: "token", store: store) var token: String?
    @Persisted(key: "launches", store: store) var launches = 0
    @Persisted(.profile, store: store) var profile
}

/// A final class holding wrappers: checked by hand, as the docs recommend.
final class SettingsModel: @unchecked Sendable {
    @Persisted var count: Int
    init(store: Defaults) { _count = Persisted(wrappedValue: 0, key: "count", store: store) }
}

actor SettingsActor {
    @Persisted var count: Int
    init(store: Defaults) { _count = Persisted(wrappedValue: 0, key: "count", store: store) }
    func increment() { count += 1 }
}

/// Compiles only if `Persisted<T>` is `Sendable` for a `Sendable` `T`.
func requireSendable<T: Sendable>(_: T.Type) {}

/// Global settings: a `Sendable` settings value in a `static let` (property wrappers are not allowed at top
/// level, and a wrapped `static var` would be global mutable state).
enum App {
    static let settings = PlayerSettings(store: Defaults.inMemory())
}

@Suite struct PersistedTests {
    @Test func readsWritesAndResetsThroughTheStore() {
        let store = Defaults.inMemory()
        let settings = PlayerSettings(store: store)
        #expect(settings.volume == 0.5)
        #expect(settings.token == nil)
        #expect(settings.launches == 0)
        settings.volume = 0.9
        settings.profile.age += 1
        settings.token = "t"
        settings.launches += 1
        #expect(store[.volume] == 0.9)
        #expect(settings.typedVolume == 0.9)
        #expect(store[.profile] == Profile(name: "Guest", age: 1))
        #expect(store[.token] == "t")
        settings.token = nil
        #expect(!settings.$token.hasStoredValue)
        #expect(settings.$volume.hasStoredValue)
        settings.$volume.reset()
        #expect(settings.volume == 0.5)
        #expect(settings.$volume.key.name == "volume")
        #expect(settings.$volume.key.defaultValue == 0.5)
    }

    @Test func attributeSyntaxWorks() {
        let settings = DeclaredSettings()
        settings.launches += 2
        settings.volume = 0.1
        settings.profile.name = "P"
        #expect(DeclaredSettings.store[Defaults.Key<Int>("launches", default: 0)] == 2)
        #expect(DeclaredSettings().volume == 0.1)
        #expect(DeclaredSettings().profile.name == "P")
    }

    @Test func declaringAPropertyNeverOverwritesAStoredValue() throws {
        let dir = try TemporaryDirectory()
        try write("{\"launches\": 41, \"volume\": 0.7}", to: dir.file())
        let store = try openFresh(dir.file())
        let settings = PlayerSettings(store: store)
        #expect(settings.launches == 41)
        #expect(settings.volume == 0.7)
        try store.save()
        #expect(try text(dir.file()) == "{\"launches\": 41, \"volume\": 0.7}", "nothing written by declaring")
    }

    @Test func twoWrappersSeeEachOthersWritesAndChanges() async throws {
        let store = Defaults.inMemory()
        let first = PlayerSettings(store: store)
        let model = SettingsModel(store: store)
        let actor = SettingsActor(store: store)
        let seen = Recorder<Double>()
        let token = first.$volume.observe { seen.append($0.newValue) }
        let second = PlayerSettings(store: store)
        second.volume = 0.2
        #expect(first.volume == 0.2)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in PlayerSettings(store: store).volume = 0.3 }
        #expect(first.volume == 0.3)
        #expect(seen.values == [0.2, 0.3])
        model.count = 5
        await actor.increment()
        #expect(model.count == 6)
        _ = token
    }

    @Test func valueThatDoesNotDecodeReadsAsDefaultAndIsKept() throws {
        let dir = try TemporaryDirectory()
        try write("{\"volume\": \"loud\"}", to: dir.file())
        let store = try openFresh(dir.file())
        let errors = ErrorLog()
        store.onError = errors.handler
        let settings = PlayerSettings(store: store)
        #expect(settings.volume == 0.5)
        #expect(errors.errors.map(\.key) == ["volume"])
        settings.launches = 1
        try store.save()
        #expect(try text(dir.file()) == "{\n  \"launches\": 1,\n  \"volume\": \"loud\"\n}\n")
    }

    @Test func readsUseTheCacheAndWrappersDoNotLeakSlots() {
        let store = Defaults.inMemory()
        for _ in 0..<1000 { _ = PlayerSettings(store: store).volume }
        #expect(store.store.slotCount < 10, "slots of released keys are dropped: \(store.store.slotCount)")
    }

    @Test func updatesFollowTheProperty() async {
        let store = Defaults.inMemory()
        let settings = PlayerSettings(store: store)
        var iterator = settings.$launches.updates.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        settings.launches = 3
        #expect(await iterator.next() == 3)
    }

    @Test func persistedIsSendable() {
        requireSendable(Persisted<Int>.self)
        requireSendable(Persisted<Profile>.self)
        requireSendable(PlayerSettings.self)
    }

    @Test func globalSettingsInAStaticLet() {
        App.settings.launches += 1
        App.settings.launches += 1
        #expect(App.settings.launches == 2)
    }

    @Test func localPropertyWorks() {
        let store = Defaults.inMemory()
        @Persisted(key: "local", store: store) var setting: Int = 1
        #expect(setting == 1)
        setting = 2
        #expect(store[Defaults.Key<Int>("local", default: 0)] == 2)
    }
}
