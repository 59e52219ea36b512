import CodableDefaults
import CodableDefaultsTestSupport
import Foundation
import Testing

/// Tests of what the command-line tool takes from macOS `defaults(1)`: the type flags of `write`,
/// `read-type`, `rename`, and the usage errors a `defaults` user meets first. Run as a real process.
@Suite struct CommandLineToolDefaultsParityTests {
    // MARK: write with a type flag

    @Test func typeFlagsStoreTheDocumentedJSON() async throws {
        let sandbox = try ToolSandbox()
        let writes: [[String]] = [
            ["int", "-int", "5"], ["negative", "-int", "-0042"],
            ["big", "-integer", "+123456789012345678901234567890"],
            ["float", "-float", "1.5"], ["exponent", "-float", "1e3"],
            ["yes", "-bool", "YES"], ["no", "-bool", "no"], ["true", "-boolean", "True"], ["zero", "-bool", "0"],
            ["text", "-string", "--not an option"], ["date", "-date", "2026-12-01T10:00:00Z"],
            ["fraction", "-date", "2026-12-01T11:00:00.5+01:00"], ["bytes", "-data", "48656C6c6f"],
            ["list", "-array", "a", "1", "-b"], ["empty", "-array"],
            ["object", "-dict", "k1", "v1", "k2", "2", "k1", "v3"],
        ]
        for arguments in writes {
            try await sandbox.expectSuccess(["write", "s.json"] + arguments)
        }
        #expect(
            try sandbox.text("s.json") == """
                {
                  "big": 123456789012345678901234567890,
                  "bytes": "SGVsbG8=",
                  "date": 817812000,
                  "empty": [],
                  "exponent": 1e3,
                  "float": 1.5,
                  "fraction": 817812000.5,
                  "int": 5,
                  "list": ["a","1","-b"],
                  "negative": -42,
                  "no": false,
                  "object": {"k1":"v3","k2":"2"},
                  "text": "--not an option",
                  "true": true,
                  "yes": true,
                  "zero": false
                }

                """)

        // A program reads -date and -data values with Key<Date> and Key<Data>.
        let defaults = try openFresh(sandbox.work.appendingPathComponent("s.json"))
        let date = try defaults.value(for: Defaults.Key<Date>("date", default: .distantPast))
        #expect(date == Date(timeIntervalSince1970: 1_796_119_200))
        let fraction = try defaults.value(for: Defaults.Key<Date>("fraction", default: .distantPast))
        #expect(fraction == Date(timeIntervalSince1970: 1_796_119_200.5))
        #expect(try defaults.value(for: Defaults.Key<Data>("bytes", default: Data())) == Data("Hello".utf8))
        #expect(try defaults.value(for: Defaults.Key<[String]>("list", default: [])) == ["a", "1", "-b"])
        #expect(try defaults.value(for: Defaults.Key<Int>("int", default: 0)) == 5)
    }

    @Test func typeFlagsRefuseValuesTheyCannotTake() async throws {
        let sandbox = try ToolSandbox()
        let cases: [([String], String)] = [
            (["k", "-int", "1.5"], "-int 1.5: not an integer"),
            (["k", "-int", "five"], "-int five: not an integer"),
            (["k", "-int"], "missing VALUE after -int"),
            (["k", "-int", "1", "2"], "-int takes one VALUE; unexpected argument '2'"),
            (["k", "-float", "1."], "-float 1.: not a number"),
            (["k", "-float", "nan"], "-float nan: not a number"),
            (["k", "-bool", "maybe"], "-bool maybe: not a boolean"),
            (["k", "-date", "2026-12-01"], "-date 2026-12-01: not an ISO 8601 date"),
            // Days and times that do not exist: Foundation's parser would roll them over (02-30 is March 2).
            (["k", "-date", "2026-02-30T00:00:00Z"], "-date 2026-02-30T00:00:00Z: not an ISO 8601 date"),
            (["k", "-date", "2025-02-29T00:00:00Z"], "-date 2025-02-29T00:00:00Z: not an ISO 8601 date"),
            (["k", "-date", "2026-12-01T24:00:00Z"], "-date 2026-12-01T24:00:00Z: not an ISO 8601 date"),
            (["k", "-date", "2026-12-01T10:60:00Z"], "-date 2026-12-01T10:60:00Z: not an ISO 8601 date"),
            (["k", "-date", "2026-13-01T10:00:00Z"], "-date 2026-13-01T10:00:00Z: not an ISO 8601 date"),
            (["k", "-date", "2026-12-01T10:00:00.Z"], "-date 2026-12-01T10:00:00.Z: not an ISO 8601 date"),
            (["k", "-data", "486"], "-data 486: not hexadecimal bytes"),
            (["k", "-data", "zz"], "-data zz: not hexadecimal bytes"),
            (["k", "-dict", "a", "b", "c"], "-dict takes pairs of KEY VALUE; 'c' has no value"),
            (["-int", "k", "5"], "-int goes after KEY"),
            (["--string", "k", "-int", "5"], "give either --string or -int, not both"),
        ]
        for (arguments, message) in cases {
            let result = try await sandbox.run(["write", "s.json"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("codable-defaults: \(message)"), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("See 'codable-defaults help write'."), "\(arguments)")
        }
        #expect(try sandbox.workContents().isEmpty, "a refused value writes nothing")

        let elsewhere = try await sandbox.run(["read", "s.json", "-int"])
        #expect(elsewhere.status == 2)
        #expect(elsewhere.stderr.contains("(-int is a type flag of 'write'"), "\(elsewhere.stderr)")
    }

    /// A -date keeps the fractional seconds a `Date` can hold (not only milliseconds), and a leap day that
    /// exists is taken.
    @Test func dateFlagsKeepWhatADateHolds() async throws {
        let sandbox = try ToolSandbox()
        let cases = [
            ("2024-02-29T23:59:59.123456789Z", "2024-02-29T23:59:59Z", 0.123456789),
            ("2026-12-01T11:00:00.5+01:00", "2026-12-01T11:00:00+01:00", 0.5),
        ]
        for (text, whole, fraction) in cases {
            #expect(try await sandbox.run(["write", "s.json", "k", "-date", text]).status == 0, "\(text)")
            let read = try await sandbox.run(["read", "s.json", "k"])
            let stored = try #require(Double(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            let second = try #require(ISO8601DateFormatter().date(from: whole)).timeIntervalSinceReferenceDate
            #expect(stored == second + fraction, "\(text): \(read.stdout)")
        }
    }

    /// update --add on an integer beyond 64 bits says so (it is an integer, of a size it cannot add to).
    @Test func updateOfAnIntegerBeyond64BitsSaysSo() async throws {
        let sandbox = try ToolSandbox()
        let file = sandbox.work.appendingPathComponent("s.json")
        try Data("{\"big\": 12345678901234567890123}\n".utf8).write(to: file)
        let result = try await sandbox.run(["update", "s.json", "big", "--add", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("the stored integer 12345678901234567890123 is beyond 64-bit integers"))
        #expect(!result.stderr.contains("not integer"), "\(result.stderr)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "{\"big\": 12345678901234567890123}\n")
    }

    @Test func arrayAddAndDictAddUpdateTheStoredValue() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\n  \"list\": [1],\n  \"map\": {\"a\": 1, \"b\": 2},\n  \"other\": true\n}\n")
        try await sandbox.expectSuccess(["write", "s.json", "list", "-array-add", "x", "y"])
        try await sandbox.expectSuccess(["write", "s.json", "map", "-dict-add", "b", "new", "c", "3"])
        try await sandbox.expectSuccess(["write", "s.json", "fresh", "-array-add", "z"])
        try await sandbox.expectSuccess(["write", "s.json", "freshMap", "-dict-add", "k", "v"])
        #expect(
            try sandbox.text("s.json") == """
                {
                  "fresh": ["z"],
                  "freshMap": {"k":"v"},
                  "list": [1,"x","y"],
                  "map": {"a":1,"b":"new","c":"3"},
                  "other": true
                }

                """)

        let before = try sandbox.bytes("s.json")
        for (key, flag, message) in [
            ("other", "-array-add", #"key "other": the stored value's type is boolean, not an array"#),
            ("list", "-dict-add", #"key "list": the stored value's type is array, not a dictionary"#),
        ] {
            let result = try await sandbox.run(["write", "s.json", key, flag, "a", "b"])
            #expect(result.status == 1, "\(key) \(flag)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was written"))
        }
        #expect(try sandbox.bytes("s.json") == before, "a refused add changes nothing")
    }

    @Test func concurrentAddsToDifferentKeysAreAllKept() async throws {
        // Each add is one locked save that merges with what the others saved: whatever the interleaving,
        // every key ends with its element. (Adds to the same key may lose one another, as documented.)
        let sandbox = try ToolSandbox()
        let running = try (0..<6).map { index in
            try sandbox.start(["write", "s.json", "k\(index)", "-array-add", "v\(index)"])
        }
        for tool in running {
            let status = try await tool.waitForExit()
            let errors = try tool.errors()
            #expect(status == 0, "\(tool.arguments): \(errors)")
        }
        let store = try openFresh(sandbox.work.appendingPathComponent("s.json"))
        for index in 0..<6 {
            #expect(store.object(forKey: "k\(index)") == .array([.string("v\(index)")]), "k\(index)")
        }
    }

    // MARK: read-type and rename

    @Test func readTypePrintsTheTypeAsDefaultsDoes() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create(
            "s.json",
            #"{"i": -3, "f": 1.5, "e": 1e3, "b": false, "s": "x", "a": [], "d": {}, "n": null}"#)
        let expected = [
            ("i", "integer"), ("f", "float"), ("e", "float"), ("b", "boolean"), ("s", "string"), ("a", "array"),
            ("d", "dictionary"), ("n", "null"),
        ]
        for (key, type) in expected {
            let result = try await sandbox.run(["read-type", "s.json", key])
            #expect(result.status == 0, "\(key): \(result.stderr)")
            #expect(result.stdout == "Type is \(type)\n", "\(key)")
        }
        let missing = try await sandbox.run(["read-type", "s.json", "none"])
        #expect(missing.status == 3)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.contains("s.json: key \"none\": no value stored"))
    }

    @Test func renameMovesTheValueAndOverwritesNew() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\n  \"a\": {\"x\": 1.50},\n  \"b\": 2,\n  \"c\": 3\n}\n")
        try await sandbox.expectSuccess(["rename", "s.json", "a", "moved"])
        #expect(try sandbox.text("s.json") == "{\n  \"b\": 2,\n  \"c\": 3,\n  \"moved\": {\"x\":1.50}\n}\n")
        try await sandbox.expectSuccess(["rename", "s.json", "b", "c"])
        #expect(try sandbox.text("s.json") == "{\n  \"c\": 2,\n  \"moved\": {\"x\":1.50}\n}\n")

        let before = try sandbox.bytes("s.json")
        let missing = try await sandbox.run(["rename", "s.json", "gone", "c"])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("key \"gone\": no value stored; nothing was renamed"))
        try await sandbox.expectSuccess(["rename", "s.json", "c", "c"])
        #expect(try sandbox.bytes("s.json") == before, "a missing OLD, or OLD the same as NEW, changes nothing")

        let reserved = try await sandbox.run(["rename", "s.json", "c", "$schemaVersion"])
        #expect(reserved.status == 2)
        #expect(reserved.stderr.contains("$schemaVersion is reserved"))
        let tooFew = try await sandbox.run(["rename", "s.json", "c"])
        #expect(tooFew.status == 2)
        #expect(tooFew.stderr.contains("missing NEW"))
        #expect(try sandbox.bytes("s.json") == before)
    }

    @Test func exportToDashWritesToStandardOutput() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\"a\": 1}")
        let result = try await sandbox.run(["export", "s.json", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "{\n  \"a\": 1\n}\n")
        #expect(try sandbox.workContents() == ["s.json"], "no file named -")
        try await sandbox.expectSuccess(["export", "s.json", "./-"])
        #expect(try sandbox.text("-") == "{\n  \"a\": 1\n}\n", "./- is a file")
    }

    // MARK: Usage errors

    @Test func fileTogetherWithSuiteOrStandardIsAUsageError() async throws {
        let sandbox = try ToolSandbox()
        let cases: [[String]] = [
            ["read", "demo.json", "--suite", "prefs"], ["read", "--suite", "prefs", "demo.json"],
            ["read", "--standard", "app", "dir/file", "key"], ["read-type", "--suite", "prefs", "demo.json"],
            ["write", "--suite", "prefs", "demo.json", "k", "1"],
            ["write", "--suite", "prefs", "demo.json", "k", "-int", "1"],
            ["rename", "--suite", "prefs", "demo.json", "a", "b"], ["delete", "--suite", "prefs", "demo.json"],
            ["watch", "--suite", "prefs", "demo.json"], ["keys", "demo", "--suite", "prefs"],
            ["check", "--standard", "app", "demo.json"], ["import", "--suite", "prefs", "demo.json", "src.json"],
            ["export", "--suite", "prefs", "demo.json", "out.json"],
        ]
        for arguments in cases {
            let result = try await sandbox.run(arguments)
            let option = arguments.contains("--standard") ? "--standard app" : "--suite prefs"
            let file = arguments.contains("dir/file") ? "dir/file" : arguments.contains("demo") ? "demo" : "demo.json"
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr.hasPrefix(
                    "codable-defaults: \(file) is given as FILE together with \(option): give either FILE or \(option)"),
                "\(arguments): \(result.stderr)")
        }
        #expect(try sandbox.workContents().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.configDirectory.path), "no suite was touched")

        // After --, such a KEY is a KEY of the suite.
        try await sandbox.expectSuccess(["write", "--suite", "prefs", "--", "demo.json", "1"])
        let read = try await sandbox.run(["read", "--suite", "prefs", "--", "demo.json"])
        #expect(read.status == 0 && read.stdout == "1\n", "\(read.stderr)")
        let export = try await sandbox.run(["export", "--suite", "prefs", "out.json"])
        #expect(export.status == 0, "a DEST is a path: \(export.stderr)")
    }

    @Test func anOptionBeforeTheCommandNamesTheCommandItBelongsTo() async throws {
        let sandbox = try ToolSandbox()
        let cases: [([String], String)] = [
            (
                ["--all", "s.json"],
                "--all is an option of 'delete': put it after the command, as in 'codable-defaults delete --all ...'"
            ),
            (
                ["--force"],
                "--force is an option of 'delete': put it after the command, as in 'codable-defaults delete --force ...'"
            ),
            (
                ["--initial"],
                "--initial is an option of 'watch': put it after the command, as in 'codable-defaults watch --initial ...'"
            ),
            (
                ["--string"],
                "--string is an option of 'write': put it after the command, as in 'codable-defaults write --string ...'"
            ),
            (
                ["--suite=x", "read"],
                "--suite is an option of every command that takes FILE: put it after the command, as in 'codable-defaults read --suite NAME ...'"
            ),
            (
                ["-int", "5"],
                "-int is a type flag of 'write': put it after KEY, as in 'codable-defaults write FILE KEY -int VALUE'"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("codable-defaults: \(message)\n"), "\(arguments): \(result.stderr)")
        }
    }

    // MARK: Help

    @Test func helpDocumentsTheTypeFlagsAndTheDifferencesFromDefaults() async throws {
        let sandbox = try ToolSandbox()
        let general = try await sandbox.run(["--help"])
        #expect(general.stdout.contains("\nDIFFERENCES FROM defaults(1):\n"))
        for verb in ["read-type FILE KEY", "rename FILE OLD NEW", "update FILE KEY --add N"] {
            #expect(general.stdout.contains("\n  \(verb) "))
        }
        let write = try await sandbox.run(["help", "write"])
        for flag in TypeFlagNames.all { #expect(write.stdout.contains(flag), "help write names \(flag)") }
        #expect(
            write.stdout.contains("two -array-add run at once keep both elements"),
            "help write states what an add guarantees")
        let rename = try await sandbox.run(["help", "rename"])
        #expect(rename.stdout.contains("overwritten, as defaults(1) does"))
    }
}

/// The type flags `help write` documents.
private enum TypeFlagNames {
    static let all = [
        "-int", "-float", "-bool", "-string", "-date", "-data", "-array", "-array-add", "-dict", "-dict-add",
    ]
}
