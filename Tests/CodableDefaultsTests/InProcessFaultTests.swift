import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The promises of `FaultInjectionTests` and `MoveAsideFaultTests`, kept in-process: a ``FaultPlan`` given to
/// one store's file layer makes chosen system calls fail, so these run without strace and without root. Each
/// failing call of the save path leaves the old file intact and the change pending, reports the path and
/// errno, and the next flush writes the change; a failed directory flush is `notDurable` and retried; `EINTR`
/// and short writes are retried; a failing read at opening throws and writes nothing; moving a file aside and
/// the lock file fail cleanly.
@Suite("In-process fault injection")
struct InProcessFaultTests {
    /// A store whose file layer uses `plan`, opened through the public initializer, plus what it knows.
    struct Subject {
        let dir: TemporaryDirectory
        let url: URL
        let path: String
        let plan: FaultPlan
        let errors = ErrorLog()
        let defaults: Defaults

        var directory: String { DurableFile(path: path, system: .live).directory }
        var lockPath: String { DurableFile(path: path, system: .live).lockPath }

        /// Opens `settings.json` in a new temporary directory; `prepare` runs before the store opens.
        init(
            options: Defaults.Options = .default, plan: FaultPlan = FaultPlan(),
            prepare: (URL) throws -> Void = { _ in }
        ) throws {
            dir = try TemporaryDirectory()
            url = dir.file()
            path = DurableFile.canonicalPath(url.path, system: .live)
            self.plan = plan
            try prepare(url)
            let handler = errors.handler
            let url = url
            defaults = try FaultPlan.install(plan) {
                try Defaults(url: url, saveMode: .manual, options: options, onError: handler)
            }
        }

        /// Saves `a` = 1, then sets `b` = "pending" without saving. Returns the file's bytes.
        func prepareChange() throws -> [UInt8] {
            defaults.set(1, forKey: "a")
            try defaults.save()
            defaults.set("pending", forKey: "b")
            return try bytes(url)
        }

        /// The names of temporary files in the directory.
        func temporaries() throws -> [String] { try dir.contents().filter { $0.hasSuffix(".tmp") } }

        /// The calls logged after the first one matching `predicate`.
        func calls(after predicate: (FaultPlan.Record) -> Bool) -> ArraySlice<FaultPlan.Record> {
            let records = plan.records
            guard let index = records.firstIndex(where: predicate) else { return [] }
            return records[(index + 1)...]
        }
    }

    static let saved = "{\n  \"a\": 1,\n  \"b\": \"pending\"\n}\n"

    /// A failing call of the save path on its temporary file, and the errno it fails with.
    struct SaveFault: Sendable, CustomTestStringConvertible {
        var call: FaultPlan.Call
        var errno: Int32
        var name: String
        init(_ call: FaultPlan.Call, _ errno: Int32, _ name: String) {
            self.call = call
            self.errno = errno
            self.name = name
        }
        var testDescription: String { "\(call)(temp) -> \(name)" }
    }

    @Test(arguments: [
        SaveFault(.open, EMFILE, "EMFILE"), SaveFault(.open, EACCES, "EACCES"), SaveFault(.fchmod, EPERM, "EPERM"),
        SaveFault(.write, ENOSPC, "ENOSPC"), SaveFault(.write, EIO, "EIO"), SaveFault(.fsync, EIO, "EIO"),
        SaveFault(.fstat, EIO, "EIO"), SaveFault(.close, EIO, "EIO"), SaveFault(.rename, EXDEV, "EXDEV"),
        SaveFault(.rename, EACCES, "EACCES"), SaveFault(.rename, EROFS, "EROFS"), SaveFault(.rename, EBUSY, "EBUSY"),
    ])
    func failedCallOfTheSaveLosesNothing(_ fault: SaveFault) throws {
        let subject = try Subject()
        let old = try subject.prepareChange()
        subject.plan.fail(fault.call, on: .suffix(".tmp"), with: fault.errno)

        let error = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(error?.code == .writeFailed, "\(String(describing: error))")
        #expect(error?.errno == fault.errno, "\(String(describing: error))")
        #expect(error?.path == subject.path, "\(String(describing: error))")
        #expect(error?.message.contains(Platform.describe(fault.errno)) == true, "\(String(describing: error))")
        #expect(try bytes(subject.url) == old, "the old file's bytes are unchanged")
        #expect(try subject.temporaries() == [])
        #expect(subject.defaults.string(forKey: "b") == "pending", "the change is still pending")

        let hit = try #require(subject.plan.injected.first)
        #expect(subject.plan.injected.count == 1)
        let after = subject.calls { $0.fault != nil }
        if fault.call != .open, let temporary = hit.path {
            #expect(after.contains { $0.call == .unlink && $0.path == temporary }, "the temporary file is removed")
            #expect(!after.contains { $0.call == .fsync && $0.path == temporary }, "nothing is retried on it")
        }

        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved, "the next flush writes the change")
        #expect(try subject.temporaries() == [])
        let retried = subject.calls { $0.fault != nil }.first { $0.call == .open && $0.path?.hasSuffix(".tmp") == true }
        #expect(retried != nil && retried?.path != hit.path, "the next flush writes a new temporary file")
        #expect(subject.errors.errors.isEmpty, "\(subject.errors.errors)")
    }

    /// The save cannot inspect the existing file to take its mode: it fails rather than write the file with
    /// mode 0600 (issue 15: the failed `stat` was taken for a missing file, and the file lost its mode).
    @Test func saveThatCannotInspectTheFileKeepsItsMode() throws {
        let subject = try Subject()
        let old = try subject.prepareChange()
        #expect(chmod(subject.path, 0o644) == 0)
        // The first stat of the store file is the save's check for outside changes; the second is the write's.
        subject.plan.fail(.stat, on: .exactly(subject.path), with: EIO, skipping: 1)
        let error = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(error?.code == .writeFailed && error?.errno == EIO, "\(String(describing: error))")
        #expect(error?.path == subject.path)
        #expect(try bytes(subject.url) == old)
        #expect(try subject.temporaries() == [])
        #expect(subject.plan.isSpent)

        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved)
        let mode = try FileManager.default.attributesOfItem(atPath: subject.path)[.posixPermissions] as? Int
        #expect(mode == 0o644, "the file keeps its mode")
    }

    /// The save's calls, in the durable order: the lock is held from before the temporary file is created until
    /// after the directory is flushed and the save is recorded in the history (appended and flushed after the
    /// store file is in place, so a record never claims a change the file does not hold).
    @Test func saveMakesItsCallsInTheDurableOrder() throws {
        let subject = try Subject()
        _ = try subject.prepareChange()
        let start = subject.plan.records.count
        try subject.defaults.save()
        let calls = subject.plan.records[start...].filter { $0.call != .stat && $0.call != .lstat }
        let temporary = try #require(calls.first { $0.call == .open && $0.path?.hasSuffix(".tmp") == true }?.path)
        let lock = subject.lockPath
        let directory = subject.directory
        let history = directory + "/.settings.json.history"
        let queue = directory + "/.settings.json.queue"
        let expected: [FaultPlan.Record] = [
            // The turn (the queue file) is taken before the lock and given up once the lock is held.
            .init(call: .open, path: lock), .init(call: .open, path: queue), .init(call: .flock, path: queue),
            .init(call: .flock, path: lock), .init(call: .flock, path: queue), .init(call: .close, path: queue),
            .init(call: .open, path: temporary), .init(call: .fchmod, path: temporary),
            .init(call: .write, path: temporary), .init(call: .fsync, path: temporary),
            .init(call: .fstat, path: temporary), .init(call: .close, path: temporary),
            .init(call: .rename, path: temporary, otherPath: subject.path),
            .init(call: .open, path: directory), .init(call: .fsync, path: directory),
            .init(call: .close, path: directory),
            .init(call: .open, path: history), .init(call: .fstat, path: history), .init(call: .write, path: history),
            .init(call: .fsync, path: history), .init(call: .fstat, path: history), .init(call: .close, path: history),
            .init(call: .flock, path: lock), .init(call: .close, path: lock),
        ]
        #expect(Array(calls) == expected)
    }

    /// Once the rename succeeded the change is saved: a failed directory flush after it (its open or its
    /// fsync) throws `notDurable`, memory and file agree, and the next flush retries only the directory flush.
    @Test(arguments: [(FaultPlan.Call.fsync, EIO), (.open, EMFILE)])
    func failedDirectoryFlushSavesTheChangeAndIsRetried(_ call: FaultPlan.Call, _ errno: Int32) throws {
        let subject = try Subject()
        _ = try subject.prepareChange()
        subject.plan.fail(call, on: .exactly(subject.directory), with: errno)

        let error = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(error?.code == .notDurable && error?.errno == errno, "\(String(describing: error))")
        #expect(error?.path == subject.path)
        #expect(error?.message.contains("the changes were written to \(subject.path), but") == true)
        #expect(error?.message.contains("they may not survive a power loss") == true)
        #expect(try text(subject.url) == Self.saved)
        #expect(try subject.temporaries() == [])
        subject.defaults.discardUnsavedChanges()
        #expect(subject.defaults.string(forKey: "b") == "pending", "the change counts as saved")

        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved)
        let after = subject.calls { $0.fault != nil }
        #expect(after.contains { $0.call == .fsync && $0.path == subject.directory }, "the directory flush is retried")
        #expect(!after.contains { $0.call == .open && $0.path?.hasSuffix(".tmp") == true }, "nothing is rewritten")
    }

    @Test(arguments: [
        (FaultPlan.Call.open, FaultPlan.Paths.suffix(".tmp")), (.write, .suffix(".tmp")), (.flock, .suffix(".lock")),
        (.open, .suffix(".lock")),
    ])
    func interruptedCallIsRetried(_ call: FaultPlan.Call, _ paths: FaultPlan.Paths) throws {
        let subject = try Subject()
        _ = try subject.prepareChange()
        subject.plan.fail(call, on: paths, with: EINTR)
        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved, "EINTR is retried, not reported")
        #expect(subject.plan.injected.count == 1)
        #expect(try subject.temporaries() == [])
    }

    /// A write that takes fewer bytes than asked, again and again, still writes the whole file.
    @Test func shortWritesAreCompleted() throws {
        let subject = try Subject()
        _ = try subject.prepareChange()
        subject.plan.inject(.short(1), into: .write, on: .suffix(".tmp"), times: 5)
        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved)
        #expect(subject.plan.isSpent)
    }

    /// Reads that return fewer bytes than asked, and an interrupted read, still read the whole file.
    @Test func shortAndInterruptedReadsAtOpeningReadTheWholeFile() throws {
        let plan = FaultPlan()
        let subject = try Subject(plan: plan) { url in
            try write(Self.saved, to: url)
            let path = DurableFile.canonicalPath(url.path, system: .live)
            plan.inject(.short(3), into: .read, on: .exactly(path), times: 4)
            plan.fail(.read, on: .exactly(path), with: EINTR)
        }
        #expect(subject.defaults.integer(forKey: "a") == 1)
        #expect(subject.defaults.string(forKey: "b") == "pending")
        #expect(plan.isSpent)
    }

    /// A file that exists but cannot be opened, inspected or read: opening throws `readFailed` with the path
    /// and errno, and nothing is written.
    @Test(arguments: [(FaultPlan.Call.open, EACCES), (.fstat, EIO), (.read, EIO)])
    func failedReadAtOpeningThrowsAndWritesNothing(_ call: FaultPlan.Call, _ errno: Int32) throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write(Self.saved, to: url)
        let path = DurableFile.canonicalPath(url.path, system: .live)
        let plan = FaultPlan()
        plan.fail(call, on: .exactly(path), with: errno)
        let error = #expect(throws: DefaultsError.self) {
            _ = try FaultPlan.install(plan) { try Defaults(url: url, saveMode: .manual) }
        }
        #expect(error?.code == .readFailed && error?.errno == errno, "\(String(describing: error))")
        #expect(error?.path == path)
        #expect(try text(url) == Self.saved)
        #expect(try dir.contents() == ["settings.json"], "nothing is written")
        #expect(!plan.records.contains { [.write, .rename, .unlink, .mkdir].contains($0.call) })
    }

    // MARK: Moving an unreadable file aside

    static let broken = "{ \"a\": 1, broken"

    /// Opening with `.moveAside` when the rename fails: opening throws `writeFailed` with the errno, and the
    /// file is where it was.
    @Test func openingMoveWhoseRenameFailsThrowsAndMovesNothing() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write(Self.broken, to: url)
        let path = DurableFile.canonicalPath(url.path, system: .live)
        let plan = FaultPlan()
        plan.fail(.rename, on: .exactly(path), with: EACCES)
        let errors = ErrorLog()
        let error = #expect(throws: DefaultsError.self) {
            _ = try FaultPlan.install(plan) {
                try Defaults(
                    url: url, saveMode: .manual, options: .init(unreadableFile: .moveAside), onError: errors.handler)
            }
        }
        #expect(error?.code == .writeFailed && error?.errno == EACCES, "\(String(describing: error))")
        #expect(error?.path == path)
        #expect(try text(url) == Self.broken)
        #expect(try dir.contents().filter { !$0.hasPrefix(".") } == ["settings.json"], "nothing was moved")
    }

    /// Opening with `.moveAside` when the directory's flush after the rename fails: the store opens empty,
    /// reports the `fileMovedAside` notice and `notDurable`, and the first flush retries the directory flush.
    @Test func openingMoveWhoseDirectoryFlushFailsOpensAndRetries() throws {
        let plan = FaultPlan()
        let subject = try Subject(options: .init(unreadableFile: .moveAside), plan: plan) { url in
            try write(Self.broken, to: url)
            let directory = DurableFile(path: DurableFile.canonicalPath(url.path, system: .live), system: .live)
                .directory
            plan.fail(.fsync, on: .exactly(directory), with: EIO)
        }
        let aside = try #require(try subject.dir.contents().first { $0.hasPrefix("settings.json.corrupt-") })
        let asidePath = subject.directory + "/" + aside
        let reported = subject.errors.errors
        #expect(reported.map(\.code) == [.fileMovedAside, .notDurable], "\(reported)")
        #expect(reported.first?.path == asidePath)
        #expect(reported.last?.errno == EIO && reported.last?.path == subject.path)
        #expect(reported.last?.message.contains("was moved aside to \(asidePath), but flushing its directory") == true)
        #expect(try text(subject.dir.file(aside)) == Self.broken)
        #expect(subject.defaults.keys == [], "the store started empty")

        try subject.defaults.save()
        let after = subject.calls { $0.fault != nil }
        #expect(after.contains { $0.call == .fsync && $0.path == subject.directory && $0.fault == nil })
        subject.defaults.set(1, forKey: "a")
        try subject.defaults.save()
        #expect(try text(subject.url) == "{\n  \"a\": 1\n}\n")
    }

    /// `moveAsideUnreadableFile()` on a store with nothing to write, whose directory flush fails after the
    /// rename and when the call retries it: it throws `notDurable`, and the next flush retries and succeeds.
    @Test func explicitMoveWhoseDirectoryFlushKeepsFailingThrowsNotDurable() throws {
        let subject = try Subject()
        try write(Self.broken, to: subject.url)
        subject.plan.fail(.fsync, on: .exactly(subject.directory), with: EIO, times: 2)
        let error = #expect(throws: DefaultsError.self) { try subject.defaults.moveAsideUnreadableFile() }
        #expect(error?.code == .notDurable && error?.errno == EIO, "\(String(describing: error))")
        #expect(error?.path == subject.path)
        #expect(error?.message.contains("may not survive a power loss") == true)
        #expect(subject.errors.errors.map(\.code) == [.fileMovedAside])
        let aside = try #require(try subject.dir.contents().first { $0.hasPrefix("settings.json.corrupt-") })
        #expect(try text(subject.dir.file(aside)) == Self.broken)
        #expect(!FileManager.default.fileExists(atPath: subject.url.path), "an empty state writes no file")
        #expect(subject.plan.isSpent)

        try subject.defaults.save()
        let after = subject.calls { $0.fault != nil }
        #expect(after.contains { $0.call == .fsync && $0.path == subject.directory && $0.fault == nil })
    }

    /// `moveAsideUnreadableFile()` whose rename fails: it throws `writeFailed`, the file is where it was, and the
    /// store's values are kept.
    @Test func explicitMoveWhoseRenameFailsKeepsTheFile() throws {
        let subject = try Subject()
        _ = try subject.prepareChange()
        try write(Self.broken, to: subject.url)
        subject.plan.fail(.rename, on: .exactly(subject.path), with: EBUSY)
        let error = #expect(throws: DefaultsError.self) { try subject.defaults.moveAsideUnreadableFile() }
        #expect(error?.code == .writeFailed && error?.errno == EBUSY, "\(String(describing: error))")
        #expect(error?.path == subject.path)
        #expect(try text(subject.url) == Self.broken)
        #expect(try subject.dir.contents().filter { $0.contains("corrupt") } == [])
        #expect(subject.defaults.string(forKey: "b") == "pending")
        subject.defaults.discardUnsavedChanges()
    }

    // MARK: The lock file

    /// The lock file cannot be opened or locked: the flush throws `writeFailed` naming the lock file and the
    /// errno, nothing is written, the change stays pending, and the next flush writes it.
    @Test(arguments: [(FaultPlan.Call.open, EACCES), (.flock, ENOLCK)])
    func failedLockFileLosesNothing(_ call: FaultPlan.Call, _ errno: Int32) throws {
        let subject = try Subject()
        let old = try subject.prepareChange()
        subject.plan.fail(call, on: .exactly(subject.lockPath), with: errno)
        let error = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(error?.code == .writeFailed && error?.errno == errno, "\(String(describing: error))")
        #expect(error?.path == subject.lockPath)
        #expect(try bytes(subject.url) == old)
        #expect(!subject.calls { $0.fault != nil }.contains { $0.path?.hasSuffix(".tmp") == true })
        #expect(subject.defaults.string(forKey: "b") == "pending")
        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved)
    }

    /// A lock file that stays busy: the flush waits for the timeout, then throws `lockTimeout` naming the lock
    /// file; nothing is written.
    @Test func busyLockFileTimesOut() throws {
        let subject = try Subject(options: .init(lockTimeout: .milliseconds(20)))
        let old = try subject.prepareChange()
        subject.plan.fail(.flock, on: .exactly(subject.lockPath), with: EWOULDBLOCK, times: .max)
        let error = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(error?.code == .lockTimeout, "\(String(describing: error))")
        #expect(error?.path == subject.lockPath)
        #expect(error?.message.contains("the changes stay pending") == true)
        #expect(try bytes(subject.url) == old)
        #expect(subject.defaults.store.lockWaitCount == 1)
        subject.plan.removeAll()
        try subject.defaults.save()
        #expect(try text(subject.url) == Self.saved)
    }

    // MARK: Directories and leftovers

    /// The store's directory cannot be created: the flush throws `writeFailed` naming it, and the next flush
    /// creates it.
    @Test func failedDirectoryCreationLosesNothing() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file("sub/settings.json")
        let plan = FaultPlan()
        let defaults = try FaultPlan.install(plan) { try Defaults(url: url, saveMode: .manual) }
        let sub = DurableFile.canonicalPath(dir.path, system: .live) + "/sub"
        plan.fail(.mkdir, on: .exactly(sub), with: EACCES)
        defaults.set(1, forKey: "a")
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed && error?.errno == EACCES, "\(String(describing: error))")
        #expect(error?.path == sub)
        #expect(try dir.contents() == [])
        try defaults.save()
        #expect(try text(url) == "{\n  \"a\": 1\n}\n")
    }

    /// A crashed writer's temporary file that cannot be removed: opening succeeds and reports `writeFailed`
    /// naming the file; a later opening removes it.
    @Test func leftoverTemporaryThatCannotBeRemovedIsReported() throws {
        let plan = FaultPlan()
        var leftover = ""
        let subject = try Subject(plan: plan) { url in
            try write(Self.saved, to: url)
            let file = DurableFile(path: DurableFile.canonicalPath(url.path, system: .live), system: .live)
            leftover = file.directory + "/.settings.json.4242.abc123.tmp"
            try write("half", to: URL(fileURLWithPath: leftover))
            plan.fail(.unlink, on: .exactly(leftover), with: EACCES)
        }
        let reported = subject.errors.errors
        #expect(reported.map(\.code) == [.writeFailed], "\(reported)")
        #expect(reported.first?.path == leftover && reported.first?.errno == EACCES)
        #expect(FileManager.default.fileExists(atPath: leftover))
        #expect(subject.defaults.string(forKey: "b") == "pending", "the store opened")
        _ = try openFresh(subject.url)
        #expect(try subject.temporaries() == [])
    }

    // MARK: The plan

    /// A plan reaches only the files made inside `install`: another store opened at the same time makes the
    /// plain calls.
    @Test func aPlanBelongsToTheStoresOpenedWithIt() throws {
        let subject = try Subject()
        subject.plan.fail(.write, with: EIO, times: .max)
        let other = try TemporaryDirectory()
        let plain = try Defaults(url: other.file(), saveMode: .manual)
        #expect(subject.defaults.store.fileStorage?.file.system.faults === subject.plan)
        #expect(plain.store.fileStorage?.file.system.faults == nil)
        plain.set(1, forKey: "a")
        try plain.save()
        #expect(try text(other.file()) == "{\n  \"a\": 1\n}\n")
        #expect(!subject.plan.records.contains { $0.path?.hasPrefix(other.path) == true })
    }
}
