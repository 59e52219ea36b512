import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// `updates(forAnyOf:options:)`, one sequence of the names that changed among several keys of any value types,
/// and the option to skip the current value, for it and for `updates(for:options:)`.
@Suite("Updates of several keys")
struct UpdatesTests {
    /// Each change is one element, in order; an equal value or an unwatched key yields nothing; a batch that
    /// changes several watched keys is one element.
    @Test func namesArriveInOrderAndABatchIsOneElement() async {
        let defaults = Defaults.inMemory()
        var names = defaults.updates(forAnyOf: .volume, .profile, .count, options: []).makeAsyncIterator()
        defaults[.volume] = 0.1
        defaults[.count] = 1
        defaults[.volume] = 0.1  // equal: nothing
        defaults[.token] = "unwatched"
        defaults.batch { batch in
            batch[.volume] = 0.2
            batch[.count] = 2
            batch[.token] = "still unwatched"
        }
        defaults[.profile].name = "Ann"
        defaults.reset(.count)
        #expect(await names.next() == ["volume"])
        #expect(await names.next() == ["count"])
        #expect(await names.next() == ["volume", "count"])
        #expect(await names.next() == ["profile"])
        #expect(await names.next() == ["count"])
        #expect(defaults.store.observerCount == 3)
    }

    /// A batch that changes several watched keys reaches the stream's observer once: each key's value is
    /// compared once, not once per changed name.
    @Test func aBatchComparesEachKeyOnce() async {
        let defaults = Defaults.inMemory()
        let first = Defaults.Key<Compared>("first", default: Compared(value: 0))
        let second = Defaults.Key<Compared>("second", default: Compared(value: 0))
        var names = defaults.updates(forAnyOf: first, second, options: []).makeAsyncIterator()
        let before = Compared.comparisons.withLock { $0 }
        defaults.batch { batch in
            batch[first] = Compared(value: 1)
            batch[second] = Compared(value: 2)
        }
        #expect(await names.next() == ["first", "second"])
        #expect(Compared.comparisons.withLock { $0 } - before == 2, "one comparison per key")
    }

    /// With `.initial` (the default) the first element names every key, a name given twice once.
    @Test func initialElementNamesEveryKey() async {
        let defaults = Defaults.inMemory()
        defaults[.count] = 4
        var names = defaults.updates(forAnyOf: [.count, .volume, .count]).makeAsyncIterator()
        #expect(await names.next() == ["count", "volume"])
        defaults[.count] = 5
        #expect(await names.next() == ["count"])
        #expect(defaults.store.observerCount == 2)
    }

    /// With `options: []` the first element is the first change, not the current value.
    @Test func skippingTheCurrentValue() async {
        let defaults = Defaults.inMemory()
        defaults[.count] = 4
        var names = defaults.updates(forAnyOf: .count, .volume, options: []).makeAsyncIterator()
        var values = defaults.updates(for: .count, options: []).makeAsyncIterator()
        defaults[.count] = 5
        #expect(await names.next() == ["count"])
        #expect(await values.next() == 5)
    }

    /// The single-key sequence still starts with the current value by default.
    @Test func singleKeyStartsWithTheCurrentValueByDefault() async {
        let defaults = Defaults.inMemory()
        defaults[.count] = 4
        var values = defaults.updates(for: .count).makeAsyncIterator()
        defaults[.count] = 5
        #expect(await values.next() == 4)
        #expect(await values.next() == 5)
    }

    /// Cancelling the task iterating the sequence unregisters its observer from every key.
    @Test func cancellingTheConsumerReleasesTheObserver() async throws {
        let defaults = Defaults.inMemory()
        let seen = Recorder<Set<String>>()
        let task = Task {
            for await names in defaults.updates(forAnyOf: .volume, .count) { seen.append(names) }
        }
        #expect(try await eventually { seen.values == [["volume", "count"]] })
        #expect(defaults.store.observerCount == 2)
        defaults[.count] = 1
        #expect(try await eventually { seen.values == [["volume", "count"], ["count"]] })
        task.cancel()
        await task.value
        #expect(try await eventually { defaults.store.observerCount == 0 })
    }

    /// Dropping the sequence unregisters its observer.
    @Test func droppingTheSequenceReleasesTheObserver() async throws {
        let defaults = Defaults.inMemory()
        do {
            let sequence = defaults.updates(forAnyOf: .volume, .count)
            #expect(defaults.store.observerCount == 2)
            _ = sequence
        }
        #expect(try await eventually { defaults.store.observerCount == 0 })
    }

    /// Another process's save reaches the sequence (delivered on the store's queue).
    @Test func outsideChangesArrive() async throws {
        let dir = try TemporaryDirectory()
        let mine = try openFresh(dir.file())
        let theirs = try openFresh(dir.file())
        var names = mine.updates(forAnyOf: .volume, .count, options: []).makeAsyncIterator()
        theirs[.count] = 8
        try await theirs.save()
        #expect(await names.next() == ["count"])
        #expect(mine[.count] == 8)
    }

    /// No keys: a sequence that yields nothing and registers no observer.
    @Test func noKeysRegistersNothing() {
        let defaults = Defaults.inMemory()
        let sequence = defaults.updates(forAnyOf: [])
        #expect(defaults.store.observerCount == 0)
        _ = sequence
    }
}

/// A value whose `==` counts its calls (one test uses it, so the count is not shared).
struct Compared: Codable, Sendable, Equatable {
    static let comparisons = Locked(0)
    var value: Int

    static func == (lhs: Compared, rhs: Compared) -> Bool {
        comparisons.withLock { $0 += 1 }
        return lhs.value == rhs.value
    }
}
