import CodableDefaultsTestSupport
import Dispatch
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

/// `try await defaults.save()`: the durable write of `save()`, made on the store's queue while the
/// awaiting task is suspended. It writes durably, throws what `save()` throws, holds no cooperative thread while
/// it waits, and a cancelled task's save runs to completion.
@Suite("Async save")
struct AsyncSaveTests {
    /// A store on `settings.json` in a new temporary directory whose file layer logs its calls to `plan`.
    struct Subject {
        let dir: TemporaryDirectory
        let url: URL
        let plan = FaultPlan()
        let defaults: Defaults

        init(saveMode: Defaults.SaveMode = .manual, options: Defaults.Options = .default) throws {
            dir = try TemporaryDirectory()
            url = dir.file()
            let url = url
            defaults = try FaultPlan.install(plan) { try Defaults(url: url, saveMode: saveMode, options: options) }
        }

        var path: String { DurableFile.canonicalPath(url.path, system: .live) }
        var lockPath: String { DurableFile(path: path, system: .live).lockPath }

        /// Makes every attempt to take the file lock find it busy, until `plan.removeAll()`.
        func holdLock() { plan.fail(.flock, on: .exactly(lockPath), with: EWOULDBLOCK, times: .max) }
    }

    /// The save fsyncs the temporary file, renames it into place, then fsyncs the directory, before it returns.
    @Test func writesDurably() async throws {
        let subject = try Subject()
        subject.defaults[.count] = 3
        try await subject.defaults.save()
        #expect(try text(subject.url) == "{\n  \"count\": 3\n}\n")
        // The store file's calls: those before the save's record is appended to the history (a new history file
        // then has its directory flushed too).
        let store = subject.plan.records.prefix { $0.path?.hasSuffix(".history") != true }
        let calls = store.filter { [.fsync, .rename].contains($0.call) }.map(\.call)
        #expect(calls == [.fsync, .rename, .fsync])
        let directoryFlush = store.last { $0.call == .fsync }
        #expect(directoryFlush?.path == DurableFile(path: subject.path, system: .live).directory)
        #expect(subject.defaults.store.writeCount == 1)
    }

    /// The same failure makes `save()` and `save()` throw the same error; the file is unchanged and the change
    /// stays pending until a save succeeds.
    @Test(arguments: [(FaultPlan.Call.fsync, EIO), (.rename, EXDEV), (.write, ENOSPC)])
    func throwsWhatFlushThrows(_ call: FaultPlan.Call, _ errno: Int32) async throws {
        let subject = try Subject()
        subject.defaults[.count] = 1
        try await subject.defaults.save()
        let old = try bytes(subject.url)
        subject.defaults[.count] = 2
        subject.plan.fail(call, on: .suffix(".tmp"), with: errno)
        let asyncError = await #expect(throws: DefaultsError.self) { try await subject.defaults.save() }
        #expect(try bytes(subject.url) == old)
        subject.plan.fail(call, on: .suffix(".tmp"), with: errno)
        let syncError = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(try bytes(subject.url) == old)
        #expect(asyncError != nil)
        #expect(asyncError?.code == .writeFailed)
        #expect(asyncError?.code == syncError?.code)
        #expect(asyncError?.errno == errno)
        #expect(asyncError?.errno == syncError?.errno)
        #expect(asyncError?.message == syncError?.message)
        try await subject.defaults.save()
        #expect(try text(subject.url) == "{\n  \"count\": 2\n}\n")
    }

    /// A failed directory flush is `notDurable`, as from `save()`, and the next save retries it.
    @Test func failedDirectoryFlushThrowsNotDurable() async throws {
        let subject = try Subject()
        subject.defaults[.count] = 1
        let directory = DurableFile(path: subject.path, system: .live).directory
        subject.plan.fail(.fsync, on: .exactly(directory), with: EIO)
        let error = await #expect(throws: DefaultsError.self) { try await subject.defaults.save() }
        #expect(error?.code == .notDurable)
        #expect(try text(subject.url) == "{\n  \"count\": 1\n}\n")
        try await subject.defaults.save()
        #expect(subject.plan.records.filter { $0.call == .fsync && $0.path == directory }.count == 2)
    }

    /// With an `.afterIdle` timer armed far ahead, the save writes now; the timer then finds nothing to write.
    @Test func doesNotWaitForTheTimer() async throws {
        let subject = try Subject(saveMode: .afterIdle(.seconds(3600)))
        subject.defaults[.count] = 7
        #expect(subject.defaults.store.isSaveScheduled)
        try await subject.defaults.save()
        #expect(try text(subject.url) == "{\n  \"count\": 7\n}\n")
    }

    /// More tasks than the machine has cores await saves while the file lock is busy: none of them holds a
    /// thread of the cooperative pool, so another task still runs
    /// (see ``expectThePoolFree(whileWaitersWaitOnTheLockOf:_:)``).
    @Test func awaitingSavesLeaveTheCooperativePoolFree() async throws {
        let subject = try Subject(options: .init(lockTimeout: .seconds(600)))
        subject.defaults[.count] = 1
        let defaults = subject.defaults
        try await expectThePoolFree(whileWaitersWaitOnTheLockOf: subject) { try await defaults.save() }
        #expect(try text(subject.url) == "{\n  \"count\": 1\n}\n")
    }

    /// The asynchronous `modify` and `undo` wait for another process's lock on the store's queue, as `save()`
    /// does: more of them than the pool has threads, all waiting, leave the pool free for other tasks.
    @Test(arguments: ["modify", "undo"])
    func awaitingModifiesAndUndosLeaveTheCooperativePoolFree(_ act: String) async throws {
        let subject = try Subject(options: .init(lockTimeout: .seconds(600)))
        let defaults = subject.defaults
        for value in [1, 2] {
            defaults[.count] = value
            try await defaults.save()
        }
        let waiters = try await expectThePoolFree(whileWaitersWaitOnTheLockOf: subject) {
            if act == "modify" {
                try await defaults.modify(.count) { $0 += 10 }
            } else {
                try await defaults.undo()
            }
        }
        // Every undo takes back the one before it: an even number of them leaves the last save's value.
        let expected = act == "modify" ? 2 + 10 * waiters : (waiters.isMultiple(of: 2) ? 2 : 1)
        #expect(try openFresh(subject.url)[.count] == expected)
    }

    /// Holds `subject`'s lock file, starts more tasks running `wait` than the machine has cores (which all wait for
    /// the lock), runs another task, and frees the lock from a watchdog thread (not in the pool) once that task has
    /// run; if the waiting tasks held the pool, the task could not run, and the watchdog frees the lock only after
    /// its deadline, which is reported as a failure. Returns how many tasks ran `wait`.
    @discardableResult
    private func expectThePoolFree(
        whileWaitersWaitOnTheLockOf subject: Subject, _ wait: @escaping @Sendable () async throws -> Void
    ) async throws -> Int {
        subject.holdLock()
        let progress = DispatchSemaphore(value: 0)
        let progressedInTime = Locked(false)
        let plan = subject.plan
        Thread.detachNewThread {
            let inTime = progress.wait(timeout: .now() + 120) == .success
            progressedInTime.withLock { $0 = inTime }
            plan.removeAll()
        }
        let count = ProcessInfo.processInfo.activeProcessorCount * 4 + 4
        let started = Locked(0)
        let defaults = subject.defaults
        let waiters = (0..<count).map { _ in
            Task {
                started.withLock { $0 += 1 }
                try await wait()
            }
        }
        #expect(
            try await eventually(timeout: 120) { started.withLock { $0 } == count && defaults.store.lockWaitCount > 0 })
        let answer = await Task.detached { 6 * 7 }.value
        progress.signal()
        #expect(answer == 42)
        for waiter in waiters { try await waiter.value }
        #expect(progressedInTime.withLock { $0 })
        return count
    }

    /// A task cancelled while its save waits for the file lock still gets the whole save: it returns once the
    /// file is written, and nothing is left pending.
    @Test func cancelledTaskSaveRunsToCompletion() async throws {
        let subject = try Subject(options: .init(lockTimeout: .seconds(600)))
        subject.defaults[.count] = 5
        subject.holdLock()
        let defaults = subject.defaults
        let saver = Task { try await defaults.save() }
        #expect(try await eventually(timeout: 120) { defaults.store.lockWaitCount > 0 })
        saver.cancel()
        subject.plan.removeAll()
        try await saver.value
        #expect(try text(subject.url) == "{\n  \"count\": 5\n}\n")
        #expect(defaults.store.state.withLock { $0.members.dirty.isEmpty })
    }

    /// A task already cancelled when it calls `save()` saves anyway.
    @Test func alreadyCancelledTaskSaves() async throws {
        let subject = try Subject()
        subject.defaults[.count] = 9
        let defaults = subject.defaults
        let saver = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            #expect(Task.isCancelled)
            try await defaults.save()
        }
        try await saver.value
        #expect(try text(subject.url) == "{\n  \"count\": 9\n}\n")
    }

    /// An in-memory store saves as `save()` does: the change is no longer pending.
    @Test func inMemoryStoreSaves() async throws {
        let defaults = Defaults.inMemory()
        defaults[.count] = 2
        try await defaults.save()
        #expect(defaults.store.state.withLock { $0.members.dirty.isEmpty })
    }
}
