import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaults

@Suite struct ObservationTests {
    @Test func firesOnRealChangesOnly() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<[Double]>()
        let token = defaults.observe(.volume) { seen.append([$0.oldValue, $0.newValue]) }
        defaults[.volume] = 0.8
        defaults[.volume] = 0.8
        defaults[.volume] = 0.5  // stored, equal to the default: the effective value changes from 0.8
        defaults.reset(.volume)  // effective value stays 0.5: nothing
        defaults[.count] = 3  // another key
        #expect(seen.values == [[0.5, 0.8], [0.8, 0.5]])
        token.cancel()
    }

    @Test func initialOptionFiresOnceAtOnce() {
        let defaults = Defaults.inMemory()
        defaults[.count] = 4
        let seen = Recorder<[Int]>()
        let token = defaults.observe(.count, options: [.initial]) { seen.append([$0.oldValue, $0.newValue]) }
        #expect(seen.values == [[4, 4]])
        defaults[.count] = 5
        #expect(seen.values == [[4, 4], [4, 5]])
        _ = token
    }

    @Test func nonEquatableValuesCompareAsJSON() {
        struct Point: Codable, Sendable { var x: Int }
        let defaults = Defaults.inMemory()
        let key = Defaults.Key<Point>("p", default: Point(x: 0))
        let seen = Recorder<Int>()
        let token = defaults.observe(key) { seen.append($0.newValue.x) }
        defaults[key] = Point(x: 1)
        defaults[key] = Point(x: 1)
        defaults[key] = Point(x: 2)
        #expect(seen.values == [1, 2])
        _ = token
    }

    @Test func removeResetRemoveAllAndReloadFire() async throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let seen = Recorder<Int>()
        let token = defaults.observe(.count) { seen.append($0.newValue) }
        defaults[.count] = 1
        defaults.reset(.count)
        defaults[.count] = 2
        defaults.removeAll()
        defaults[.count] = 3
        try await defaults.save()
        try write("{\"count\": 9}", to: dir.file())
        try await defaults.reload()
        try await defaults.reload()
        // Told by the reload, or (on the store's queue, maybe after the reload returns) by the watcher that
        // read the file first: wait for the call rather than expect it to have happened already.
        #expect(try await eventually { seen.values == [1, 0, 2, 0, 3, 9] }, "\(seen.values)")
        _ = token
    }

    @Test func stringKeyObserverSeesJSON() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<[JSONValue?]>()
        let token = defaults.observe(forKey: "a.b/c") { seen.append([$0.oldValue, $0.newValue]) }
        defaults[Defaults.Key<Int>("a.b/c", default: 0)] = 7
        defaults[Defaults.Key<[String]>("a.b/c", default: [])] = ["x"]
        defaults[Defaults.Key<Int>("a.b/c", default: 0)] = 7
        defaults.reset(Defaults.Key<Int>("a.b/c", default: 0))
        #expect(
            seen.values == [
                [nil, .number(7)], [.number(7), .array([.string("x")])], [.array([.string("x")]), .number(7)],
                [.number(7), nil],
            ])
        _ = token
    }

    @Test func observeAllGetsTheChangedNames() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<Set<String>>()
        let token = defaults.observeAll { seen.append($0) }
        defaults[.count] = 1
        defaults[.count] = 1
        defaults.batch {
            $0[.volume] = 0.1
            $0[.token] = "t"
        }
        defaults.removeAll()
        #expect(seen.values == [["count"], ["token", "volume"], ["count", "token", "volume"]])
        _ = token
    }

    @Test func batchNotifiesOncePerKeyWithTheValueBeforeTheBatch() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .immediate)
        defaults[.count] = 1
        let writesBefore = defaults.store.writeCount
        let counts = Recorder<[Int]>()
        let profiles = Recorder<String>()
        let volumes = Recorder<Double>()
        let tokens = [
            defaults.observe(.count) { counts.append([$0.oldValue, $0.newValue]) },
            defaults.observe(.profile) { profiles.append($0.newValue.name) },
            defaults.observe(.volume) { volumes.append($0.newValue) },
        ]
        defaults.batch { batch in
            batch[.count] = 2
            batch[.count] += 5
            #expect(batch[.count] == 7)
            #expect(defaults[.count] == 1, "others see nothing until the batch is applied")
            batch[.profile].name = "B"
            batch[.volume] = 0.9
            batch[.volume] = 0.5  // back where it started
        }
        #expect(counts.values == [[1, 7]])
        #expect(profiles.values == ["B"])
        #expect(volumes.values.isEmpty)
        #expect(defaults.store.writeCount == writesBefore + 1)
        #expect(try openFresh(dir.file())[.count] == 7)
        _ = tokens
    }

    @Test func throwingBatchChangesNothing() throws {
        struct Stop: Error {}
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .immediate)
        defaults[.count] = 1
        let before = try bytes(dir.file())
        let seen = Recorder<Int>()
        let token = defaults.observe(.count) { seen.append($0.newValue) }
        #expect(throws: Stop.self) {
            try defaults.batch { batch throws(Stop) in
                batch[.count] = 2
                batch[.volume] = 0.1
                throw Stop()
            }
        }
        #expect(defaults[.count] == 1)
        #expect(!defaults.hasStoredValue(for: .volume))
        #expect(seen.values.isEmpty)
        #expect(try bytes(dir.file()) == before)
        _ = token
    }

    @Test func handlersMayWriteTheStoreWithoutEndlessRecursion() {
        let defaults = Defaults.inMemory()
        // Clamps its own key: runs again once, for the clamped value, and stops.
        let calls = Recorder<Int>()
        let clamp = defaults.observe(.count) { change in
            calls.append(change.newValue)
            if change.newValue > 10 { defaults[.count] = 10 }
        }
        // Mirrors one key into another.
        let mirror = defaults.observe(.volume) { defaults[Defaults.Key<Double>("mirror", default: 0)] = $0.newValue }
        defaults[.count] = 50
        defaults[.volume] = 0.25
        #expect(defaults[.count] == 10)
        #expect(calls.values == [50, 10])
        #expect(defaults[Defaults.Key<Double>("mirror", default: 0)] == 0.25)
        _ = (clamp, mirror)
    }

    /// Two observers whose handlers write each other's keys, changed from two threads at once: a delivery
    /// never waits for another observer's delivery, so this cannot deadlock.
    @Test func mirroringObserversOnTwoThreadsDoNotDeadlock() {
        let defaults = Defaults.inMemory()
        let a = Defaults.Key<Int>("a", default: 0)
        let b = Defaults.Key<Int>("b", default: 0)
        let tokens = [
            defaults.observe(a) { change in defaults[b] = change.newValue },
            defaults.observe(b) { change in defaults[a] = change.newValue },
        ]
        let finished = DispatchGroup()
        for key in [a, b] {
            finished.enter()
            Thread {
                for value in 1...2_000 { defaults[key] = value }
                finished.leave()
            }.start()
        }
        #expect(finished.wait(timeout: .now() + 60) == .success, "the two writers finished")
        _ = tokens
    }

    @Test func cancelledTokensNeverFire() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<Int>()
        let token = defaults.observe(.count) { seen.append($0.newValue) }
        defaults[.count] = 1
        token.cancel()
        token.cancel()
        defaults[.count] = 2
        #expect(seen.values == [1])
        #expect(defaults.store.observerCount == 0)

        do {
            let released = defaults.observe(.count) { seen.append($0.newValue) }
            _ = released
        }
        defaults[.count] = 3
        #expect(seen.values == [1])
        #expect(defaults.store.observerCount == 0)
    }

    @Test func cancelFromInsideTheHandler() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<Int>()
        let box = TokenBox()
        box.token = defaults.observe(.count) { change in
            seen.append(change.newValue)
            box.token?.cancel()
        }
        defaults[.count] = 1
        defaults[.count] = 2
        #expect(seen.values == [1])
    }

    /// Two handlers running at once on two threads, each cancelling the other's token: a cancel from inside a
    /// handler does not wait for the other delivery (which waits too), so both return; neither handler is
    /// called again afterwards.
    @Test func handlersOnTwoThreadsCancellingEachOtherDoNotDeadlock() {
        let defaults = Defaults.inMemory()
        let a = Defaults.Key<Int>("a", default: 0)
        let b = Defaults.Key<Int>("b", default: 0)
        let aToken = TokenBox()
        let bToken = TokenBox()
        let aRunning = DispatchSemaphore(value: 0)
        let bRunning = DispatchSemaphore(value: 0)
        let calls = Recorder<String>()
        aToken.token = defaults.observe(a) { _ in
            calls.append("a")
            aRunning.signal()
            // Both handlers are running before either cancels, so each cancel finds the other delivering.
            if bRunning.wait(timeout: .now() + 30) == .timedOut { Issue.record("b's handler never ran") }
            bToken.token?.cancel()
        }
        bToken.token = defaults.observe(b) { _ in
            calls.append("b")
            bRunning.signal()
            if aRunning.wait(timeout: .now() + 30) == .timedOut { Issue.record("a's handler never ran") }
            aToken.token?.cancel()
        }
        let finished = DispatchGroup()
        for key in [a, b] {
            finished.enter()
            Thread {
                defaults[key] = 1
                finished.leave()
            }.start()
        }
        let done = finished.wait(timeout: .now() + 30)
        #expect(done == .success, "the two handlers cancelling each other deadlocked")
        guard done == .success else { return }
        defaults[a] = 2
        defaults[b] = 2
        #expect(calls.values.sorted() == ["a", "b"], "no call after the cancels")
        #expect(defaults.store.observerCount == 0)
    }

    @Test func cancelRacingChangesOnOtherThreads() {
        let defaults = Defaults.inMemory()
        for _ in 0..<50 {
            let cancelled = Recorder<Bool>()
            let lateCalls = Recorder<Int>()
            let token = defaults.observe(.count) { change in
                if !cancelled.values.isEmpty { lateCalls.append(change.newValue) }
            }
            DispatchQueue.concurrentPerform(iterations: 3) { worker in
                if worker == 0 {
                    token.cancel()
                    cancelled.append(true)
                } else {
                    for value in 0..<200 { defaults[.count] = value * 10 + worker }
                }
            }
            #expect(lateCalls.values.isEmpty)
        }
        #expect(defaults.store.observerCount == 0)
    }

    @Test func eachObserverSeesAnUnbrokenChainAcrossThreads() {
        let defaults = Defaults.inMemory()
        let seen = Recorder<[Int]>()
        let token = defaults.observe(.count) { seen.append([$0.oldValue, $0.newValue]) }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for value in 1...500 { defaults[.count] = value * 4 + worker }
        }
        let pairs = seen.values
        #expect(!pairs.isEmpty)
        #expect(pairs.first?[0] == 0)
        for (previous, next) in zip(pairs, pairs.dropFirst()) { #expect(previous[1] == next[0]) }
        #expect(pairs.last?[1] == defaults[.count])
        _ = token
    }

    @Test func observersOfOtherKeysAreNotCalled() {
        let defaults = Defaults.inMemory()
        let calls = Recorder<Int>()
        let tokens = (0..<1000).map { index in
            defaults.observe(Defaults.Key<Int>("other-\(index)", default: 0)) { calls.append($0.newValue) }
        }
        for value in 1...100 { defaults[.count] = value }
        #expect(calls.values.isEmpty)
        #expect(defaults.store.observerCount == 1000)
        _ = tokens
    }

    @Test func updatesStartWithTheCurrentValueAndFollowChanges() async {
        let defaults = Defaults.inMemory()
        defaults[.count] = 1
        var iterator = defaults.updates(for: .count).makeAsyncIterator()
        #expect(await iterator.next() == 1)
        defaults[.count] = 2
        defaults[.count] = 2
        defaults[.count] = 3
        #expect(await iterator.next() == 2)
        #expect(await iterator.next() == 3)
        #expect(defaults.store.observerCount == 1)
    }

    @Test func updatesReleaseTheirObserverWhenTheTaskIsCancelled() async throws {
        let defaults = Defaults.inMemory()
        let seen = Recorder<Int>()
        let task = Task {
            for await value in defaults.updates(for: .count) { seen.append(value) }
        }
        #expect(try await eventually { seen.values == [0] })
        defaults[.count] = 5
        #expect(try await eventually { seen.values == [0, 5] })
        task.cancel()
        await task.value
        #expect(try await eventually { defaults.store.observerCount == 0 })
    }

    @Test func updatesReleaseTheirObserverWhenTheSequenceIsDropped() async throws {
        let defaults = Defaults.inMemory()
        do {
            let sequence = defaults.updates(for: .count)
            #expect(defaults.store.observerCount == 1)
            _ = sequence
        }
        #expect(try await eventually { defaults.store.observerCount == 0 })
    }

    @Test func changesSavedByAnotherStoreReachObserversOnTheStoreQueue() async throws {
        let dir = try TemporaryDirectory()
        let mine = try openFresh(dir.file())
        let theirs = try openFresh(dir.file())
        let seen = Recorder<Int>()
        let token = mine.observe(.count) { seen.append($0.newValue) }
        theirs[.count] = 8
        try await theirs.save()
        mine[.volume] = 0.3
        try await mine.save()  // merges the other store's write
        #expect(try await eventually { seen.values == [8] })
        #expect(try text(dir.file()) == "{\n  \"count\": 8,\n  \"volume\": 0.3\n}\n")
        _ = token
    }

    /// observeAll on a store that knows no names yet hears of another store's write.
    @Test func observeAllHearsTheFirstOutsideWrite() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let a = try openFresh(url)
        let names = Locked<[Set<String>]>([])
        let told = DispatchSemaphore(value: 0)
        let token = a.observeAll { n in
            names.withLock { $0.append(n) }
            if n.contains("count") { told.signal() }
        }
        let b = try openFresh(url)
        b[.count] = 5
        try await b.save()
        // Told by the reload, or (on the store's queue, maybe after the reload returns) by the watcher that
        // read the file first: wait for the call rather than expect it to have happened already.
        try await a.reload()
        #expect(a[.count] == 5)
        #expect(await told.signaled(within: 30), "observeAll was not told about count")
        #expect(names.withLock { $0 } == [["count"]])
        _ = token
    }
}

final class TokenBox: @unchecked Sendable {
    var token: ObservationToken?
}
