import Foundation
import Testing

/// Tests of `codable-defaults diff` and of `--dry-run` on every command that writes, run as a real process.
@Suite struct DiffAndDryRunToolTests {
    // MARK: diff

    @Test func diffOfEqualStoresPrintsNothingAndExitsWithZero() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":{"x":1,"y":[true,"é"]}}"# + "\n")
        // Numbers by value, members in any order: the library's equality of JSON values.
        try sandbox.create("o.json", #"{ "b": {"y": [true, "\u00e9"], "x": 1.0}, "a": 1e0 }"#)
        let same = try await sandbox.run(["diff", "s.json", "o.json"])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.isEmpty && same.stderr.isEmpty, "\(same.stdout)")
        // A store against itself, and a missing store against an empty object.
        #expect(try await sandbox.run(["diff", "s.json", "s.json"]).status == 0)
        try sandbox.create("empty.json", "{}")
        let missing = try await sandbox.run(["diff", "missing.json", "empty.json"])
        #expect(missing.status == 0 && missing.stdout.isEmpty, "\(missing.stderr)")
        #expect(try sandbox.workContents() == ["empty.json", "o.json", "s.json"], "diff creates no file")
    }

    /// Opening a file only to read it (every reading command, a dry run, diff's OTHER, import's SOURCE) takes no
    /// lock and leaves a crashed writer's temporary file where it is: nothing is created, removed or written. A
    /// command that writes removes it, under the lock.
    @Test func openingAFileOnlyToReadItNeitherLocksNorCleansUp() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1}"# + "\n")
        try sandbox.create("o.json", #"{"a":2}"# + "\n")
        let leftovers = [".s.json.4242.k3y.tmp", ".o.json.4242.k3y.tmp"]
        for name in leftovers { try sandbox.create(name, "half a write") }
        let before = try sandbox.workContents()
        let commands: [[String]] = [
            ["read", "s.json"], ["read", "s.json", "a"], ["keys", "s.json"], ["export", "s.json"],
            ["check", "s.json"], ["history", "s.json"], ["explain", "s.json", "a"], ["read-type", "s.json", "a"],
            ["diff", "s.json", "o.json"], ["write", "s.json", "a", "3", "--dry-run"],
            ["import", "s.json", "o.json", "--dry-run"], ["delete", "s.json", "a", "--dry-run"],
            ["update", "s.json", "a", "--add", "1", "--dry-run"], ["rename", "s.json", "a", "b", "--dry-run"],
        ]
        for command in commands {
            let result = try await sandbox.run(command)
            #expect([0, 1].contains(result.status), "\(command): \(result.stderr)")
            #expect(try sandbox.workContents() == before, "\(command) created or removed a file")
        }
        #expect(try sandbox.text("s.json") == #"{"a":1}"# + "\n")
        try await sandbox.expectSuccess(["write", "s.json", "a", "3"])
        #expect(!(try sandbox.workContents()).contains(leftovers[0]), "a writer removes the leftover")
    }

    @Test func diffPrintsALinePerAddedRemovedAndChangedKeyAndExitsWithOne() async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"a":1,"b":"x","c":[1],"tab\tkey":true,"z":null}"# + "\n"
        try sandbox.create("s.json", store)
        try sandbox.create("o.json", #"{"b":"y","c":[1.0],"d":{"k":1},"tab\tkey":false}"#)
        let result = try await sandbox.run(["diff", "s.json", "o.json"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(
            result.stdout == """
                - a\t1
                ~ b\t"x" → "y"
                + d\t{"k":1}
                ~ "tab\\tkey"\ttrue → false
                - z\tnull

                """)
        #expect(try sandbox.text("s.json") == store, "diff writes neither file")

        // A missing store is an empty one, as for read: every key of OTHER is added, and no file is made.
        let fromNothing = try await sandbox.run(["diff", "sub/missing.json", "o.json"])
        #expect(fromNothing.status == 1, "\(fromNothing.stderr)")
        #expect(fromNothing.stdout.hasPrefix("+ b\t\"y\"\n+ c\t[1.0]\n+ d\t{\"k\":1}\n"), "\(fromNothing.stdout)")
        #expect(try sandbox.workContents() == ["o.json", "s.json"])
    }

    @Test func diffOfAnOtherThatIsMissingOrNotAJSONObjectExitsWithFour() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1}"#)
        try sandbox.create("array.json", "[1, 2]\n")
        try sandbox.create("broken.json", "{\n  \"a\": }\n")
        for name in ["array.json", "broken.json"] {
            let result = try await sandbox.run(["diff", "s.json", name])
            #expect(result.status == 4, "\(name): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            // The file's path, with the line and column of the problem.
            let line = name == "array.json" ? 1 : 2
            #expect(
                result.stderr.contains(sandbox.work.appendingPathComponent(name).path + ":\(line):"), "\(result.stderr)"
            )
        }
        let missing = try await sandbox.run(["diff", "s.json", "missing.json"])
        #expect(missing.status == 4)
        #expect(missing.stderr == "codable-defaults: missing.json: no such file\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("missing.json").path))

        let usage = try await sandbox.run(["diff", "s.json"])
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("missing OTHER"), "\(usage.stderr)")
    }

    @Test func diffIsInTheHelpFromItsDeclaration() async throws {
        let sandbox = try ToolSandbox()
        let general = try await sandbox.run(["--help"])
        #expect(general.stdout.contains("\n  diff FILE OTHER "), "\(general.stdout)")
        #expect(general.stdout.contains("watch, diff, explain"), "the added commands name diff")
        #expect(general.stdout.contains("\n  0  success (diff: no difference)"))
        #expect(general.stdout.contains("\n  1  diff found a difference; or failure"))
        #expect(general.stdout.contains("a missing OTHER for diff"))
        let help = try await sandbox.run(["help", "diff"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: codable-defaults diff FILE OTHER [OPTIONS]"))
        #expect(help.stdout.contains("--etcd URLS"))
        #expect(try await sandbox.run(["diff", "--help"]).stdout == help.stdout)
        for command in ["write", "update", "rename", "delete", "import"] {
            let text = try await sandbox.run(["help", command]).stdout
            #expect(text.contains("--dry-run"), "\(command)")
        }
        for command in ["read", "keys", "export", "diff"] {
            let run = try await sandbox.run([command, "s.json", "--dry-run"])
            #expect(run.status == 2, "\(command) takes no --dry-run")
        }
    }

    // MARK: --dry-run

    /// Runs `arguments` with `--dry-run` on `s.json` and expects `lines` on standard output, exit status 0, and
    /// the work directory byte for byte as it was; then runs it for real and expects `diff` of the old file
    /// against the new one to print the same lines.
    private func expectDryRun(
        _ arguments: [String], prints lines: String, in sandbox: ToolSandbox,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try snapshot(sandbox)
        // Before the arguments: after a type flag, every argument is one of its values.
        let dry = try await sandbox.run([arguments[0], "--dry-run"] + arguments.dropFirst())
        #expect(dry.status == 0, "\(arguments): \(dry.stderr)", sourceLocation: sourceLocation)
        #expect(dry.stderr.isEmpty, "\(arguments): \(dry.stderr)", sourceLocation: sourceLocation)
        #expect(dry.stdout == lines, "\(arguments)", sourceLocation: sourceLocation)
        #expect(try snapshot(sandbox) == before, "\(arguments) wrote nothing", sourceLocation: sourceLocation)

        let old = sandbox.root.appendingPathComponent("old.json")
        try? FileManager.default.removeItem(at: old)
        try Data(try sandbox.bytes("s.json")).write(to: old)
        try await sandbox.expectSuccess(arguments, sourceLocation: sourceLocation)
        let real = try await sandbox.run(["diff", old.path, "s.json"])
        #expect(real.stdout == lines, "the real run makes the change printed", sourceLocation: sourceLocation)
    }

    /// Every name in the work directory with the bytes of each file.
    private func snapshot(_ sandbox: ToolSandbox) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try sandbox.workContents() { files[name] = try sandbox.bytes(name) }
        return files
    }

    @Test func aDryRunOfWritePrintsTheChangeAndWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"list":["a"],"map":{"k":"1"},"volume":0.5}"# + "\n")
        try await expectDryRun(["write", "s.json", "volume", "0.8"], prints: "~ volume\t0.5 → 0.8\n", in: sandbox)
        try await expectDryRun(
            ["write", "s.json", "name", "--string", "Ann"], prints: "+ name\t\"Ann\"\n", in: sandbox)
        try await expectDryRun(["write", "s.json", "volume", "0.8"], prints: "", in: sandbox)
        try await expectDryRun(
            ["write", "s.json", "list", "-array-add", "b", "c"], prints: "~ list\t[\"a\"] → [\"a\",\"b\",\"c\"]\n",
            in: sandbox)
        try await expectDryRun(
            ["write", "s.json", "fresh", "-array-add", "x"], prints: "+ fresh\t[\"x\"]\n", in: sandbox)
        try await expectDryRun(
            ["write", "s.json", "map", "-dict-add", "j", "2"],
            prints: "~ map\t{\"k\":\"1\"} → {\"j\":\"2\",\"k\":\"1\"}\n",
            in: sandbox)
        try await expectDryRun(["write", "s.json", "count", "-int", "5"], prints: "+ count\t5\n", in: sandbox)

        // The status the real run would exit with: a value of another type, a usage error.
        let before = try snapshot(sandbox)
        let wrongType = try await sandbox.run(["write", "--dry-run", "s.json", "volume", "-array-add", "x"])
        #expect(wrongType.status == 1 && wrongType.stdout.isEmpty, "\(wrongType.stderr)")
        #expect(wrongType.stderr.contains("nothing was written"))
        #expect(try await sandbox.run(["write", "s.json", "volume", "nope", "--dry-run"]).status == 2)
        #expect(try snapshot(sandbox) == before)
    }

    @Test func aDryRunOnAMissingStoreCreatesNoFileNorDirectory() async throws {
        let sandbox = try ToolSandbox()
        for arguments in [
            ["write", "sub/s.json", "a", "1"], ["write", "s.json", "a", "-array-add", "x"],
            ["update", "s.json", "n", "--add", "2"], ["delete", "s.json", "--all"],
        ] {
            let run = try await sandbox.run([arguments[0], "--dry-run"] + arguments.dropFirst())
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.stderr.isEmpty, "\(arguments): \(run.stderr)")
            #expect(try sandbox.workContents().isEmpty, "\(arguments)")
        }
        #expect(try await sandbox.run(["write", "sub/s.json", "a", "1", "--dry-run"]).stdout == "+ a\t1\n")
        #expect(try await sandbox.run(["update", "s.json", "n", "--add", "2", "--dry-run"]).stdout == "+ n\t2\n")
        #expect(try sandbox.workContents().isEmpty)
    }

    @Test func aDryRunOfDeletePrintsTheRemovedKeys() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":"x","c":true}"# + "\n")
        try await expectDryRun(["delete", "s.json", "c", "a"], prints: "- a\t1\n- c\ttrue\n", in: sandbox)
        // A missing KEY exits with 3 and prints nothing, as the real run; with --force it is ignored.
        let before = try snapshot(sandbox)
        let missing = try await sandbox.run(["delete", "s.json", "nope", "--dry-run"])
        #expect(missing.status == 3 && missing.stdout.isEmpty)
        #expect(try snapshot(sandbox) == before)
        try await expectDryRun(["delete", "s.json", "nope", "b", "--force"], prints: "- b\t\"x\"\n", in: sandbox)
        try sandbox.create("s.json", #"{"a":1,"b":"x"}"# + "\n")
        try await expectDryRun(["delete", "s.json", "--all"], prints: "- a\t1\n- b\t\"x\"\n", in: sandbox)
    }

    @Test func aDryRunOfImportPrintsEachMemberItWouldChange() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":"x"}"# + "\n")
        try sandbox.create("src.json", #"{"a":2,"b":"x","n":[5]}"#)
        try await expectDryRun(["import", "s.json", "src.json"], prints: "~ a\t1 → 2\n+ n\t[5]\n", in: sandbox)
        let missing = try await sandbox.run(["import", "s.json", "nope.json", "--dry-run"])
        #expect(missing.status == 4 && missing.stdout.isEmpty)
    }

    @Test func aDryRunOfRenamePrintsTheRemovalAndTheAddition() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"new":0,"old":{"x":1},"z":2}"# + "\n")
        try await expectDryRun(
            ["rename", "s.json", "old", "new"], prints: "~ new\t0 → {\"x\":1}\n- old\t{\"x\":1}\n", in: sandbox)
        try await expectDryRun(["rename", "s.json", "z", "a"], prints: "+ a\t2\n- z\t2\n", in: sandbox)
        let missing = try await sandbox.run(["rename", "s.json", "nope", "x", "--dry-run"])
        #expect(missing.status == 3 && missing.stdout.isEmpty)
    }

    @Test func aDryRunOfUpdatePrintsTheChangeInsteadOfTheSum() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"launches":1,"name":"x"}"# + "\n")
        let before = try snapshot(sandbox)
        let dry = try await sandbox.run(["update", "s.json", "launches", "--add", "2", "--dry-run"])
        #expect(dry.status == 0 && dry.stderr.isEmpty, "\(dry.stderr)")
        #expect(dry.stdout == "~ launches\t1 → 3\n")
        #expect(try snapshot(sandbox) == before)
        let wrongType = try await sandbox.run(["update", "s.json", "name", "--add", "1", "--dry-run"])
        #expect(wrongType.status == 1 && wrongType.stdout.isEmpty)
        #expect(try snapshot(sandbox) == before)
        // The real run still adds and prints the sum.
        let real = try await sandbox.run(["update", "s.json", "launches", "--add", "2"])
        #expect(real.status == 0 && real.stdout == "3\n", "\(real.stderr)")
        #expect(try await sandbox.run(["read", "s.json", "launches"]).stdout == "3\n")
    }

    @Test func aDryRunOfAWriteShadowedByALayerStillShowsTheStoredChange() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"volume":0.5}"# + "\n")
        let before = try snapshot(sandbox)
        let dry = try await sandbox.run(
            ["write", "s.json", "volume", "0.7", "--env-prefix", "SVC_", "--dry-run"],
            environment: ["SVC_VOLUME": "0.9"])
        #expect(dry.status == 0)
        #expect(dry.stdout == "~ volume\t0.5 → 0.7\n")
        #expect(dry.stderr.contains("is shadowed by environment SVC_VOLUME"), "\(dry.stderr)")
        #expect(try snapshot(sandbox) == before)
    }
}
