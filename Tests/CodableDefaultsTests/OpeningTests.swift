import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Opening a store: one store per file per process, loaded outside any process-wide lock, and what the
/// opener can be told while the file loads.
@Suite struct OpeningTests {
    /// Runs `body` on a new thread; returns whether it finished within 30 s (a hang fails the test, bounded).
    func finishes(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + 30) == .success
    }

    /// A file at schema version 0 with one value, so that opening it with a migration runs the step.
    func unmigratedFile(_ dir: TemporaryDirectory, _ name: String = "settings.json") throws -> URL {
        let url = dir.file(name)
        try write("{\"count\": 1}", to: url)
        return url
    }

    @Test func aMigrationStepMayOpenAnotherStore() throws {
        let dir = try TemporaryDirectory()
        let old = dir.file("old.json")
        try write("{\"volume\": 0.25}", to: old)
        let url = try unmigratedFile(dir)
        let step = Defaults.Migration(to: 1) { values in
            let previous = try Defaults(url: old, saveMode: .manual)
            values["volume"] = JSONNumber(previous[.volume]).map(JSONValue.number)
        }
        let opened = LockedBox<Defaults?>(nil)
        let finished = finishes {
            do {
                let defaults = try Defaults(url: url, saveMode: .manual, options: .init(migrations: [step]))
                opened.withLock { $0 = defaults }
            } catch {
                Issue.record(error)
            }
        }
        #expect(finished, "a migration step that opens another store hung")
        let defaults = try #require(opened.withLock { $0 })
        #expect(defaults[.volume] == 0.25)
        #expect(defaults[.count] == 1)
    }

    @Test func aMigrationStepThatOpensItsOwnStoreGetsAClearError() throws {
        let dir = try TemporaryDirectory()
        let url = try unmigratedFile(dir)
        let inner = LockedBox<DefaultsError?>(nil)
        let step = Defaults.Migration(to: 1) { _ in
            do throws(DefaultsError) {
                _ = try Defaults(url: url, saveMode: .manual)
            } catch {
                inner.withLock { $0 = error }
                throw error
            }
        }
        let outer = LockedBox<DefaultsError?>(nil)
        let finished = finishes {
            do throws(DefaultsError) {
                _ = try Defaults(url: url, saveMode: .manual, options: .init(migrations: [step]))
            } catch {
                outer.withLock { $0 = error }
            }
        }
        #expect(finished, "a migration step that opens its own store hung")
        let error = try #require(inner.withLock { $0 })
        #expect(error.code == .invalidArgument)
        #expect(error.path == url.path)
        #expect(error.message.contains("migration step"))
        #expect(outer.withLock { $0 }?.code == .migrationFailed)
        #expect(try text(url) == "{\"count\": 1}", "the failed migration left the file alone")
        // The failed open left nothing behind: the file opens again.
        #expect(try Defaults(url: url, saveMode: .manual)[.count] == 1)
    }

    /// Two threads opening one file at once: the second waits for the first one's load (no lock held) and
    /// gets the same store; the file is loaded, and migrated, once.
    @Test func concurrentOpensOfOneFileShareOneLoad() throws {
        let dir = try TemporaryDirectory()
        let url = try unmigratedFile(dir)
        let path = DurableFile.canonicalPath(url.path)
        let inStep = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let steps = LockedBox(0)
        let step = Defaults.Migration(to: 1) { _ in
            steps.withLock { $0 += 1 }
            inStep.signal()
            if proceed.wait(timeout: .now() + 30) == .timedOut { Issue.record("never told to proceed") }
        }
        let options = Defaults.Options(migrations: [step])
        let stores = LockedBox<[Defaults]>([])
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread {
                do {
                    let defaults = try Defaults(url: url, saveMode: .manual, options: options)
                    stores.withLock { $0.append(defaults) }
                } catch {
                    Issue.record(error)
                }
                group.leave()
            }.start()
        }
        #expect(inStep.wait(timeout: .now() + 30) == .success, "the first open never ran the step")
        // The other opener is waiting for this load, not loading the file itself.
        let deadline = Date().addingTimeInterval(30)
        while StoreRegistry.waiterCount(for: path) < 1 && Date() < deadline { usleep(1000) }
        #expect(StoreRegistry.waiterCount(for: path) == 1)
        proceed.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        let opened = stores.withLock { $0 }
        #expect(opened.count == 2)
        #expect(opened.count == 2 && opened[0].store === opened[1].store, "one store per file")
        #expect(steps.withLock { $0 } == 1, "the file was migrated once")
    }

    /// The error handler given to the initializer is installed before the file is read, so it receives the
    /// notice of a file moved aside while opening.
    @Test func theInitializersHandlerHearsOfAFileMovedAsideWhileOpening() throws {
        let dir = try TemporaryDirectory()
        try write("{broken", to: dir.file())
        let errors = ErrorLog()
        let defaults = try Defaults(
            url: dir.file(), saveMode: .manual, options: .init(unreadableFile: .moveAside), onError: errors.handler)
        let notice = try #require(errors.errors.first)
        #expect(errors.errors.count == 1)
        #expect(notice.code == .fileMovedAside)
        let aside = try #require(notice.path)
        #expect(try text(URL(fileURLWithPath: aside)) == "{broken")
        #expect(defaults.keys.isEmpty)

        // A second `Defaults` on the open store: nothing is read again, and its handler replaces the first
        // for the store, as setting `onError` does.
        let later = ErrorLog()
        let second = try Defaults(url: dir.file(), saveMode: .manual, onError: later.handler)
        #expect(second.store === defaults.store)
        #expect(later.errors.isEmpty, "the file was read before: nothing to report")
        defaults[Defaults.Key<Int>(String(repeating: "k", count: 2000), default: 0)] = 1
        #expect(later.errors.map(\.code) == [.keyTooLong])
        #expect(errors.errors.count == 1)
    }
}

// MARK: Waits that could never end

extension OpeningTests {
    /// Two threads whose migration steps open each other's store: thread A loads `first.json` and its step
    /// opens `second.json`, while thread B loads `second.json` and its step opens `first.json`. Each would
    /// wait for the other's load for good; the second of the two waits is refused with `invalidArgument`
    /// naming the path, and the other thread's open then goes on and succeeds.
    @Test func crossedOpensOnTwoThreadsFailInsteadOfHanging() throws {
        let dir = try TemporaryDirectory()
        let first = try unmigratedFile(dir, "first.json")
        let second = try unmigratedFile(dir, "second.json")
        // Both steps run (both loads are under way) before either opens the other file.
        let arrived = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        func step(_ index: Int, opening other: URL) -> Defaults.Migration {
            Defaults.Migration(to: 1) { _ in
                arrived[index].signal()
                if arrived[1 - index].wait(timeout: .now() + 30) == .timedOut {
                    Issue.record("the other thread's step never ran")
                }
                _ = try Defaults(url: other, saveMode: .manual)
            }
        }
        let results = LockedBox<[String: Result<Defaults, DefaultsError>]>([:])
        let group = DispatchGroup()
        for (index, (url, other)) in [(first, second), (second, first)].enumerated() {
            let options = Defaults.Options(migrations: [step(index, opening: other)])
            group.enter()
            Thread {
                let result = Result { () throws(DefaultsError) in
                    try Defaults(url: url, saveMode: .manual, options: options)
                }
                results.withLock { $0[url.lastPathComponent] = result }
                group.leave()
            }.start()
        }
        try #require(group.wait(timeout: .now() + 30) == .success, "the crossed opens hang")
        let outcome = results.withLock { $0 }
        let failures = outcome.compactMap { name, result -> (String, DefaultsError)? in
            if case .failure(let error) = result { return (name, error) }
            return nil
        }
        #expect(failures.count == 1, "one of the two waits is refused: \(outcome)")
        let (name, error) = try #require(failures.first)
        let other = DurableFile.canonicalPath((name == "first.json" ? second : first).path)
        #expect(error.code == .migrationFailed, "\(error)")
        #expect(error.description.contains("a migration step cannot open a store whose opening waits for it"))
        #expect(error.description.contains(other), "the error names the store whose opening waits: \(error)")
    }

    /// A chain of waits that is not a cycle still waits: thread C opens `first.json`, whose load (thread A)
    /// waits in its step for `second.json`, whose load (thread B) is running a step. C and A wait, and every
    /// open succeeds once B's step ends.
    @Test func aChainOfWaitsThatIsNotACycleWaits() throws {
        let dir = try TemporaryDirectory()
        let first = try unmigratedFile(dir, "first.json")
        let second = try unmigratedFile(dir, "second.json")
        let firstPath = DurableFile.canonicalPath(first.path)
        let secondPath = DurableFile.canonicalPath(second.path)
        let secondInStep = DispatchSemaphore(value: 0)
        let secondProceeds = DispatchSemaphore(value: 0)
        let secondOptions = Defaults.Options(
            migrations: [
                Defaults.Migration(to: 1) { _ in
                    secondInStep.signal()
                    if secondProceeds.wait(timeout: .now() + 30) == .timedOut { Issue.record("never told to proceed") }
                }
            ])
        let firstInStep = DispatchSemaphore(value: 0)
        let firstOptions = Defaults.Options(
            migrations: [
                Defaults.Migration(to: 1) { _ in
                    firstInStep.signal()
                    _ = try Defaults(url: second, saveMode: .manual)
                }
            ])
        let failures = LockedBox<[DefaultsError]>([])
        let group = DispatchGroup()
        func open(_ url: URL, _ options: Defaults.Options) {
            group.enter()
            Thread {
                do throws(DefaultsError) {
                    _ = try Defaults(url: url, saveMode: .manual, options: options)
                } catch {
                    failures.withLock { $0.append(error) }
                }
                group.leave()
            }.start()
        }
        open(second, secondOptions)
        #expect(secondInStep.wait(timeout: .now() + 30) == .success, "B never ran its step")
        open(first, firstOptions)
        #expect(firstInStep.wait(timeout: .now() + 30) == .success, "A never ran its step")
        func waitForWaiter(on path: String) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while StoreRegistry.waiterCount(for: path) < 1 && Date() < deadline { usleep(1000) }
            return StoreRegistry.waiterCount(for: path) == 1
        }
        #expect(waitForWaiter(on: secondPath), "A waits for B's load")
        open(first, .default)
        #expect(waitForWaiter(on: firstPath), "C waits for A's load")
        secondProceeds.signal()
        try #require(group.wait(timeout: .now() + 30) == .success, "the opens hang")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    }
}
