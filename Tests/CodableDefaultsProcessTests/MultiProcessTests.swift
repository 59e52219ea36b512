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

/// A `codable-defaults-fixture serve` process: answers commands, and sets aside the `changed` events its
/// observers print in between.
final class ServedStore {
    let child: ChildProcess
    private(set) var events: [String] = []

    init(_ url: URL, saveMode: String = "manual", options: [String] = []) async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        child = try ChildProcess(fixture, ["serve", url.path, "--save-mode", saveMode] + options)
        let ready = try #require(try await child.readLine(timeout: 30))
        #expect(ready.hasPrefix("ready "), "\(ready)")
    }

    /// Sends a command and returns its answer.
    @discardableResult
    func ask(_ command: String) async throws -> String {
        try child.send(command)
        return try await answer()
    }

    /// The next line that is not an event.
    func answer() async throws -> String {
        while true {
            guard let line = try await child.readLine(timeout: 30) else {
                throw ChildProcessError(description: "the fixture ended before answering")
            }
            if line.hasPrefix("changed ") { events.append(line) } else { return line }
        }
    }

    /// Waits up to `timeout` seconds for an event line equal to `event`.
    func waitForEvent(_ event: String, timeout: Double = 10) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !events.contains(event) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            guard let line = try await child.readLine(timeout: left) else { return false }
            if line.hasPrefix("changed ") { events.append(line) }
        }
        return true
    }

    func quit() async throws {
        #expect(try await ask("quit") == "bye")
        _ = try await child.wait(timeout: 30)
    }
}

/// Real processes sharing one store file.
@Suite struct MultiProcessTests {
    @Test func distinctKeysFromManyProcessesAllSurvive() async throws {
        let dir = try TemporaryDirectory()
        let processes = 4
        let keysEach = 25
        var stores: [ServedStore] = []
        for _ in 0..<processes { stores.append(try await ServedStore(dir.file(), saveMode: "immediate")) }
        // Pipeline every command first, so the processes really write at the same time.
        for (index, store) in stores.enumerated() {
            for key in 0..<keysEach { try store.child.send("set p\(index)-k\(key) \(index * 1000 + key)") }
        }
        for store in stores {
            for _ in 0..<keysEach { #expect(try await store.answer() == "ok") }
        }
        for store in stores { try await store.quit() }
        let merged = try openFresh(dir.file())
        #expect(merged.keys.count == processes * keysEach)
        for index in 0..<processes {
            for key in 0..<keysEach {
                #expect(merged.integer(forKey: "p\(index)-k\(key)") == index * 1000 + key, "p\(index)-k\(key)")
            }
        }
    }

    @Test func twoWritersOfOneKeyNeverMixValues() async throws {
        let dir = try TemporaryDirectory()
        let a = try await ServedStore(dir.file())
        let b = try await ServedStore(dir.file())
        let valueA = "{\"from\":\"a\",\"list\":[\(Array(repeating: "1", count: 500).joined(separator: ","))]}"
        let valueB = "{\"from\":\"b\",\"list\":[\(Array(repeating: "2", count: 700).joined(separator: ","))]}"
        let parsedA = try JSONValue(parsing: valueA)
        let parsedB = try JSONValue(parsing: valueB)
        for round in 0..<30 {
            try a.child.send("set shared \(valueA)")
            try b.child.send("set shared \(valueB)")
            try a.child.send("set a-round \(round)")
            try b.child.send("set b-round \(round)")
            try a.child.send("flush")
            try b.child.send("flush")
            for store in [a, b] {
                for _ in 0..<3 { #expect(try await store.answer() == "ok") }
            }
            let file = try openFresh(dir.file())
            let shared = file.object(forKey: "shared")
            #expect(shared == parsedA || shared == parsedB)
            #expect(file.integer(forKey: "a-round") == round)
            #expect(file.integer(forKey: "b-round") == round)
        }
        try await a.quit()
        try await b.quit()
    }

    @Test func processesObserveEachOthersWrites() async throws {
        let dir = try TemporaryDirectory()
        let a = try await ServedStore(dir.file())
        let b = try await ServedStore(dir.file())
        #expect(try await a.ask("observe volume") == "ok")
        #expect(try await b.ask("observe volume") == "ok")
        #expect(try await b.ask("set volume 0.25") == "ok")
        #expect(try await b.ask("flush") == "ok")
        #expect(try await a.waitForEvent("changed volume 0.25"))
        #expect(try await a.ask("set volume 0.75") == "ok")
        #expect(try await a.ask("flush") == "ok")
        #expect(try await b.waitForEvent("changed volume 0.75"))
        // And a person's edit with the command-line tool's peer: an in-process store.
        let here = try openFresh(dir.file())
        here.set(1.0, forKey: "volume")
        try await here.save()
        #expect(try await a.waitForEvent("changed volume 1"))
        #expect(try await b.waitForEvent("changed volume 1"))
        try await a.quit()
        try await b.quit()
    }

    /// `Defaults.standard` in a real program: placed under `$XDG_CONFIG_HOME/<executable name>`, with the
    /// program's `-key value` arguments as its argument domain, and moved by `CODABLE_DEFAULTS_DIRECTORY`.
    @Test(
        .enabled(
            if: isLinux,
            "needs Linux: XDG_CONFIG_HOME places Defaults.standard there; Apple platforms use Application Support"
        ))
    func standardLivesUnderXDGConfigHomeAndReadsTheArguments() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let config = dir.url.appendingPathComponent("config").path
        let child = try ChildProcess(
            fixture, ["standard", "-greeting", "hello there"],
            environment: ["XDG_CONFIG_HOME": config, "CODABLE_DEFAULTS_DIRECTORY": ""])
        let expected = config + "/codable-defaults-fixture/defaults.json"
        #expect(try await child.readLine(timeout: 30) == "path \(expected)")
        #expect(try await child.readLine(timeout: 30) == "greeting hello there")
        #expect(try await child.readLine(timeout: 30) == "ok")
        _ = try await child.wait(timeout: 30)
        #expect(try text(URL(fileURLWithPath: expected)) == "{\n  \"launched\": true\n}\n", "arguments are not stored")

        let moved = dir.url.appendingPathComponent("moved").path
        let second = try ChildProcess(fixture, ["standard"], environment: ["CODABLE_DEFAULTS_DIRECTORY": moved])
        #expect(try await second.readLine(timeout: 30) == "path \(moved)/defaults.json")
        #expect(try await second.readLine(timeout: 30) == "greeting none")
        _ = try await second.wait(timeout: 30)
    }

    @Test func pendingChangesAreWrittenAtNormalExit() async throws {
        let dir = try TemporaryDirectory()
        let store = try await ServedStore(dir.file(), saveMode: "manual")
        #expect(try await store.ask("set left-at-exit 42") == "ok")
        #expect(!FileManager.default.fileExists(atPath: dir.file().path), "manual: nothing written yet")
        store.child.closeInput()  // end of input: the process exits normally
        _ = try await store.child.wait(timeout: 30)
        #expect(try openFresh(dir.file()).integer(forKey: "left-at-exit") == 42)
    }

    @Test(.enabled(if: findExecutable("python3") != nil, "needs python3, which holds the lock in this test"))
    func aDeadLockHolderReleasesTheLock() async throws {
        let python = try #require(findExecutable("python3"))
        let dir = try TemporaryDirectory()
        let lockPath = dir.file(".settings.json.lock").path
        let holder = try ChildProcess(
            python,
            [
                "-c",
                "import fcntl, time; f = open('\(lockPath)', 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
                    + "print('locked', flush=True); time.sleep(60)",
            ])
        #expect(try await holder.readLine(timeout: 30) == "locked")
        // The save waits until the kernel releases the lock, whatever the load (not the default 10 s).
        let defaults = try openFresh(dir.file(), options: .init(lockTimeout: .seconds(300)))
        defaults[.count] = 1
        let finished = Recorder<Bool>()
        let thread = Thread {
            do {
                try defaults.save()
                finished.append(true)
            } catch {
                Issue.record(error)
            }
        }
        thread.start()
        #expect(waitForLockWaiter(defaults), "the save waits for the lock")
        #expect(finished.values.isEmpty, "the save waits for the lock")
        holder.kill(SIGKILL)
        _ = try await holder.wait(timeout: 30)
        // A guard against a hang, not a time the release is expected to take.
        let deadline = Date().addingTimeInterval(120)
        while finished.values.isEmpty && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(finished.values == [true], "the kernel released the dead holder's lock")
        #expect(try openFresh(dir.file())[.count] == 1)
    }

    // MARK: A lock held forever

    /// `flock LOCKFILE -c 'echo locked; exec cat'` from util-linux: holds the store's lock until its input closes.
    final class LockHolder {
        /// Whether the tests of a held lock can run: util-linux's `flock` is installed, and the library names the
        /// holder's pid in a lock timeout, which it reads from `/proc/locks` (Linux only).
        static let isAvailable: Bool = {
            #if os(Linux)
                return findExecutable("flock") != nil && FileManager.default.isReadableFile(atPath: "/proc/locks")
            #else
                return false
            #endif
        }()

        /// Why the tests of a held lock are skipped where ``isAvailable`` is false.
        static let unavailableMessage: Comment = {
            #if os(Linux)
                return "needs flock from util-linux and /proc/locks"
            #else
                return "needs Linux: flock(1) from util-linux, and the lock holder's pid read from /proc/locks"
            #endif
        }()

        let child: ChildProcess

        init(_ lockPath: String) async throws {
            let flock = try #require(findExecutable("flock"), "flock (util-linux) is not installed")
            child = try ChildProcess(flock, [lockPath, "-c", "echo locked; exec cat"])
            let line = try await child.readLine(timeout: 30)
            guard line == "locked" else { throw ChildProcessError(description: "flock did not start: \(line ?? "")") }
        }

        /// Releases the lock and waits for the holder to end.
        func release() async throws {
            child.closeInput()
            _ = try await child.readToEnd(timeout: 30)
            #expect(try await child.wait(timeout: 30) == .exited(0))
        }
    }

    @Test(.enabled(if: LockHolder.isAvailable, LockHolder.unavailableMessage))
    func aLockHeldByAnotherProcessTimesOutAndTheChangeStaysPending() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let options = Defaults.Options(lockTimeout: .milliseconds(200))
        let defaults = try openFresh(url, options: options)
        defaults[.count] = 1
        try await defaults.save()
        let before = try bytes(url)
        let lockPath = DurableFile(path: DurableFile.canonicalPath(url.path)).lockPath

        let holder = try await LockHolder(lockPath)
        defaults[.count] = 2
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .lockTimeout, "\(String(describing: error))")
        #expect(error?.path == lockPath)
        #expect(error?.message.contains("held by process \(holder.child.pid)") == true, "\(String(describing: error))")
        #expect(try bytes(url) == before, "nothing was written")
        #expect(defaults[.count] == 2 && defaults.hasStoredValue(for: .count), "the change stays pending")

        // Every other taker of the lock is bounded too: a migration at open.
        let migration = Defaults.Migration(to: 1) { _ in }
        let opening = #expect(throws: DefaultsError.self) {
            try openFresh(url, options: .init(migrations: [migration], lockTimeout: .milliseconds(50)))
        }
        #expect(opening?.code == .lockTimeout, "\(String(describing: opening))")

        try await holder.release()
        try await defaults.save()
        #expect(try openFresh(url)[.count] == 2, "the next save writes the change")
    }
}
