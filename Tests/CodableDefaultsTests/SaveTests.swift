import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#endif

/// When and how changes reach the file, and what happens when writing fails.
@Suite struct SaveTests {
    @Test func manualWritesOnlyOnFlush() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .manual)
        defaults[.count] = 1
        defaults[.count] = 2
        #expect(!FileManager.default.fileExists(atPath: dir.file().path))
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"count\": 2\n}\n")
        #expect(defaults.store.writeCount == 1)
        try defaults.save()
        #expect(defaults.store.writeCount == 1, "nothing changed, nothing written")
    }

    @Test func immediateWritesBeforeTheSetReturns() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .immediate)
        for value in 1...5 {
            defaults[.count] = value
            #expect(try text(dir.file()) == "{\n  \"count\": \(value)\n}\n")
        }
        #expect(defaults.store.writeCount == 5)
        defaults[.count] = 5
        #expect(defaults.store.writeCount == 5, "an equal value is not a change")
    }

    /// A key made where its type is not known to be `Equatable` (generic code) still finds its `==`: an equal value
    /// is no change. A value that is not `Equatable` is always one.
    @Test func aKeyMadeInGenericCodeFindsItsEqualityAtRunTime() throws {
        struct Opaque: Codable, Sendable { var level: Int }
        func key<Value: Codable & Sendable>(_ name: String, _ value: Value) -> Defaults.Key<Value> {
            Defaults.Key(name, default: value)
        }
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .immediate)
        let count = key("count", 0)
        let nickname = Defaults.Key<String?>("nickname")
        let opaque = key("opaque", Opaque(level: 0))
        defaults[count] = 3
        defaults[nickname] = "Ann"
        defaults[opaque] = Opaque(level: 1)
        #expect(defaults.store.writeCount == 3)
        defaults[count] = 3
        defaults[nickname] = "Ann"
        #expect(defaults.store.writeCount == 3, "equal values are no change")
        defaults[opaque] = Opaque(level: 1)
        #expect(defaults.store.writeCount == 4, "a value that is not Equatable cannot be compared: it is a change")
    }

    @Test func afterIdleWritesOncePerBurst() async throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .afterIdle(.milliseconds(200)))
        for value in 1...10_000 { defaults[.count] = value }
        #expect(try await eventually { defaults.store.writeCount == 1 })
        // With no save scheduled and nothing changed, no second write can come.
        #expect(!defaults.store.isSaveScheduled)
        #expect(defaults.store.writeCount == 1)
        #expect(try text(dir.file()) == "{\n  \"count\": 10000\n}\n")

        defaults[.volume] = 0.1
        defaults[.volume] = 0.2
        #expect(try await eventually { defaults.store.writeCount == 2 })
        #expect(try openFresh(dir.file())[.volume] == 0.2)
    }

    /// Any duration is accepted: a negative one is no delay, a huge one is the documented maximum, and no
    /// arithmetic on it overflows.
    @Test func afterIdleTakesAnyDuration() async throws {
        let dir = try TemporaryDirectory()
        let soon = try openFresh(dir.file("soon.json"), saveMode: .afterIdle(.milliseconds(-5)))
        soon[.count] = 1
        #expect(try await eventually { soon.store.writeCount == 1 }, "a negative delay saves at once")
        let never = try openFresh(dir.file("late.json"), saveMode: .afterIdle(.seconds(Int64.max)))
        never[.count] = 1
        never[.count] = 2
        #expect(never.store.isSaveScheduled)
        try await never.save()
        #expect(try text(dir.file("late.json")) == "{\n  \"count\": 2\n}\n")

        let cases: [(Duration, UInt64)] = [
            (.milliseconds(-5), 0), (.seconds(-3), 0), (.nanoseconds(-1), 0), (.seconds(Int64.min), 0),
            (.milliseconds(1500), 1_500_000_000), (.seconds(Int64.max), SaveTimer.maximumDelay),
            (.seconds(86_400 * 2), SaveTimer.maximumDelay),
        ]
        for (duration, expected) in cases {
            #expect(SaveTimer.nanoseconds(duration) == expected, "\(duration)")
        }
        var timer = SaveTimer()
        let late = DispatchTime(uptimeNanoseconds: UInt64.max - 10)
        #expect(timer.change(at: late, delay: .seconds(Int64.max)) == DispatchTime(uptimeNanoseconds: .max))
        #expect(timer.fire(at: late) == DispatchTime(uptimeNanoseconds: .max))
        #expect(timer.failed(at: late) == DispatchTime(uptimeNanoseconds: .max))
    }

    /// Any lock timeout is accepted: zero or less tries the lock once, a huge one waits without overflowing.
    @Test func lockTimeoutTakesAnyDuration() throws {
        let dir = try TemporaryDirectory()
        for (name, timeout) in [("negative", Duration.milliseconds(-5)), ("huge", .seconds(Int64.max))] {
            let url = dir.file("\(name).json")
            let defaults = try openFresh(url, saveMode: .manual, options: .init(lockTimeout: timeout))
            defaults[.count] = 1
            try defaults.save()
            #expect(try text(url) == "{\n  \"count\": 1\n}\n", "\(name)")
        }
        // Held by another open file description (flock locks conflict between them, even in one process).
        let url = dir.file("negative.json")
        let holder = open(dir.path + "/.negative.json.lock", O_RDWR)
        #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
        defer { close(holder) }
        let defaults = try openFresh(url, saveMode: .manual, options: .init(lockTimeout: .milliseconds(-5)))
        defaults[.count] = 2
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .lockTimeout, "tried once and failed at once: \(String(describing: error))")
        defaults.discardUnsavedChanges()
    }

    @Test func lastReferenceGoingAwayWritesPendingChanges() throws {
        let dir = try TemporaryDirectory()
        do {
            let defaults = try Defaults(url: dir.file(), saveMode: .manual)
            defaults[.count] = 42
        }
        #expect(try text(dir.file()) == "{\n  \"count\": 42\n}\n")
    }

    @Test func failedWriteKeepsTheChangePendingAndReportsPathAndErrno() throws {
        let dir = try TemporaryDirectory()
        // A file where the store's directory should be: fails even for root.
        try write("not a directory", to: dir.file("blocker"))
        let url = dir.url.appendingPathComponent("blocker/settings.json")
        let defaults = try openFresh(url)
        defaults[.count] = 9
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed)
        #expect(error?.errno == ENOTDIR, "\(String(describing: error))")
        #expect(error?.path?.hasPrefix(dir.file("blocker").path) == true)
        #expect(defaults[.count] == 9)
        #expect(defaults.hasStoredValue(for: .count))

        try FileManager.default.removeItem(at: dir.file("blocker"))
        try FileManager.default.createDirectory(at: dir.file("blocker"), withIntermediateDirectories: false)
        try defaults.save()
        #expect(try text(url) == "{\n  \"count\": 9\n}\n")
    }

    @Test func aSaveNeverWritesAFileOverTheSizeLimit() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), options: .init(maximumFileSize: 100))
        defaults[.count] = 1
        try defaults.save()
        let before = try bytes(dir.file())
        defaults[Defaults.Key<String>("big", default: "")] = String(repeating: "x", count: 200)
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .fileTooLarge)
        #expect(try bytes(dir.file()) == before, "nothing written")
        #expect(defaults.hasStoredValue(for: Defaults.Key<String>("big", default: "")), "the change stays pending")
        defaults.reset(Defaults.Key<String>("big", default: ""))
        try defaults.save()
        #expect(try openFresh(dir.file(), options: .init(maximumFileSize: 100))[.count] == 1)
    }

    @Test func discardingUnsavedChangesRevertsToTheFile() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.count] = 1
        defaults[.volume] = 0.1
        try defaults.save()
        let seen = Recorder<Int>()
        let token = defaults.observe(.count) { seen.append($0.newValue) }
        defaults[.count] = 2
        defaults.reset(.volume)
        defaults[.token] = "new"
        defaults.discardUnsavedChanges()
        #expect(defaults[.count] == 1)
        #expect(defaults[.volume] == 0.1)
        #expect(defaults[.token] == nil)
        #expect(seen.values == [2, 1])
        let writes = defaults.store.writeCount
        try defaults.save()
        #expect(defaults.store.writeCount == writes, "nothing left to write")
        _ = token
    }

    /// A value set while a save waits for the file lock: the save writes the older encoding, which must be
    /// recorded as what the file holds, so a discard reverts memory to what the file really has.
    @Test func discardAfterASetDuringASaveKeepsFileAndMemoryTogether() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        try defaults.save()
        defaults[.count] = 1  // pending, new to the file
        let lockPath = dir.path + "/.settings.json.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT, 0o600)
        #expect(flock(fd, LOCK_EX) == 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do { try defaults.save() } catch { Issue.record("\(error)") }
            done.signal()
        }
        // The save has encoded 1 and waits for the lock.
        #expect(waitForLockWaiter(defaults), "the save never waited for the lock")
        defaults[.count] = 2
        flock(fd, LOCK_UN); close(fd)
        done.wait()
        defaults.discardUnsavedChanges()
        try defaults.save()
        let mem = defaults.hasStoredValue(for: .count)
        let disk = try openFresh(url).hasStoredValue(for: .count)
        let fileText = try text(url)
        #expect(mem == disk, "memory: stored=\(mem) value=\(defaults[.count]); file: \(fileText)")
    }

    @Test func failedAutomaticSaveGoesToTheErrorHandler() async throws {
        let dir = try TemporaryDirectory()
        try write("x", to: dir.file("blocker"))
        let defaults = try openFresh(
            dir.url.appendingPathComponent("blocker/settings.json"), saveMode: .afterIdle(.milliseconds(10)))
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults[.count] = 1
        #expect(try await eventually { !errors.errors.isEmpty })
        #expect(errors.errors.first?.code == .writeFailed)
        #expect(defaults[.count] == 1)
    }

    @Test func immediateSaveFailureIsThrownByTheLoudSetter() throws {
        let dir = try TemporaryDirectory()
        try write("x", to: dir.file("blocker"))
        let defaults = try openFresh(dir.url.appendingPathComponent("blocker/s.json"), saveMode: .immediate)
        let errors = ErrorLog()
        defaults.onError = errors.handler
        #expect(throws: DefaultsError.self) { try defaults.set(3, for: .count) }
        defaults[.volume] = 0.3
        #expect(errors.errors.count == 1)
        #expect(defaults[.count] == 3)
    }

    @Test func valueThatFailsToEncodeAtSaveIsRevertedAndReported() throws {
        struct Flaky: Codable, Sendable, Equatable {
            var fail: Bool
            func encode(to encoder: any Encoder) throws {
                if fail { throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "refused")) }
                var container = encoder.singleValueContainer()
                try container.encode(false)
            }
            init(fail: Bool) { self.fail = fail }
            init(from decoder: any Decoder) throws { fail = try decoder.singleValueContainer().decode(Bool.self) }
        }
        let dir = try TemporaryDirectory()
        let key = Defaults.Key<Flaky>("flaky", default: Flaky(fail: true))
        let defaults = try openFresh(dir.file())
        defaults[key] = Flaky(fail: false)
        defaults[.count] = 1
        try defaults.save()
        let seen = Recorder<Bool>()
        let token = defaults.observe(key) { seen.append($0.newValue.fail) }
        defaults[key] = Flaky(fail: true)
        defaults[.count] = 2
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(seen.values == [true, false], "observers hear of the revert")
        _ = token
        #expect(error?.code == .encodingFailed)
        #expect(error?.key == "flaky")
        #expect(try text(dir.file()) == "{\n  \"count\": 2,\n  \"flaky\": false\n}\n")
        #expect(defaults[key] == Flaky(fail: false), "reverted to what the file holds")
    }

    // MARK: Limits are checked before a write

    /// A JSON value nested `levels` deep (a bare array is 1 level).
    static func nested(_ levels: Int) -> JSONValue {
        var value = JSONValue.string("[not a bracket] {\\\"}")
        for _ in 0..<levels { value = .array([value]) }
        return value
    }

    @Test func aValueTooDeepForTheFileIsRefusedAndTheFileStillOpens() throws {
        let dir = try TemporaryDirectory()
        let options = Defaults.Options(maximumDepth: 16)
        let defaults = try openFresh(dir.file(), options: options)
        let errors = ErrorLog()
        defaults.onError = errors.handler
        let deep = Defaults.Key<JSONValue>("deep", default: .null)

        // The loud set refuses at once, and stores nothing.
        let loud = #expect(throws: DefaultsError.self) { try defaults.set(Self.nested(21), for: deep) }
        #expect(loud?.code == .encodingFailed && loud?.key == "deep", "\(String(describing: loud))")
        #expect(loud?.message.contains("limit of 16") == true, "\(String(describing: loud))")
        #expect(!defaults.hasStoredValue(for: deep))

        // The subscript's value is refused at the save, like a value that fails to encode: reverted, thrown.
        defaults[deep] = Self.nested(21)
        defaults[.count] = 1
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .encodingFailed && error?.key == "deep", "\(String(describing: error))")
        #expect(!defaults.hasStoredValue(for: deep), "reverted to what the file holds")
        #expect(try text(dir.file()) == "{\n  \"count\": 1\n}\n", "the other change is written")

        // 15 levels are 16 in the file, with its top-level object: the most the limit allows.
        defaults[deep] = Self.nested(15)
        try defaults.save()
        let reopened = try openFresh(dir.file(), options: options)
        #expect(reopened[deep] == Self.nested(15))
        #expect(errors.errors.isEmpty, "\(errors.errors)")
    }
}
