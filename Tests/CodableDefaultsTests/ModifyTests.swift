import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaults

/// `modify`: atomic read-modify-write updates, in a process and through the storage's lock.
@Suite struct ModifyTests {
    /// Runs `body` on another thread and waits for it at most `timeout` seconds: a `modify` that deadlocks
    /// fails the test instead of hanging it.
    private func bounded(timeout: Double = 20, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done.wait(timeout: .now() + timeout) == .success
    }

    /// In memory, so that 80,000 updates take no 80,000 fsyncs; the store's lock is the same as a file's.
    @Test func eightThreadsOfTenThousandIncrementsLoseNone() throws {
        let store = Store(storage: MemoryStorage(), options: .default)
        try store.load()
        // Two handles on one store, as `Defaults(url:)` gives for one file.
        let first = Defaults(store: store, saveMode: .manual, url: nil)
        let second = Defaults(store: store, saveMode: .immediate, url: nil)
        let threads = 8
        let increments = 10_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let handle = thread % 2 == 0 ? first : second
            for _ in 0..<increments {
                do { try handle.modify(.count) { $0 += 1 } } catch { Issue.record(error) }
            }
        }
        #expect(first[.count] == threads * increments)
        #expect(second[.count] == threads * increments)
    }

    @Test func threadsAndHandlesOfOneFileLoseNoIncrement() throws {
        let dir = try TemporaryDirectory()
        let first = try Defaults(url: dir.file(), saveMode: .manual)
        let second = try Defaults(url: dir.file(), saveMode: .afterIdle(.milliseconds(1)))
        let errors = ErrorLog()
        first.onError = errors.handler
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            let handle = thread % 2 == 0 ? first : second
            for _ in 0..<50 {
                do { try handle.modify(.count) { $0 += 1 } } catch { Issue.record(error) }
            }
        }
        #expect(first[.count] == 400)
        #expect(try openFresh(dir.file())[.count] == 400)
        #expect(errors.errors.isEmpty)
    }

    @Test func storesOfOneFileInAProcessUpdateAtomicallyThroughTheLockFile() throws {
        let dir = try TemporaryDirectory()
        let stores = try (0..<4).map { _ in try openFresh(dir.file()) }
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            for _ in 0..<100 {
                do { try stores[index].modify(.count) { $0 += 1 } } catch { Issue.record(error) }
            }
        }
        #expect(try openFresh(dir.file())[.count] == 400)
    }

    @Test func theUpdateStartsFromWhatAnotherWriterSavedWithoutAReload() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let other = try openFresh(dir.file())
        other[.count] = 41
        try other.save()
        #expect(defaults[.count] == 0)
        let seen = try defaults.modify(.count) { value -> Int in
            value += 1
            return value
        }
        #expect(seen == 42)
        #expect(defaults[.count] == 42)
        #expect(try openFresh(dir.file())[.count] == 42)
    }

    @Test func theUpdateIsDurableAtOnceWhateverTheSaveModeAndLeavesOtherChangesPending() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .manual)
        defaults[.volume] = 0.9
        try defaults.modify(.count) { $0 = 7 }
        let reopened = try openFresh(dir.file())
        #expect(reopened[.count] == 7)
        #expect(!reopened.hasStoredValue(for: .volume))
        try defaults.save()
        #expect(try openFresh(dir.file())[.volume] == 0.9)
    }

    @Test func anUnsavedLocalValueIsWhatTheClosureSees() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.count] = 10
        try defaults.modify(.count) { $0 += 1 }
        #expect(defaults[.count] == 11)
        #expect(try openFresh(dir.file())[.count] == 11)
        #expect(!defaults.store.state.withLock { $0.members.cells[MemberName("count")]!.isDirty })
    }

    @Test func aClosureThatChangesNothingWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        try defaults.modify(.count) { $0 += 1 }
        let writes = defaults.store.writeCount
        try defaults.modify(.count) { _ in }
        try defaults.modify(.volume) { _ in }
        #expect(defaults.store.writeCount == writes)
        #expect(!defaults.hasStoredValue(for: .volume))
    }

    @Test func theClosureGetsTheRegisteredValueWhenNothingIsStored() throws {
        let defaults = Defaults.inMemory()
        defaults.register(defaults: ["count": 5])
        try defaults.modify(.count) { $0 += 1 }
        #expect(defaults[.count] == 6)
        #expect(defaults.hasStoredValue(for: .count))
    }

    @Test func settingNilRemovesTheStoredValue() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.token] = "secret"
        try defaults.save()
        try defaults.modify(.token) { $0 = nil }
        #expect(!defaults.hasStoredValue(for: .token))
        #expect(!(try openFresh(dir.file()).hasStoredValue(for: .token)))
    }

    @Test func theArgumentDomainIsNotAppliedToTheClosureAndKeepsOverridingReads() throws {
        let dir = try TemporaryDirectory()
        try write(#"{"count":10}"#, to: dir.file())
        let defaults = try Defaults(url: dir.file(), saveMode: .manual, arguments: ["tool", "-count", "5"])
        #expect(defaults[.count] == 5)
        let seen = try defaults.modify(.count) { value -> Int in
            value += 1
            return value
        }
        #expect(seen == 11)
        #expect(defaults[.count] == 5)
        #expect(try openFresh(dir.file())[.count] == 11)
    }

    @Test func observersAreToldOnceWithTheOldAndNewValue() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let changes = Recorder<Defaults.Change<Int>>()
        let token = defaults.observe(.count) { changes.append($0) }
        try defaults.modify(.count) { _ in }  // no change: no notification
        try defaults.modify(.count) { $0 += 3 }
        try defaults.modify(.count) { $0 += 1 }
        #expect(changes.values.map { [$0.oldValue, $0.newValue] } == [[0, 3], [3, 4]])
        token.cancel()
    }

    @Test func aClosureThatReadsTheStoreWorks() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.volume] = 0.25
        let finished = bounded {
            do {
                try defaults.modify(.count) { count in
                    count = Int(defaults[.volume] * 100) + defaults[.count] + defaults.keys.count
                }
            } catch {
                Issue.record(error)
            }
        }
        try #require(finished, "modify with a closure that reads the store did not return")
        #expect(defaults[.count] == 26)
    }

    @Test func aClosureThatSavesOrUpdatesTheSameStoreIsRefusedNotHung() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .immediate)
        let errors = ErrorLog()
        defaults.onError = errors.handler
        let refused = Recorder<DefaultsError.Code>()
        let finished = bounded {
            do {
                try defaults.modify(.count) { count in
                    count = 1
                    for call in [
                        { try defaults.save() }, { try defaults.reload() },
                        { try defaults.modify(.volume) { $0 = 1 } },
                    ]
                        as [() throws -> Void]
                    {
                        do { try call() } catch let error as DefaultsError { refused.append(error.code) }
                    }
                    defaults[.token] = "set inside"  // stored; its .immediate save is refused and reported
                    defaults.discardUnsavedChanges()  // refused and reported
                }
            } catch {
                Issue.record(error)
            }
        }
        try #require(finished, "modify with a closure that saves the same store did not return")
        #expect(refused.values == [.reentrantCall, .reentrantCall, .reentrantCall])
        #expect(errors.errors.map(\.code) == [.reentrantCall, .reentrantCall])
        #expect(errors.errors.first?.message.contains("inside a modify closure") == true)
        #expect(defaults[.count] == 1)
        #expect(defaults[.token] == "set inside")
        #expect(defaults[.volume] == 0.5)
        try defaults.save()
        let reopened = try openFresh(dir.file())
        #expect(reopened[.count] == 1)
        #expect(reopened[.token] == "set inside")
    }

    @Test func anotherThreadSavingDuringTheClosureWaitsAndDoesNotFail() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let updated = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                try defaults.modify(.count) { count in
                    entered.signal()
                    release.wait()
                    count = 2
                }
            } catch {
                Issue.record(error)
            }
            updated.signal()
        }
        try #require(entered.wait(timeout: .now() + 30) == .success)
        defaults[.volume] = 0.75
        release.signal()
        try defaults.save()  // waits for the update, then writes
        try #require(updated.wait(timeout: .now() + 30) == .success)
        let reopened = try openFresh(dir.file())
        #expect(reopened[.count] == 2)
        #expect(reopened[.volume] == 0.75)
    }

    @Test func aFailedWriteThrowsAndChangesNothing() throws {
        let dir = try TemporaryDirectory()
        var options = Defaults.Options.default
        options.maximumFileSize = 64
        let defaults = try openFresh(dir.file(), options: options)
        try defaults.modify(.count) { $0 = 1 }
        let before = try text(dir.file())
        let changes = Recorder<Defaults.Change<Profile>>()
        let token = defaults.observe(.profile) { changes.append($0) }
        #expect {
            try defaults.modify(.profile) { $0.name = String(repeating: "x", count: 100) }
        } throws: { ($0 as? DefaultsError)?.code == .fileTooLarge }
        #expect(defaults[.profile] == Profile(name: "Guest", age: 0))
        #expect(!defaults.hasStoredValue(for: .profile))
        #expect(try text(dir.file()) == before)
        // Nothing is pending either: a flush writes nothing.
        let writes = defaults.store.writeCount
        try defaults.save()
        #expect(defaults.store.writeCount == writes)
        try defaults.modify(.profile) { $0.age = 1 }
        #expect(changes.values.map(\.newValue) == [Profile(name: "Guest", age: 1)])
        token.cancel()
    }

    @Test func whatTheClosureThrowsIsRethrownAndNothingIsWritten() throws {
        struct Stop: Error {}
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        #expect(throws: Stop.self) {
            try defaults.modify(.count) { count in
                count = 9
                throw Stop()
            }
        }
        #expect(defaults[.count] == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.file().path))
    }

    @Test func aStoredValueThatDoesNotDecodeIsThrownAndKept() throws {
        let dir = try TemporaryDirectory()
        try write(#"{"count":"many"}"#, to: dir.file())
        let defaults = try openFresh(dir.file())
        defaults.onError = ErrorLog().handler
        #expect {
            try defaults.modify(.count) { $0 += 1 }
        } throws: { error in
            let error = error as? DefaultsError
            return error?.code == .decodingFailed && error?.key == "count"
        }
        #expect(try text(dir.file()) == #"{"count":"many"}"#)
    }

    @Test func reservedAndOverlongKeysAreRefused() throws {
        let defaults = Defaults.inMemory()
        #expect(throws: DefaultsError.self) {
            try defaults.modify(forKey: Defaults.schemaVersionKey) { $0 = 1 }
        }
        #expect(throws: DefaultsError.self) {
            try defaults.modify(forKey: String(repeating: "k", count: 100_000)) { $0 = 1 }
        }
    }

    @Test func persistedProjectedValueModifies() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let launches = Persisted(wrappedValue: 0, key: "launches", store: defaults)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<100 {
                do { try launches.projectedValue.modify { $0 += 1 } } catch { Issue.record(error) }
            }
        }
        #expect(launches.wrappedValue == 400)
        #expect(try openFresh(dir.file())[Defaults.Key<Int>("launches", default: 0)] == 400)
    }

    @Test func untypedModifyOfOneAndOfSeveralKeys() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        try defaults.modify(forKey: "recent") { value in
            #expect(value == nil)
            value = ["a.txt"]
        }
        try defaults.modify(forKey: "recent") { value in
            guard case .array(let items)? = value else {
                Issue.record("not an array")
                return
            }
            value = .array(items + ["b.txt"])
        }
        #expect(defaults.object(forKey: "recent") == ["a.txt", "b.txt"])
        let changed = Recorder<Set<String>>()
        let token = defaults.observeAll { changed.append($0) }
        try defaults.modify(forKeys: ["recent", "history"]) { values in
            values = [nil, values[0]]
        }
        #expect(changed.values == [["recent", "history"]])
        let reopened = try openFresh(dir.file())
        #expect(reopened.keys == ["history"])
        #expect(reopened.object(forKey: "history") == ["a.txt", "b.txt"])
        token.cancel()
    }

    @Test func untypedModifyRefusesARepeatedNameOrALostValue() throws {
        let defaults = Defaults.inMemory()
        #expect {
            try defaults.modify(forKeys: ["a", "a"]) { _ in }
        } throws: { ($0 as? DefaultsError)?.code == .invalidArgument }
        #expect {
            try defaults.modify(forKeys: ["a", "b"]) { $0 = [1] }
        } throws: { ($0 as? DefaultsError)?.code == .invalidArgument }
        #expect(defaults.keys.isEmpty)
    }

    @Test func inMemoryStoresTakeInAnotherWritersChangeFirst() throws {
        let storage = MemoryStorage()
        let store = Store(storage: storage, options: .default)
        try store.load()
        let defaults = Defaults(store: store, saveMode: .manual, url: nil)
        storage.inject([MemberChange(name: "count", value: Array("40".utf8))])
        try defaults.modify(.count) { $0 += 2 }
        #expect(defaults[.count] == 42)
    }
}
