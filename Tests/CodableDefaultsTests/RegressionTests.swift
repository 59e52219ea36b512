import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#endif

/// Regression tests for defects an independent review found: each failed before its fix.
@Suite struct RegressionTests {
    /// A value set while a save waits for the file lock: the save writes the older encoding, which must be
    /// recorded as what the file holds, so a discard reverts memory to what the file really has.
    @Test func discardAfterASetDuringASaveKeepsFileAndMemoryTogether() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        try defaults.flush()
        defaults[.count] = 1  // pending, new to the file
        let lockPath = dir.path + "/.settings.json.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT, 0o600)
        #expect(flock(fd, LOCK_EX) == 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do { try defaults.flush() } catch { Issue.record("\(error)") }
            done.signal()
        }
        // The save has encoded 1 and waits for the lock.
        #expect(waitForLockWaiter(defaults), "the save never waited for the lock")
        defaults[.count] = 2
        flock(fd, LOCK_UN); close(fd)
        done.wait()
        defaults.discardUnsavedChanges()
        try defaults.flush()
        let mem = defaults.hasStoredValue(.count)
        let disk = try openFresh(url).hasStoredValue(.count)
        let fileText = try text(url)
        #expect(mem == disk, "memory: stored=\(mem) value=\(defaults[.count]); file: \(fileText)")
    }

    /// observeAll on a store that knows no names yet hears of another store's write.
    @Test func observeAllHearsTheFirstOutsideWrite() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let a = try openFresh(url)
        let seen = Lock()
        nonisolated(unsafe) var names: [Set<String>] = []
        let told = DispatchSemaphore(value: 0)
        let token = a.observeAll { n in
            seen.withLock { names.append(n) }
            if n.contains("count") { told.signal() }
        }
        let b = try openFresh(url)
        b[.count] = 5
        try b.flush()
        // Told by the reload, or (on the store's queue, maybe after the reload returns) by the watcher that
        // read the file first: wait for the call rather than expect it to have happened already.
        try a.reload()
        #expect(a[.count] == 5)
        #expect(told.wait(timeout: .now() + 30) == .success, "observeAll was not told about count")
        #expect(seen.withLock { names } == [["count"]])
        _ = token
    }

    /// The error handler runs with no lock held, so a handler that flushes cannot deadlock.
    @Test func errorHandlerThatFlushesDuringMoveAsideDoesNotDeadlock() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try defaults.flush()
        try write("{ broken", to: url)
        defaults.onError = { _ in
            do { try defaults.flush() } catch {}
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do { _ = try defaults.moveAsideUnreadableFile() } catch {}
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success, "moveAsideUnreadableFile deadlocked")
    }

    /// A file that parses but has a bad schema version is a schema error, not an unreadable file to move.
    @Test func parseableFileWithAStringSchemaVersionIsNotMovedAside() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write("{\n  \"$schemaVersion\": \"1\",\n  \"count\": 3\n}\n", to: url)
        let options = Defaults.Options(unreadableFile: .moveAside, migrations: [.init(to: 1) { _ in }])
        let error = #expect(throws: DefaultsError.self) { try openFresh(url, options: options) }
        #expect(error?.code == .unsupportedSchemaVersion)
        #expect(try dir.contents().filter { !$0.hasPrefix(".") } == ["settings.json"], "nothing moved")
    }
}
