import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// What the tool does with arguments it cannot use as given, keys that would break its line-oriented
/// output, and keys too long to print whole.
@Suite struct CommandLineInputTests {
    // MARK: Arguments that are not UTF-8

    @Test func argumentsThatAreNotUTF8AreRefusedNotRepaired() async throws {
        let sandbox = try ToolSandbox()
        // The shell passes the bytes as they are (`\351` is é in Latin-1, not UTF-8).
        let cases: [(String, String)] = [
            (#"read "$(printf 'caf\351.json')""#, #"FILE is not valid UTF-8: 'caf\xE9.json'"#),
            (#"write s.json "$(printf 'k\377')" 1"#, "KEY is not valid UTF-8"),
            (#"write s.json k --string "$(printf 'v\377')""#, "VALUE is not valid UTF-8"),
            (#"delete s.json a "$(printf 'k\377')""#, "KEY is not valid UTF-8"),
            (#"import s.json "$(printf 'src\377.json')""#, "SOURCE is not valid UTF-8"),
            (#"export s.json "$(printf 'out\377.json')""#, "DEST is not valid UTF-8"),
            (#"read --suite "$(printf 'p\377')""#, "--suite NAME is not valid UTF-8"),
        ]
        for (script, message) in cases {
            let result = try await sandbox.runThroughShell(script)
            #expect(result.status == 2, "\(script)")
            #expect(result.stderr.contains(message), "\(script): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try sandbox.workContents().isEmpty, "nothing was created under a repaired name")
    }

    // MARK: Keys in the output

    @Test func keysAndWatchPrintAKeyThatWouldBreakTheLineAsAJSONString() async throws {
        let sandbox = try ToolSandbox()
        let members = [
            "plain": 1, "a\nb": 2, "tab\there": 3, "\"quoted": 4, #"back\slash"#: 5, "": 6, "é": 7,
        ]
        let data = try JSONSerialization.data(withJSONObject: members)
        try Data(data).write(to: sandbox.work.appendingPathComponent("s.json"))
        let keys = try await sandbox.run(["keys", "s.json"])
        #expect(keys.status == 0)
        #expect(
            keys.stdout == #"""
                ""
                "\"quoted"
                "a\nb"
                back\slash
                plain
                "tab\there"
                é

                """#)

        let watch = try sandbox.start(["watch", "s.json", "--initial", "a\nb", "plain", "tab\there"])
        defer { watch.kill() }
        #expect(try await watch.waitForOutput(containing: "\"a\\nb\"\t2\nplain\t1\n\"tab\\there\"\t3\n"))
        watch.signal(SIGTERM)
        #expect(try await watch.waitForExit() == 0)
    }

    // MARK: Long keys

    @Test func aFileWithAnOverlongKeyIsABadFileAndTheKeyIsShortened() async throws {
        let sandbox = try ToolSandbox()
        let key = String(repeating: "k", count: 1025)
        try sandbox.create("s.json", "{\"\(key)\": 1}")
        for command in ["check", "read", "keys"] {
            let result = try await sandbox.run([command, "s.json"])
            #expect(result.status == 4, "\(command): the README's table says 4 for a bad file")
            #expect(result.stderr.contains("key \"\(String(repeating: "k", count: 40))…\" (1025 bytes)"))
            #expect(result.stderr.count < 200, "\(command): \(result.stderr)")
        }
        for arguments in [["write", "t.json", key, "1"], ["delete", "t.json", key, "--force"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments[0])")
            #expect(result.stderr.contains("(1025 bytes) is over the limit of 1024 bytes"))
            #expect(result.stderr.count < 400, "\(arguments[0]): \(result.stderr)")
        }
        let missing = try await sandbox.run(["read", "t.json", String(repeating: "m", count: 500)])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("…\" (500 bytes): no value stored"), "\(missing.stderr)")
    }
}

extension ToolSandbox {
    /// Runs `codable-defaults SCRIPT` through `/bin/sh` in `work/`, so that the arguments can hold bytes that a
    /// Swift `String` cannot (the script is the tool's arguments, as written in a shell).
    func runThroughShell(_ script: String, timeout: Duration = .seconds(60)) async throws -> ToolResult {
        let binary = URL(fileURLWithPath: try Fixture.locate("codable-defaults"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \"$0\" " + script, binary.path]
        process.currentDirectoryURL = work
        var environment = ProcessInfo.processInfo.environment
        environment["CODABLE_DEFAULTS_DIRECTORY"] = configDirectory.path
        process.environment = environment
        let name = UUID().uuidString
        let stdout = io.appendingPathComponent(name + ".out")
        let stderr = io.appendingPathComponent(name + ".err")
        try Data().write(to: stdout)
        try Data().write(to: stderr)
        let stdoutHandle = try FileHandle(forWritingTo: stdout)
        let stderrHandle = try FileHandle(forWritingTo: stderr)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        try process.run()
        try stdoutHandle.close()
        try stderrHandle.close()
        let running = RunningTool(process: process, arguments: [script], stdout: stdout, stderr: stderr)
        defer { running.kill() }
        let status = try await running.waitForExit(timeout: timeout)
        return ToolResult(status: status, stdout: try running.output(), stderr: try running.errors())
    }
}
