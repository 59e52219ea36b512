import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Observation
import Testing

@testable import CodableDefaults

/// Counts the `onChange` calls of one tracking, and signals each.
final class ChangeSignal: Sendable {
    private let storage = Locked(0)
    private let semaphore = DispatchSemaphore(value: 0)

    /// How many times `onChange` ran.
    var count: Int { storage.withLock { $0 } }

    /// The `onChange` closure.
    var handler: @Sendable () -> Void {
        {
            self.storage.withLock { $0 += 1 }
            self.semaphore.signal()
        }
    }

    /// Waits for an `onChange` call, up to `timeout` seconds. Returns whether it came.
    func wait(timeout: Double = 30) -> Bool {
        semaphore.wait(timeout: .now() + timeout) == .success
    }
}

/// Runs `read` inside `withObservationTracking` and returns what counts its `onChange` calls.
func tracking<T>(_ read: () -> T) -> ChangeSignal {
    let signal = ChangeSignal()
    _ = withObservationTracking(read, onChange: signal.handler)
    return signal
}

/// A model of an app: an `@Observable` class whose settings live in a store.
@Observable final class PlayerModel {
    @ObservationIgnored @Persisted var volume: Double
    var title = "Player"

    init(store: Defaults) {
        _volume = Persisted(wrappedValue: 0.5, key: "volume", store: store)
    }
}

/// `Defaults` and `@Persisted` take part in Observation: a tracked read is told of each change of what it read.
@Suite struct ObservableTests {
    @Test func aSetFiresTheTrackingOfTheKeyRead() {
        let defaults = Defaults.inMemory()
        let signal = tracking { defaults[.volume] }
        #expect(signal.count == 0)
        defaults[.volume] = 0.8
        #expect(signal.count == 1)
    }

    @Test func aModifyFiresTheTrackingOfTheKeyReadOnce() throws {
        let dir = try TemporaryDirectory()
        let defaults = try Defaults(url: dir.file(), saveMode: .manual)
        let signal = tracking { defaults[.count] }
        try defaults.modify(.count) { $0 += 1 }
        #expect(signal.count == 1)
        #expect(defaults[.count] == 1)
    }

    @Test func aChangeOfAKeyNotReadDoesNotFire() {
        let defaults = Defaults.inMemory()
        defaults[.count] = 1
        let signal = tracking { defaults[.volume] }
        defaults[.count] = 2
        defaults.reset(.count)
        defaults.register(defaults: ["count": 7])
        // Local changes are told before the call returns: nothing came for `count`.
        #expect(signal.count == 0)
        defaults[.volume] = 0.9
        #expect(signal.count == 1)
    }

    @Test func settingAnEqualValueDoesNotFire() {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 0.8
        let signal = tracking { defaults[.volume] }
        defaults[.volume] = 0.8
        #expect(signal.count == 0)
        defaults[.volume] = 0.7
        #expect(signal.count == 1)
    }

    @Test func resetFires() {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 0.8
        let signal = tracking { defaults[.volume] }
        defaults.reset(.volume)
        #expect(signal.count == 1)
        #expect(defaults[.volume] == 0.5)
    }

    @Test func removeAllFires() {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 0.8
        let signal = tracking { defaults[.volume] }
        defaults.removeAll()
        #expect(signal.count == 1)
    }

    @Test func registeringADefaultFires() {
        let defaults = Defaults.inMemory()
        let signal = tracking { defaults[.volume] }
        defaults.register(defaults: ["volume": 0.25])
        #expect(signal.count == 1)
        #expect(defaults[.volume] == 0.25)
    }

    @Test func aBatchFiresOnceWithAllOfItsChangesInPlace() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<[Double]>()
        _ = withObservationTracking {
            (defaults[.volume], defaults[.count])
        } onChange: {
            seen.append([defaults[.volume], Double(defaults[.count])])
        }
        defaults.batch { batch in
            batch[.volume] = 0.1
            batch[.count] = 3
            batch[.volume] = 0.2
        }
        #expect(seen.values == [[0.2, 3]])
    }

    @Test func reloadFiresForWhatAnotherStoreSaved() throws {
        let dir = try TemporaryDirectory()
        let mine = try openFresh(dir.file())
        let signal = tracking { mine[.volume] }
        let theirs = try openFresh(dir.file())
        theirs[.volume] = 0.3
        try theirs.save()
        // The tracked read started the watcher, which may take the save in before the reload does (then the
        // reload finds nothing new, and the watcher's notice comes on the store's queue): wait for the signal.
        try mine.reload()
        #expect(signal.wait())
        #expect(mine[.volume] == 0.3)
    }

    @Test func anotherWritersSaveFiresWithoutAReload() throws {
        let dir = try TemporaryDirectory()
        try write("{\n  \"volume\": 0.5\n}\n", to: dir.file())
        let mine = try openFresh(dir.file())
        let signal = tracking { mine[.volume] }
        // The tracked read started the watcher: the other writer's file reaches the tracking.
        #expect(mine.store.isWatching)
        try write("{\n  \"volume\": 0.75\n}\n", to: dir.file())
        #expect(signal.wait())
        #expect(mine[.volume] == 0.75)
    }

    @Test func discardingUnsavedChangesFires() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.volume] = 0.8
        try defaults.save()
        defaults[.volume] = 0.9
        let signal = tracking { defaults[.volume] }
        defaults.discardUnsavedChanges()
        #expect(signal.count == 1)
        #expect(defaults[.volume] == 0.8)
    }

    @Test func anArgumentDomainFires() throws {
        let dir = try TemporaryDirectory()
        let defaults = try Defaults(url: dir.file(), saveMode: .manual)
        let signal = tracking { defaults[.volume] }
        // A second `Defaults` on the file shares its store and sets its argument domain.
        let withArguments = try Defaults(url: dir.file(), saveMode: .manual, arguments: ["tool", "-volume", "0.4"])
        #expect(signal.count == 1)
        #expect(withArguments[.volume] == 0.4)
        #expect(defaults[.volume] == 0.4)
    }

    @Test func theLoudReadAndTheStringGettersRegisterTheirKey() throws {
        let defaults = Defaults.inMemory()
        let loud = tracking { try? defaults.value(for: .volume) }
        let integer = tracking { defaults.integer(forKey: "count") }
        let typed = tracking { defaults.value(Int.self, forKey: "count") }
        let stored = tracking { defaults.hasStoredValue(for: .volume) }
        let storedByName = tracking { defaults.hasStoredValue(forKey: "count") }
        defaults[.volume] = 0.8
        #expect((loud.count, stored.count) == (1, 1))
        #expect((integer.count, typed.count, storedByName.count) == (0, 0, 0))
        defaults.set(4, forKey: "count")
        #expect((integer.count, typed.count, storedByName.count) == (1, 1, 1))
    }

    @Test func keysFiresWhenANameComesOrGoesNotWhenAValueChanges() {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 0.8
        let signal = tracking { defaults.keys }
        defaults[.volume] = 0.9
        #expect(signal.count == 0)
        defaults[.count] = 1
        #expect(signal.count == 1)
        let again = tracking { defaults.keys }
        defaults.reset(.count)
        #expect(again.count == 1)
    }

    @Test func dictionaryRepresentationFiresForANewNameAndForAValueItHolds() {
        let defaults = Defaults.inMemory()
        defaults[.volume] = 0.8
        let names = tracking { defaults.dictionaryRepresentation() }
        defaults.register(defaults: ["count": 2])
        #expect(names.count == 1)
        let values = tracking { defaults.dictionaryRepresentation() }
        defaults[.volume] = 0.9
        #expect(values.count == 1)
    }

    @Test func persistedInAnObservableClassTellsItsObservers() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let model = PlayerModel(store: defaults)
        let direct = tracking { model.volume }
        model.volume = 0.6
        #expect(direct.count == 1)
        // A change from another source: the store itself, through its key.
        let other = tracking { model.volume }
        defaults[Defaults.Key<Double>("volume", default: 0.5)] = 0.7
        #expect(other.count == 1)
        #expect(model.volume == 0.7)
        // The model's own observed properties still work beside it.
        let title = tracking { model.title }
        model.volume = 0.2
        #expect(title.count == 0)
        model.title = "Settings"
        #expect(title.count == 1)
    }

    @Test func persistedFiresForAnotherWritersSave() throws {
        let dir = try TemporaryDirectory()
        try write("{\n  \"volume\": 0.5\n}\n", to: dir.file())
        let model = PlayerModel(store: try openFresh(dir.file()))
        let signal = tracking { model.volume }
        try write("{\n  \"volume\": 0.25\n}\n", to: dir.file())
        #expect(signal.wait())
        #expect(model.volume == 0.25)
    }

    @Test func anUntrackedReadMakesNothingAndStartsNoWatcher() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        _ = defaults[.volume]
        _ = defaults.keys
        let marked = defaults.store.state.withLock { state in
            state.members.cells[MemberName("volume")]?.observedPath != nil || state.observers.membership != nil
        }
        #expect(!marked)
        #expect(!defaults.store.isWatching)
    }

    @Test func trackedReadsFromManyThreadsAllFire() async {
        let defaults = Defaults.inMemory()
        let signals = await withTaskGroup(of: ChangeSignal.self) { group in
            for _ in 0..<8 { group.addTask { tracking { defaults[.volume] } } }
            var signals: [ChangeSignal] = []
            for await signal in group { signals.append(signal) }
            return signals
        }
        defaults[.volume] = 0.1
        #expect(signals.map(\.count) == Array(repeating: 1, count: 8))
    }
}
