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

/// Atomic updates across real processes: the fixture's `increment` (`modify`) and the tool's `update`,
/// `write -array-add`, `write -dict-add` and `rename`.
@Suite struct ModifyProcessTests {
    /// Runs the built tool with `arguments` as a child process (standard error in `dir`).
    private func startTool(_ arguments: [String], in dir: TemporaryDirectory, name: String) throws -> ChildProcess {
        let tool = URL(fileURLWithPath: try Fixture.locate("codable-defaults"))
        return try ChildProcess(tool.path, arguments, stderrPath: dir.file("\(name).stderr").path)
    }

    /// Waits until process `pid` has the store's lock file open: it is taking the lock (or waits for it).
    private func waitUntilTakingTheLock(_ pid: pid_t, lockFile: String, timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let fds = "/proc/\(pid)/fd"
        repeat {
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + entry)
                if target?.hasSuffix(lockFile) == true { return true }
            }
            usleep(1000)
        } while Date() < deadline
        return false
    }

    @Test func fourProcessesOf250IncrementsCountAThousand() async throws {
        let dir = try TemporaryDirectory()
        var processes: [ServedStore] = []
        for _ in 0..<4 { processes.append(try await ServedStore(dir.file())) }
        // Every process is ready before any starts, so their updates run at once.
        for process in processes { try process.child.send("increment count 250") }
        for process in processes { #expect(try await process.answer() == "ok") }
        #expect(try openFresh(dir.file())[.count] == 1_000)
        for process in processes { try await process.quit() }
    }

    @Test func concurrentToolUpdatesAllCount() async throws {
        let dir = try TemporaryDirectory()
        let file = dir.file().path
        for round in 0..<5 {
            let tools = try (0..<6).map {
                try startTool(["update", file, "count", "--add", "1"], in: dir, name: "\(round)-\($0)")
            }
            for tool in tools { #expect(try await tool.wait(timeout: 60) == .exited(0)) }
        }
        #expect(try openFresh(dir.file())[.count] == 30)
        let tool = try startTool(["update", file, "count", "--add", "-31"], in: dir, name: "last")
        #expect(try await tool.readLine(timeout: 60) == "-1")
        #expect(try await tool.wait(timeout: 60) == .exited(0))
    }

    /// The tool's read-modify-write waits for the lock before it reads: a value another process writes while
    /// holding the lock is what the tool adds to.
    @Test(
        .enabled(if: hasProcFileSystem, "needs Linux's /proc/PID/fd, to see the tool wait for the lock"),
        arguments: [
            (["write", "recent", "-array-add", "theirs"], #"["mine"]"#, #"{"recent":["mine","theirs"]}"#),
            (["write", "recent", "-dict-add", "b", "2"], #"{"a":"1"}"#, #"{"recent":{"a":"1","b":"2"}}"#),
            (["rename", "recent", "renamed"], #"["mine"]"#, #"{"renamed":["mine"]}"#),
            (["update", "recent", "--add", "1"], "41", #"{"recent":42}"#),
        ])
    func aToolUpdateStartsFromTheValueWrittenWhileItWaitedForTheLock(
        command: [String], written: String, expected: String
    ) async throws {
        let dir = try TemporaryDirectory()
        let file = dir.file()
        let defaults = try openFresh(file)
        let mine = try JSONValue(parsing: written)
        var arguments = command
        arguments.insert(file.path, at: 1)
        // The tool starts while this store holds the lock (the synchronous modify, on this thread).
        func startToolHoldingTheLock() throws -> ChildProcess? {
            var tool: ChildProcess?
            try defaults.modify(forKey: "recent") { value in
                let started = try startTool(arguments, in: dir, name: "tool")
                tool = started
                try #require(
                    waitUntilTakingTheLock(started.pid, lockFile: "/.settings.json.lock"),
                    "the tool did not reach the lock file")
                value = mine
            }
            return tool
        }
        let child = try #require(try startToolHoldingTheLock())
        let status = try await child.wait(timeout: 60)
        let stderr = try String(contentsOf: dir.file("tool.stderr"), encoding: .utf8)
        #expect(status == .exited(0), "\(stderr)")
        let reopened = try openFresh(file)
        guard case .object(let members) = try JSONValue(parsing: expected) else {
            Issue.record("not an object")
            return
        }
        #expect(reopened.keys == members.keys.sorted())
        for (key, value) in members { #expect(reopened.object(forKey: key) == value) }
    }

    @Test func parallelArrayAddsKeepEveryElement() async throws {
        let dir = try TemporaryDirectory()
        let file = dir.file().path
        let tools = try (0..<8).map {
            try startTool(["write", file, "recent", "-array-add", "e\($0)"], in: dir, name: "\($0)")
        }
        for tool in tools { #expect(try await tool.wait(timeout: 60) == .exited(0)) }
        let value = try openFresh(dir.file()).object(forKey: "recent")
        guard case .array(let elements)? = value else {
            Issue.record("not an array: \(String(describing: value))")
            return
        }
        #expect(Set(elements) == Set((0..<8).map { JSONValue.string("e\($0)") }))
        #expect(elements.count == 8)
    }
}
