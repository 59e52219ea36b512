import CodableDefaultsTestSupport
import Foundation
import Testing

/// Tests of `codable-defaults edit`, run as a real process with `EDITOR` (or `VISUAL`) set to small shell scripts
/// that stand for the user: they record the copy they are given and write the edit.
@Suite struct EditToolTests {
    /// Writes the shell script `name` in the sandbox's root (outside `work/`) and returns its path.
    private func script(_ name: String, _ body: String, in sandbox: ToolSandbox) throws -> String {
        let url = sandbox.root.appendingPathComponent(name)
        try Data(body.utf8).write(to: url)
        return url.path
    }

    /// The environment that makes `command` the editor (`VISUAL` empty counts as unset).
    private func editor(_ command: String) -> [String: String] {
        ["VISUAL": "", "EDITOR": command]
    }

    /// A script that records the copy it is given in `seen` (its text) and `where` (its directory), then writes
    /// `text` as the edit.
    private func recordingEditor(writing text: String, in sandbox: ToolSandbox) throws -> String {
        let root = sandbox.root.path
        try Data(text.utf8).write(to: sandbox.root.appendingPathComponent("edit.txt"))
        return try script(
            "record.sh",
            """
            cat "$1" > '\(root)/seen'
            dirname "$1" > '\(root)/where'
            ls -ld "$(dirname "$1")" "$1" > '\(root)/modes'
            cat '\(root)/edit.txt' > "$1"

            """, in: sandbox)
    }

    /// The text of a file in the sandbox's root.
    private func rootText(_ name: String, _ sandbox: ToolSandbox) throws -> String {
        try sandbox.text(at: sandbox.root.appendingPathComponent(name))
    }

    /// Runs the tool with `input` as its standard input (the answers to "Edit again?").
    private func run(
        _ arguments: [String], environment: [String: String], input: String, in sandbox: ToolSandbox
    ) async throws -> ToolResult {
        let name = UUID().uuidString
        let inputFile = sandbox.io.appendingPathComponent(name + ".in")
        let stdout = sandbox.io.appendingPathComponent(name + ".out")
        let stderr = sandbox.io.appendingPathComponent(name + ".err")
        try Data(input.utf8).write(to: inputFile)
        try Data().write(to: stdout)
        try Data().write(to: stderr)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Fixture.locate("codable-defaults"))
        process.arguments = arguments
        process.currentDirectoryURL = sandbox.work
        var merged = ProcessInfo.processInfo.environment
        merged["CODABLE_DEFAULTS_DIRECTORY"] = sandbox.configDirectory.path
        for (name, value) in environment { merged[name] = value }
        process.environment = merged
        let handles = [
            try FileHandle(forReadingFrom: inputFile), try FileHandle(forWritingTo: stdout),
            try FileHandle(forWritingTo: stderr),
        ]
        process.standardInput = handles[0]
        process.standardOutput = handles[1]
        process.standardError = handles[2]
        try process.run()
        for handle in handles { try handle.close() }
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                Issue.record("\(arguments) did not finish in time")
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus, stdout: try sandbox.text(at: stdout),
            stderr: try sandbox.text(at: stderr))
    }

    @Test func editOfAKeyOpensItsValuePrettyPrintedAndWritesTheEdit() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"window":{"size":[800,600],"title":"Main"}}"# + "\n")
        let editor = try recordingEditor(writing: #"{"size": [1024, 768], "title": "Main"}"#, in: sandbox)
        let result = try await sandbox.run(["edit", "s.json", "window"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(
            try rootText("seen", sandbox) == """
                {
                  "size": [
                    800,
                    600
                  ],
                  "title": "Main"
                }

                """)
        #expect(
            result.stdout == #"~ window\#t{"size":[800,600],"title":"Main"} → {"size":[1024,768],"title":"Main"}"#
                + "\n")
        #expect(
            try sandbox.text("s.json") == "{\n  \"a\": 1,\n  \"window\": {\"size\":[1024,768],\"title\":\"Main\"}\n}\n")
        // The copy was private (a directory only its owner enters, a file only its owner reads), and is gone.
        let modes = try rootText("modes", sandbox).split(separator: "\n")
        #expect(modes.count == 2 && modes[0].hasPrefix("drwx------") && modes[1].hasPrefix("-rw-------"), "\(modes)")
        let directory = try rootText("where", sandbox).trimmingCharacters(in: .newlines)
        #expect(!FileManager.default.fileExists(atPath: directory), "the copy's directory is removed")
        #expect(
            try sandbox.workContents() == [".s.json.history", ".s.json.lock", ".s.json.queue", "s.json"],
            "the store's own files only")
    }

    @Test func editOfAMissingKeyExitsWithThreeAndRunsNoEditor() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1}"# + "\n")
        let editor = try recordingEditor(writing: "2", in: sandbox)
        let result = try await sandbox.run(["edit", "s.json", "b"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 3)
        #expect(result.stderr.contains(#"key "b": no value stored"#), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("seen").path))
    }

    @Test func editOfTheWholeStoreAddsRemovesAndChangesKeysInOneWrite() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":"x","c":[1],"d":null}"# + "\n")
        let editor = try recordingEditor(
            writing: """
                {
                  "a": 1.0,
                  "b": "y",
                  "d": null,
                  "e": {"k": true}
                }
                """, in: sandbox)
        let result = try await sandbox.run(["edit", "s.json"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        // The copy is the store file's format; a value only spelled otherwise (1.0) is no change.
        #expect(try rootText("seen", sandbox) == "{\n  \"a\": 1,\n  \"b\": \"x\",\n  \"c\": [1],\n  \"d\": null\n}\n")
        #expect(result.stdout == "~ b\t\"x\" → \"y\"\n- c\t[1]\n+ e\t{\"k\":true}\n")
        #expect(
            try sandbox.text("s.json") == "{\n  \"a\": 1,\n  \"b\": \"y\",\n  \"d\": null,\n  \"e\": {\"k\":true}\n}\n")
    }

    @Test func anEditorThatFailsWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"a":1}"# + "\n"
        try sandbox.create("s.json", store)
        let editor = try script("fail.sh", "echo '{\"a\": 2}' > \"$1\"\nexit 1\n", in: sandbox)
        let result = try await sandbox.run(["edit", "s.json"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("exited with status 1; nothing was written"), "\(result.stderr)")
        #expect(try sandbox.bytes("s.json") == Array(store.utf8))
    }

    @Test func aCopyThatDoesNotParseIsShownWithItsLineAndColumnAndNotWritten() async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"a":1}"# + "\n"
        try sandbox.create("s.json", store)
        let editor = try recordingEditor(writing: "{\n  \"a\": }\n", in: sandbox)
        for input in ["n\n", ""] {
            let result = try await run(
                ["edit", "s.json"], environment: self.editor("sh \(editor)"), input: input, in: sandbox)
            #expect(result.status == 4, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
            let directory = try rootText("where", sandbox).trimmingCharacters(in: .newlines)
            #expect(result.stderr.contains("\(directory)/s.json:2:8: "), "\(result.stderr)")
            #expect(result.stderr.contains("Edit again? [y/N] "))
            #expect(result.stderr.hasSuffix("nothing was written\n"), "\(result.stderr)")
            #expect(try sandbox.bytes("s.json") == Array(store.utf8))
            #expect(!FileManager.default.fileExists(atPath: directory))
        }
        // The whole store is a JSON object: an array is refused the same way.
        let array = try recordingEditor(writing: "[1]\n", in: sandbox)
        let notObject = try await run(
            ["edit", "s.json"], environment: self.editor("sh \(array)"), input: "", in: sandbox)
        #expect(notObject.status == 4)
        #expect(try sandbox.bytes("s.json") == Array(store.utf8))
    }

    @Test func aCopyEditedAgainAfterAParseErrorIsWritten() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":2}"# + "\n")
        let count = sandbox.root.appendingPathComponent("count").path
        // The first run breaks the copy; the second finds it as the first left it, and mends it.
        let editor = try script(
            "twice.sh",
            """
            echo run >> '\(count)'
            if [ "$(wc -l < '\(count)')" -eq 1 ]; then printf '[\\n  3,\\n' > "$1"; exit 0; fi
            grep -q '^  3,$' "$1" || exit 9
            printf '3\\n' > "$1"

            """, in: sandbox)
        let result = try await run(
            ["edit", "s.json", "a"], environment: self.editor("sh \(editor)"), input: "yes\n", in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("a.json:3:1: "), "\(result.stderr)")
        #expect(result.stdout == "~ a\t1 → 3\n")
        #expect(try sandbox.text("s.json") == "{\n  \"a\": 3,\n  \"b\": 2\n}\n")
        #expect(try sandbox.text(at: URL(fileURLWithPath: count)) == "run\nrun\n")
    }

    @Test func aCopyEditedAgainAfterTheSchemaRefusedItIsReadAfreshAndWritten() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"volume":0.8}"# + "\n")
        try sandbox.create("rules.json", #"{"type": "object", "properties": {"volume": {"maximum": 1}}}"#)
        let count = sandbox.root.appendingPathComponent("count").path
        // The first run writes a value the schema refuses; the second mends it.
        let editor = try script(
            "twice.sh",
            """
            echo run >> '\(count)'
            if [ "$(wc -l < '\(count)')" -eq 1 ]; then v=1.5; else v=0.25; fi
            printf '{"volume": %s}\\n' "$v" > "$1"

            """, in: sandbox)
        let result = try await run(
            ["edit", "s.json", "--schema", "rules.json"], environment: self.editor("sh \(editor)"), input: "y\n",
            in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(#"/volume: 1.5 must be at most 1 (schema keyword "maximum")"#), "\(result.stderr)")
        #expect(result.stdout == "~ volume\t0.8 → 0.25\n", "\(result.stdout)")
        #expect(try sandbox.text("s.json") == "{\n  \"volume\": 0.25\n}\n")
        #expect(try sandbox.text(at: URL(fileURLWithPath: count)) == "run\nrun\n")
    }

    @Test func aKeyAnotherWriterChangedMeanwhileIsAConflictAndKeepsTheirValue() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":2,"c":3}"# + "\n")
        let tool = try Fixture.locate("codable-defaults")
        // Another writer changes a and removes c while the editor is open; the edit changes a, b and c.
        let editor = try script(
            "other.sh",
            """
            '\(tool)' write s.json a 10 || exit 7
            '\(tool)' delete s.json c || exit 7
            printf '{\\n  "a": 100,\\n  "b": 20,\\n  "c": 30,\\n  "d": 40\\n}\\n' > "$1"

            """, in: sandbox)
        let result = try await sandbox.run(["edit", "s.json"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout == "~ b\t2 → 20\n+ d\t40\n")
        #expect(
            result.stderr == """
                codable-defaults: \(sandbox.work.path)/s.json: key "a": conflict: another writer changed it to 10 \
                since the copy was made; your 100 was not written
                codable-defaults: \(sandbox.work.path)/s.json: key "c": conflict: another writer removed it since \
                the copy was made; your 30 was not written

                """)
        #expect(try sandbox.text("s.json") == "{\n  \"a\": 10,\n  \"b\": 20,\n  \"d\": 40\n}\n")
    }

    @Test func anEditThatChangesNothingWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"a":1,"b":[1,2]}"# + "\n"
        try sandbox.create("s.json", store)
        // Only spelled otherwise: no change.
        let editor = try recordingEditor(writing: #"{"b": [1.0, 2], "a": 1e0}"#, in: sandbox)
        let result = try await sandbox.run(["edit", "s.json"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "codable-defaults: no changes; nothing was written\n")
        #expect(try sandbox.bytes("s.json") == Array(store.utf8))
        #expect(try sandbox.workContents() == ["s.json"], "no lock file either")
        // A missing store, left empty: no file is made.
        let unchanged = try script("true.sh", "exit 0\n", in: sandbox)
        let missing = try await sandbox.run(["edit", "new.json"], environment: self.editor("sh \(unchanged)"))
        #expect(missing.status == 0, "\(missing.stderr)")
        #expect(try sandbox.workContents() == ["s.json"])
    }

    @Test func visualWinsOverEditorAndAnEditorMayHoldArguments() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1}"# + "\n")
        let wrong = try script("wrong.sh", "exit 1\n", in: sandbox)
        // The script's first argument is the editor's own, its second the copy.
        let right = try script(
            "right.sh", "[ \"$1\" = --wait ] || exit 8\nprintf '{\"a\": 2}' > \"$2\"\n", in: sandbox)
        let result = try await sandbox.run(
            ["edit", "s.json"], environment: ["VISUAL": "sh \(right) --wait", "EDITOR": "sh \(wrong)"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "~ a\t1 → 2\n")
        let byEditor = try await sandbox.run(["edit", "s.json"], environment: editor("sh '\(right)' --wait"))
        #expect(byEditor.status == 0, "\(byEditor.stderr)")
    }

    @Test func aDryRunOfEditPrintsTheChangesAndWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"a":1,"b":2}"# + "\n"
        try sandbox.create("s.json", store)
        let editor = try recordingEditor(writing: #"{"a": 5, "c": 3}"#, in: sandbox)
        let result = try await sandbox.run(["edit", "--dry-run", "s.json"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "~ a\t1 → 5\n- b\t2\n+ c\t3\n")
        #expect(try sandbox.bytes("s.json") == Array(store.utf8))
        #expect(try sandbox.workContents() == ["s.json"])
    }

    @Test func editOfTheSchemaVersionIsRefused() async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"$schemaVersion":2,"a":1}"# + "\n"
        try sandbox.create("s.json", store)
        let editor = try recordingEditor(writing: #"{"$schemaVersion": 3, "a": 2}"#, in: sandbox)
        let result = try await run(
            ["edit", "s.json"], environment: self.editor("sh \(editor)"), input: "n\n", in: sandbox)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("$schemaVersion is the file's schema version"), "\(result.stderr)")
        #expect(try sandbox.bytes("s.json") == Array(store.utf8))
        let key = try await sandbox.run(["edit", "s.json", "$schemaVersion"], environment: self.editor("sh \(editor)"))
        #expect(key.status == 2)
    }

    /// A copy the editor removed or emptied (a crash, a truncating editor) is refused like one that does not parse:
    /// read as a store file it would be an empty store, and every key would be removed.
    @Test(arguments: ["rm \"$1\"\n", ": > \"$1\"\n", "printf ' \\n' > \"$1\"\n"])
    func aCopyTheEditorRemovedOrEmptiedRemovesNoKey(_ body: String) async throws {
        let sandbox = try ToolSandbox()
        let store = #"{"a":1,"b":"x"}"# + "\n"
        try sandbox.create("s.json", store)
        let editor = try script("gone.sh", body, in: sandbox)
        let result = try await run(
            ["edit", "s.json"], environment: self.editor("sh \(editor)"), input: "n\n", in: sandbox)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasSuffix("nothing was written\n"), "\(result.stderr)")
        #expect(try sandbox.bytes("s.json") == Array(store.utf8))
    }

    /// After a refused copy, editing again reads the copy afresh (the refused one is not served again).
    @Test func aCopyRefusedForItsSchemaVersionCanBeMendedAndIsWritten() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"$schemaVersion":2,"a":1}"# + "\n")
        let count = sandbox.root.appendingPathComponent("count").path
        let editor = try script(
            "schema.sh",
            """
            echo run >> '\(count)'
            if [ "$(wc -l < '\(count)')" -eq 1 ]; then echo '{"$schemaVersion":5,"a":2}' > "$1"; exit 0; fi
            echo '{"$schemaVersion":2,"a":7}' > "$1"

            """, in: sandbox)
        let result = try await run(
            ["edit", "s.json"], environment: self.editor("sh \(editor)"), input: "y\n", in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("$schemaVersion is the file's schema version"), "\(result.stderr)")
        #expect(result.stdout == "~ a\t1 → 7\n")
        #expect(try sandbox.text("s.json") == "{\n  \"$schemaVersion\": 2,\n  \"a\": 7\n}\n")
    }

    /// Another writer that made the very change the edit makes (the same value, or the same removal) is no
    /// conflict: the key is as the user wants it.
    @Test func anotherWriterMakingTheSameChangeIsNoConflict() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", #"{"a":1,"b":"x","c":3}"# + "\n")
        let tool = try Fixture.locate("codable-defaults")
        let editor = try script(
            "same.sh",
            """
            '\(tool)' write s.json a 2 || exit 7
            '\(tool)' delete s.json c || exit 7
            printf '{"a": 2, "b": "y"}\n' > "$1"

            """, in: sandbox)
        let result = try await sandbox.run(["edit", "s.json"], environment: self.editor("sh \(editor)"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("conflict"), "\(result.stderr)")
        #expect(try sandbox.text("s.json") == "{\n  \"a\": 2,\n  \"b\": \"y\"\n}\n")
    }

    @Test func editIsInTheHelpFromItsDeclaration() async throws {
        let sandbox = try ToolSandbox()
        let general = try await sandbox.run(["--help"])
        #expect(general.stdout.contains("\n  edit FILE [KEY] "), "\(general.stdout)")
        #expect(general.stdout.contains("an edited copy that does not parse, for edit"), "\(general.stdout)")
        let help = try await sandbox.run(["help", "edit"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: codable-defaults edit FILE [KEY] [OPTIONS]"))
        #expect(help.stdout.contains("--dry-run") && help.stdout.contains("--etcd URLS"))
    }
}
