import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Tests of the `codable-defaults` command-line tool, run as a real process: the binary built next to the
/// test bundle, with a closed standard input, in a fresh directory per test.
@Suite struct CommandLineToolTests {
    // MARK: Help and usage

    @Test func helpListsEveryCommandAndTheExitStatuses() async throws {
        let sandbox = try ToolSandbox()
        let help = try await sandbox.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stderr.isEmpty)
        for command in Self.commands {
            #expect(help.stdout.contains("\n  \(command) "), "help lists \(command)")
        }
        for status in 0...5 { #expect(help.stdout.contains("\n  \(status)  ")) }
        #expect(try await sandbox.run(["-h"]).stdout == help.stdout)
        #expect(try await sandbox.run(["help"]).stdout == help.stdout)

        for command in Self.commands + ["help"] {
            let byHelp = try await sandbox.run(["help", command])
            #expect(byHelp.status == 0)
            #expect(byHelp.stdout.contains("USAGE: codable-defaults \(command) "), "help \(command)")
            let byOption = try await sandbox.run([command, "--help"])
            #expect(byOption.status == 0)
            #expect(byOption.stdout == byHelp.stdout, "\(command) --help")
            #expect(try await sandbox.run([command, "file.json", "-h"]).stdout == byHelp.stdout)
        }
        #expect(try sandbox.workContents().isEmpty, "help touches no file")
    }

    @Test func versionPrintsOneLine() async throws {
        let sandbox = try ToolSandbox()
        let result = try await sandbox.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("codable-defaults "))
        #expect(result.stdout.filter { $0 == "\n" }.count == 1)
    }

    @Test func usageErrorsExitWithTwoAndExplain() async throws {
        let sandbox = try ToolSandbox()
        let cases: [([String], String)] = [
            ([], "missing command"),
            (["rea", "s.json"], "unknown command 'rea' (did you mean 'read'?)"),
            (["--bogus"], "unknown option '--bogus'"),
            (["--suite", "x", "read"], "--suite is an option of every command that takes FILE"),
            (["read"], "missing FILE"),
            (["read", "s.json", "--sute", "x"], "unknown option '--sute' for 'read' (did you mean '--suite'?)"),
            (["read", "s.json", "--all"], "(--all is an option of 'delete')"),
            (["read", "s.json", "-x"], "unknown option '-x'"),
            (["read", "s.json", "k", "extra"], "unexpected argument 'extra'"),
            (["read", "s.json", "--suite"], "option --suite needs a value"),
            (["read", "--suite", "a", "--standard", "b"], "not both"),
            (["read", "--suite", "a", "--suite", "b"], "more than once"),
            (["read", "s.json", "--app", "x"], "needs --suite"),
            (["read", "--suite", "../up"], "invalid suite name"),
            (["read", "--standard", ".."], "invalid application identifier"),
            (["write", "s.json", "k"], "missing VALUE"),
            (["write", "s.json", "k", "1", "--string=yes"], "does not take a value"),
            (["delete", "s.json"], "missing KEY"),
            (["delete", "s.json", "k", "--all"], "not both"),
            (["import", "s.json"], "missing SOURCE"),
            (["help", "nope"], "it is not a command"),
            (["--version", "extra"], "unexpected argument 'extra'"),
        ]
        for (arguments, message) in cases {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.hasPrefix("codable-defaults: "), "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("codable-defaults help") || result.stderr.contains("--help"))
        }
        #expect(try sandbox.workContents().isEmpty, "a usage error creates no file")
        #expect(!FileManager.default.fileExists(atPath: sandbox.configDirectory.path))
    }

    // MARK: write and read

    @Test func writeThenReadValuesAndTheWholeStore() async throws {
        let sandbox = try ToolSandbox()
        try await sandbox.expectSuccess(["write", "s.json", "volume", "0.8"])
        try await sandbox.expectSuccess(["write", "s.json", "profile", #"{"name": "Ann", "age": 29}"#])
        try await sandbox.expectSuccess(["write", "s.json", "name", "--string", "Ann \"Lee\""])
        try await sandbox.expectSuccess(["write", "--string", "s.json", "word", "true"])
        try await sandbox.expectSuccess(["write", "s.json", "offset", "-5"])
        try await sandbox.expectSuccess(["write", "s.json", "nothing", "null"])
        try await sandbox.expectSuccess(["write", "s.json", "list", "[1, [], {}, \"/\"]"])
        try await sandbox.expectSuccess(["write", "--", "s.json", "--dash", "\"--x\""])

        let expected: [(String, String)] = [
            ("volume", "0.8"), ("profile", #"{"age":29,"name":"Ann"}"#), ("name", #""Ann \"Lee\"""#),
            ("word", #""true""#), ("offset", "-5"), ("nothing", "null"), ("list", #"[1,[],{},"/"]"#),
            ("--dash", #""--x""#),
        ]
        for (key, json) in expected {
            let result = try await sandbox.run(["read", "s.json", "--", key])
            #expect(result.status == 0)
            #expect(result.stdout == json + "\n", "read \(key)")
        }

        let whole = try await sandbox.run(["read", "s.json"])
        #expect(whole.status == 0)
        #expect(
            whole.stdout == """
                {
                  "--dash": "--x",
                  "list": [
                    1,
                    [],
                    {},
                    "/"
                  ],
                  "name": "Ann \\"Lee\\"",
                  "nothing": null,
                  "offset": -5,
                  "profile": {
                    "age": 29,
                    "name": "Ann"
                  },
                  "volume": 0.8,
                  "word": "true"
                }

                """)
        #expect(try sandbox.text("s.json").hasPrefix("{\n  \"--dash\": \"--x\",\n  \"list\": [1,[],{},\"/\"],\n"))
    }

    @Test func writeKeepsOtherKeysAndReplacesTheValue() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\n  \"kept\": {\"b\": 1, \"a\": 2},\n  \"x\": 1\n}\n")
        try await sandbox.expectSuccess(["write", "s.json", "x", "2"])
        #expect(try sandbox.text("s.json") == "{\n  \"kept\": {\"b\":1,\"a\":2},\n  \"x\": 2\n}\n")
    }

    @Test func writeOfTextThatIsNotJSONIsAUsageErrorShowingHowToStoreAString() async throws {
        let sandbox = try ToolSandbox()
        let result = try await sandbox.run(["write", "s.json", "greeting", "hello world"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("codable-defaults: VALUE is not valid JSON (line 1, column 1: "))
        #expect(result.stderr.contains("): hello world\n"))
        #expect(result.stderr.contains("codable-defaults write s.json greeting --string 'hello world'"))
        #expect(result.stderr.contains(#"codable-defaults write s.json greeting '"hello world"'"#))
        #expect(try sandbox.workContents().isEmpty)

        try await sandbox.expectSuccess(["write", "s.json", "greeting", #""hello world""#])
        #expect(try await sandbox.run(["read", "s.json", "greeting"]).stdout == "\"hello world\"\n")
    }

    @Test func readOfAMissingKeyExitsWithThree() async throws {
        let sandbox = try ToolSandbox()
        let missingFile = try await sandbox.run(["read", "s.json"])
        #expect(missingFile.status == 0)
        #expect(missingFile.stdout == "{}\n", "a missing file is an empty store")
        #expect(try sandbox.workContents().isEmpty, "read creates no file")

        try await sandbox.expectSuccess(["write", "s.json", "a", "1"])
        let result = try await sandbox.run(["read", "s.json", "b"])
        #expect(result.status == 3)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("codable-defaults: "))
        #expect(result.stderr.contains("s.json: key \"b\": no value stored"))
    }

    // MARK: delete, keys, check

    @Test func deleteRemovesKeysAndRefusesMissingOnesUnlessForced() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4\n}\n")
        try await sandbox.expectSuccess(["delete", "s.json", "a", "b"])
        #expect(try sandbox.text("s.json") == "{\n  \"c\": 3,\n  \"d\": 4\n}\n")

        let before = try sandbox.bytes("s.json")
        let missing = try await sandbox.run(["delete", "s.json", "c", "zz"])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("key \"zz\": no value stored; nothing was deleted"))
        #expect(try sandbox.bytes("s.json") == before, "nothing deleted")

        try await sandbox.expectSuccess(["delete", "--force", "s.json", "c", "zz"])
        #expect(try sandbox.text("s.json") == "{\n  \"d\": 4\n}\n")

        try await sandbox.expectSuccess(["delete", "s.json", "--all"])
        #expect(try sandbox.text("s.json") == "{}\n")
    }

    @Test func keysPrintsOneKeyPerLineInTheFilesOrder() async throws {
        let sandbox = try ToolSandbox()
        #expect(try await sandbox.run(["keys", "s.json"]).stdout.isEmpty)
        try sandbox.create("s.json", "{\"b\": 1, \"a\": 2, \"B\": 3, \"é\": 4}")
        let result = try await sandbox.run(["keys", "s.json"])
        #expect(result.status == 0)
        #expect(result.stdout == "B\na\nb\né\n")
    }

    @Test func checkValidatesTheFile() async throws {
        let sandbox = try ToolSandbox()
        let missing = try await sandbox.run(["check", "s.json"])
        #expect(missing.status == 4)
        #expect(missing.stderr.contains("s.json: no such file"))

        try sandbox.create("s.json", "{\"a\": 1, \"b\": [true]}")
        let valid = try await sandbox.run(["check", "s.json"])
        #expect(valid.status == 0)
        #expect(valid.stdout.hasSuffix("s.json: valid (2 keys)\n"))

        try sandbox.create("bad.json", "{\n  \"a\": 1,\n  \"a\": 2\n}\n")
        let duplicate = try await sandbox.run(["check", "bad.json"])
        #expect(duplicate.status == 4)
        #expect(duplicate.stderr.hasPrefix("codable-defaults: "))
        #expect(duplicate.stderr.contains("bad.json:3:"), "\(duplicate.stderr)")

        // An empty file (`touch`) holds no data: a valid store of no keys; whitespace alone is not JSON.
        try sandbox.create("empty.json", "")
        let empty = try await sandbox.run(["check", "empty.json"])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout.hasSuffix("empty.json: valid (0 keys)\n"))
        let read = try await sandbox.run(["read", "empty.json"])
        #expect(read.status == 0 && read.stdout == "{}\n", "\(read.stderr)")
        #expect(try sandbox.bytes("empty.json") == [], "reading writes nothing")
        try sandbox.create("blank.json", " \n")
        #expect(try await sandbox.run(["check", "blank.json"]).status == 4)

        try sandbox.createDirectory("folder.json")
        let directory = try await sandbox.run(["check", "folder.json"])
        #expect(directory.status == 4)
        #expect(directory.stderr.contains("folder.json"))
    }

    // MARK: import and export

    @Test func importMergesAnObjectsMembers() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\n  \"a\": 1,\n  \"b\": 2\n}\n")
        try sandbox.create("src.json", "{\"b\": {\"y\": 1, \"x\": 2}, \"c\": \"three\"}")
        try await sandbox.expectSuccess(["import", "s.json", "src.json"])
        #expect(
            try sandbox.text("s.json")
                == "{\n  \"a\": 1,\n  \"b\": {\"x\":2,\"y\":1},\n  \"c\": \"three\"\n}\n")

        let before = try sandbox.bytes("s.json")
        try sandbox.create("array.json", "[1, 2]")
        try sandbox.create("invalid.json", "{\n  \"d\": 1,\n}")
        for (source, message) in [
            ("array.json", "array.json:1:1"), ("invalid.json", "invalid.json:3:1"),
            ("none.json", "none.json: no such file"),
        ] {
            let result = try await sandbox.run(["import", "s.json", source])
            #expect(result.status == 4, "\(source)")
            #expect(result.stderr.hasPrefix("codable-defaults: "))
            #expect(result.stderr.contains(message), "\(source): \(result.stderr)")
            #expect(try sandbox.bytes("s.json") == before, "\(source) changes nothing")
        }
    }

    @Test func exportWritesTheStoreFormat() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\"b\": {\"y\": 1, \"x\": [ 2 ]}, \"a\": \"/\"}")
        let expected = "{\n  \"a\": \"/\",\n  \"b\": {\"x\":[2],\"y\":1}\n}\n"
        let toStandardOutput = try await sandbox.run(["export", "s.json"])
        #expect(toStandardOutput.status == 0)
        #expect(toStandardOutput.stdout == expected)

        try await sandbox.expectSuccess(["export", "s.json", "out.json"])
        #expect(try sandbox.text("out.json") == expected)
        try await sandbox.expectSuccess(["import", "copy.json", "out.json"])
        #expect(try sandbox.text("copy.json") == expected, "an export imports back")

        let itself = try await sandbox.run(["export", "s.json", "./s.json"])
        #expect(itself.status == 2)
        #expect(itself.stderr.contains("DEST ./s.json is the store file "))

        let empty = try await sandbox.run(["export", "none.json"])
        #expect(empty.stdout == "{}\n")
    }

    @Test func exportWritesThroughALinkAndRefusesWhatIsNotAFile() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\"a\": 1}")
        let work = sandbox.work
        try FileManager.default.createSymbolicLink(
            atPath: work.appendingPathComponent("link.json").path, withDestinationPath: "out.json")
        try await sandbox.expectSuccess(["export", "s.json", "link.json"])
        #expect(try sandbox.text("out.json") == "{\n  \"a\": 1\n}\n")
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: work.appendingPathComponent("link.json").path)
                == "out.json", "the link stays a link")
        try FileManager.default.createSymbolicLink(
            atPath: work.appendingPathComponent("null.json").path, withDestinationPath: "/dev/null")
        let refused = try await sandbox.run(["export", "s.json", "null.json"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("not a regular file"))
    }

    @Test func theSchemaVersionIsExportedButNeverWrittenByHand() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\"$schemaVersion\": 2, \"a\": 1}")
        let export = try await sandbox.run(["export", "s.json"])
        #expect(export.stdout == "{\n  \"$schemaVersion\": 2,\n  \"a\": 1\n}\n")
        let check = try await sandbox.run(["check", "s.json"])
        #expect(check.stdout.hasSuffix("valid (1 key)\n"))
        for arguments in [["write", "s.json", "$schemaVersion", "3"], ["delete", "s.json", "$schemaVersion"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("reserved"), "\(arguments)")
        }
        try sandbox.create("src.json", "{\"$schemaVersion\": 9, \"b\": 2}")
        let imported = try await sandbox.run(["import", "s.json", "src.json"])
        #expect(imported.status == 0)
        #expect(imported.stderr.contains("skipped $schemaVersion"))
        #expect(try sandbox.text("s.json") == "{\n  \"$schemaVersion\": 2,\n  \"a\": 1,\n  \"b\": 2\n}\n")
    }

    // MARK: Suites and standard stores

    @Test func suiteAndStandardResolveLikeTheLibrary() async throws {
        let sandbox = try ToolSandbox()
        let config = sandbox.configDirectory
        try await sandbox.expectSuccess(["write", "--suite", "prefs", "a", "1"])
        try await sandbox.expectSuccess(["write", "b", "2", "--standard", "myapp"])
        #expect(try sandbox.text(at: config.appendingPathComponent("prefs.json")) == "{\n  \"a\": 1\n}\n")
        #expect(try sandbox.text(at: config.appendingPathComponent("defaults.json")) == "{\n  \"b\": 2\n}\n")
        #expect(try await sandbox.run(["read", "--suite", "prefs", "a"]).stdout == "1\n")
        #expect(try await sandbox.run(["keys", "--standard", "other"]).stdout == "b\n", "the override wins")

        // Without the override: XDG_CONFIG_HOME on Linux. (Apple platforms use the user's Application Support, which
        // a test must not write in.)
        #if os(Linux)
            let xdg = sandbox.root.appendingPathComponent("xdg")
            let environment = ["CODABLE_DEFAULTS_DIRECTORY": "", "XDG_CONFIG_HOME": xdg.path]
            try await sandbox.expectSuccess(["write", "--standard", "myapp", "c", "3"], environment: environment)
            try await sandbox.expectSuccess(
                ["write", "--suite", "s", "--app", "myapp", "d", "4"], environment: environment)
            #expect(try sandbox.text(at: xdg.appendingPathComponent("myapp/defaults.json")) == "{\n  \"c\": 3\n}\n")
            #expect(try sandbox.text(at: xdg.appendingPathComponent("myapp/s.json")) == "{\n  \"d\": 4\n}\n")
            try await sandbox.expectSuccess(["write", "--suite", "own", "e", "5"], environment: environment)
            #expect(
                try sandbox.text(at: xdg.appendingPathComponent("codable-defaults/own.json")) == "{\n  \"e\": 5\n}\n",
                "a suite without --app is the tool's own, as Defaults(suiteName:) resolves it")
        #endif
    }

    // MARK: Failures

    @Test func aFailedWriteExitsWithOneAndIsNotRetriedAtExit() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("plain", "not a directory")
        let result = try await sandbox.run(["write", "plain/s.json", "a", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("codable-defaults: "))
        #expect(result.stderr.contains("plain"))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, "one error, no second save at exit: \(result.stderr)")

        let export = try await sandbox.run(["export", "s.json", "missing/out.json"])
        #expect(export.status == 1)
        #expect(export.stderr.contains("missing/out.json"))
        #expect(try sandbox.workContents() == ["plain"])
    }

    #if os(Linux)
        @Test func anOutputThatCannotBeWrittenExitsWithOne() async throws {
            let sandbox = try ToolSandbox()
            try await sandbox.expectSuccess(["write", "s.json", "a", "1"])
            let result = try await sandbox.run(["read", "s.json"], standardOutput: URL(fileURLWithPath: "/dev/full"))
            #expect(result.status == 1)
            #expect(result.stderr.contains("cannot write to standard output"))
        }
    #endif

    @Test func aCorruptFileIsLeftByteForByteUnchangedByEveryCommand() async throws {
        let sandbox = try ToolSandbox()
        let corrupt = "{\n  \"a\": 1,\n  \"b\": tru\n}\n"
        try sandbox.create("s.json", corrupt)
        try sandbox.create("src.json", "{\"c\": 3}")
        let listing = try sandbox.workContents()
        let commands: [[String]] = [
            ["read", "s.json"], ["read", "s.json", "a"], ["write", "s.json", "a", "2"],
            ["write", "s.json", "c", "--string", "x"], ["delete", "s.json", "a"], ["delete", "s.json", "--all"],
            ["delete", "s.json", "zz", "--force"], ["keys", "s.json"], ["check", "s.json"],
            ["import", "s.json", "src.json"], ["export", "s.json"], ["export", "s.json", "out.json"],
        ]
        for arguments in commands {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 4, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.hasPrefix("codable-defaults: "), "\(arguments)")
            #expect(result.stderr.contains("s.json:3:11: key \"b\": "), "\(arguments): \(result.stderr)")
            #expect(try sandbox.text("s.json") == corrupt, "\(arguments)")
            #expect(try sandbox.workContents() == listing, "\(arguments) leaves no file behind")
        }
    }

    @Test func commandsRunWithAClosedStandardInput() async throws {
        let sandbox = try ToolSandbox()
        // Every run of the suite has a closed standard input; reading it as a source must not wait either.
        let result = try await sandbox.run(["import", "s.json", "/dev/stdin"], timeout: .seconds(20))
        #expect(result.status == 4)
        #expect(result.stderr.contains("/dev/stdin") || result.stderr.contains("pipe"), "\(result.stderr)")
        try await sandbox.expectSuccess(["write", "s.json", "a", "1"], timeout: .seconds(20))
        #expect(try await sandbox.run(["read", "s.json", "a"], timeout: .seconds(20)).stdout == "1\n")
    }

    // MARK: watch

    @Test func watchPrintsChangesMadeByAnotherProcessAndStopsOnSIGTERM() async throws {
        let sandbox = try ToolSandbox()
        try await sandbox.expectSuccess(["write", "s.json", "volume", "1"])
        let watch = try sandbox.start(["watch", "s.json", "volume", "--initial"])
        defer { watch.kill() }
        #expect(try await watch.waitForOutput(containing: "volume\t1\n"), "the initial line")

        var seen = false
        for attempt in 2...5 where !seen {
            try await sandbox.expectSuccess(["write", "s.json", "volume", "\(attempt)"])
            seen = try await watch.waitForOutput(containing: "volume\t\(attempt)\n", timeout: .seconds(10))
        }
        let output = try watch.output()
        #expect(seen, "watch saw another process's write: \(output)")
        try await sandbox.expectSuccess(["write", "s.json", "volume", "null"])
        #expect(try await watch.waitForOutput(containing: "volume\tnull\n"), "a stored null is a value")
        try await sandbox.expectSuccess(["write", "s.json", "other", "true"])
        try await sandbox.expectSuccess(["delete", "s.json", "volume"])
        #expect(try await watch.waitForOutput(containing: "volume\t(deleted)\n"))

        watch.signal(SIGTERM)
        let status = try await watch.waitForExit()
        #expect(status == 0)
        #expect(try !watch.output().contains("other"), "only the keys asked for")
        #expect(try watch.errors().isEmpty)
    }

    @Test func watchOfEveryKeyStopsOnSIGINT() async throws {
        let sandbox = try ToolSandbox()
        let watch = try sandbox.start(["watch", "s.json"])
        defer { watch.kill() }
        var seen = false
        for attempt in 1...5 where !seen {
            try sandbox.create("src.json", "{\"a\": \(attempt), \"b\": {\"z\": [\(attempt)]}}")
            try await sandbox.expectSuccess(["import", "s.json", "src.json"])
            seen = try await watch.waitForOutput(
                containing: "a\t\(attempt)\nb\t{\"z\":[\(attempt)]}\n", timeout: .seconds(10))
        }
        let output = try watch.output()
        #expect(seen, "one line per key, in order: \(output)")
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)
    }

    /// The commands the tool has, besides `help`.
    static let commands = [
        "read", "read-type", "write", "rename", "delete", "keys", "check", "watch", "import", "export", "history",
        "undo",
    ]
}

// MARK: - Support

/// The result of one finished run of the tool.
struct ToolResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Why a run of the tool failed to finish.
private struct ToolTimeout: Error, CustomStringConvertible {
    var arguments: [String]
    var description: String { "codable-defaults \(arguments) did not finish in time" }
}

/// A directory for one test: `work/` is the tool's working directory (store files go there), `config/` is
/// its `CODABLE_DEFAULTS_DIRECTORY`, and `io/` holds the captured output. Removed when released.
final class ToolSandbox: @unchecked Sendable {
    let root: URL
    let work: URL
    let io: URL
    var configDirectory: URL { root.appendingPathComponent("config") }

    init() throws {
        let made = FileManager.default.temporaryDirectory
            .appendingPathComponent("CommandLineToolTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        // Canonical, as the paths the tool reports are (Apple systems' temporary directory is under the link /var).
        root = URL(fileURLWithPath: canonicalPath(made.path), isDirectory: true)
        work = root.appendingPathComponent("work", isDirectory: true)
        io = root.appendingPathComponent("io", isDirectory: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
    }

    deinit {
        do {
            try FileManager.default.removeItem(at: root)
        } catch {
            // A leftover in the temporary directory must not fail the test that already ran.
        }
    }

    /// Starts the tool with `arguments` in `work/`, with a closed standard input.
    func start(
        _ arguments: [String], environment: [String: String] = [:], standardOutput: URL? = nil
    ) throws -> RunningTool {
        let binary = URL(fileURLWithPath: try Fixture.locate("codable-defaults"))
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = work
        var merged = ProcessInfo.processInfo.environment
        merged["CODABLE_DEFAULTS_DIRECTORY"] = configDirectory.path
        for (name, value) in environment { merged[name] = value }
        process.environment = merged

        let name = UUID().uuidString
        let stdout = standardOutput ?? io.appendingPathComponent(name + ".out")
        let stderr = io.appendingPathComponent(name + ".err")
        if standardOutput == nil { try Data().write(to: stdout) }
        try Data().write(to: stderr)
        let stdoutHandle = try FileHandle(forWritingTo: stdout)
        let stderrHandle = try FileHandle(forWritingTo: stderr)
        defer {
            do {
                try stdoutHandle.close()
                try stderrHandle.close()
            } catch {
                Issue.record(error)
            }
        }
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        try process.run()
        try input.fileHandleForWriting.close()
        return RunningTool(process: process, arguments: arguments, stdout: stdout, stderr: stderr)
    }

    /// Runs the tool to its end, killing it (and failing) after `timeout`.
    func run(
        _ arguments: [String], environment: [String: String] = [:], standardOutput: URL? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> ToolResult {
        let running = try start(arguments, environment: environment, standardOutput: standardOutput)
        defer { running.kill() }
        let status = try await running.waitForExit(timeout: timeout)
        let stdout = standardOutput == nil ? try running.output() : ""
        return ToolResult(status: status, stdout: stdout, stderr: try running.errors())
    }

    /// Runs the tool and expects it to succeed silently on standard error.
    func expectSuccess(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await run(arguments, environment: environment, timeout: timeout)
        #expect(result.status == 0, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, "\(arguments)", sourceLocation: sourceLocation)
    }

    /// Writes a file in `work/`.
    func create(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: work.appendingPathComponent(name))
    }

    /// Makes a directory in `work/`.
    func createDirectory(_ name: String) throws {
        try FileManager.default.createDirectory(
            at: work.appendingPathComponent(name), withIntermediateDirectories: true)
    }

    /// The text of a file in `work/`.
    func text(_ name: String) throws -> String { try text(at: work.appendingPathComponent(name)) }

    /// The text of a file.
    func text(at url: URL) throws -> String { String(decoding: try Data(contentsOf: url), as: UTF8.self) }

    /// The bytes of a file in `work/`.
    func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: work.appendingPathComponent(name))) }

    /// The names in `work/`, hidden ones included, sorted.
    func workContents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
    }
}

/// Sends a signal to a process (`kill(2)`; the name is taken by ``RunningTool/kill()``).
private func sendSignal(_ number: Int32, to process: Int32) {
    kill(process, number)
}

/// A started run of the tool.
final class RunningTool: @unchecked Sendable {
    let process: Process
    let arguments: [String]
    let stdout: URL
    let stderr: URL

    init(process: Process, arguments: [String], stdout: URL, stderr: URL) {
        self.process = process
        self.arguments = arguments
        self.stdout = stdout
        self.stderr = stderr
    }

    /// What the tool wrote to standard output so far.
    func output() throws -> String { String(decoding: try Data(contentsOf: stdout), as: UTF8.self) }

    /// What the tool wrote to standard error so far.
    func errors() throws -> String { String(decoding: try Data(contentsOf: stderr), as: UTF8.self) }

    /// Waits until the standard output contains `text`; `false` after `timeout`.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try output().contains(text) { return true }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try output().contains(text)
    }

    /// Waits for the process to exit and returns its exit status; kills it and throws after `timeout`.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill()
                throw ToolTimeout(arguments: arguments)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(process.terminationReason == .exit, "\(arguments) exited, was not killed by a signal")
        return process.terminationStatus
    }

    /// Sends `number` to the process.
    func signal(_ number: Int32) {
        if process.isRunning { sendSignal(number, to: process.processIdentifier) }
    }

    /// Kills the process if it still runs.
    func kill() {
        signal(SIGKILL)
    }
}
