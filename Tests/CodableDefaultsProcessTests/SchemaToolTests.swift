import CodableDefaults
import CodableDefaultsTestSupport
import Foundation
import Testing

/// Tests of the tool's schema checks (`--schema`, the store's own schema, `check`, `check --strict`, `describe`),
/// run as a real process on store files whose schema the library generated from ``SchemaKeys``.
@Suite struct SchemaToolTests {
    /// A sandbox whose `s.json` holds `volume` 0.8 and whose `s.schema.json` the library published for
    /// ``SchemaKeys/keys``.
    private func sandboxWithSchema() async throws -> ToolSandbox {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\"volume\": 0.8}\n")
        let defaults = try Defaults(url: sandbox.work.appendingPathComponent("s.json"), saveMode: .manual)
        try defaults.publishSchema(for: SchemaKeys.keys, title: "Test settings")
        #expect(defaults.schemaLocation == sandbox.work.appendingPathComponent("s.schema.json").path)
        return sandbox
    }

    /// Runs `arguments` and expects exit status 2, the store file unchanged byte for byte, and each of `rules`
    /// on standard error.
    private func expectRefused(
        _ arguments: [String], _ rules: [String], in sandbox: ToolSandbox,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try sandbox.bytes("s.json")
        let result = try await sandbox.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            result.stderr.contains("s.schema.json refuses the change; nothing was written"),
            sourceLocation: sourceLocation)
        for rule in rules {
            #expect(result.stderr.contains(rule), "\(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(
            !result.stderr.contains("Usage:"), "a refused value is no usage mistake", sourceLocation: sourceLocation)
        #expect(try sandbox.bytes("s.json") == before, "\(arguments) changed the file", sourceLocation: sourceLocation)
    }

    @Test func writesTheSchemaRefusesExitWithTwoNamingTheRuleAndLeaveTheFileAsItWas() async throws {
        let sandbox = try await sandboxWithSchema()
        try await expectRefused(
            ["write", "s.json", "volume", "1.5"], [#"/volume: 1.5 must be at most 1 (schema keyword "maximum")"#],
            in: sandbox)
        try await expectRefused(
            ["write", "s.json", "retries", "2.5"], [#"/retries: 2.5 must be of type integer (schema keyword "type")"#],
            in: sandbox)
        try await expectRefused(
            ["write", "s.json", "theme", "--string", "blue"],
            [#"/theme: "blue" must be one of "light", "dark" (schema keyword "enum")"#], in: sandbox)
        try await expectRefused(
            ["write", "s.json", "nickname", "--string", "much too long"],
            [#"/nickname: "much too long" must be at most 8 characters long (schema keyword "maxLength")"#],
            in: sandbox)
        try await expectRefused(
            ["write", "s.json", "tags", "-array", "a", "b", "c"],
            [#"/tags: ["a","b","c"] must be at most 2 elements long (schema keyword "maxItems")"#], in: sandbox)
        try await expectRefused(
            ["write", "s.json", "profile", "--string", "Ann"],
            [#"/profile: "Ann" must be of type object (schema keyword "type")"#], in: sandbox)
        // A secret key's value is never quoted.
        try await expectRefused(
            ["write", "s.json", "token", "12345"], [#"/token: must be of type string (schema keyword "type")"#],
            in: sandbox)
        let secret = try await sandbox.run(["write", "s.json", "token", "98765"])
        #expect(!secret.stderr.contains("98765"), "\(secret.stderr)")

        // What the schema takes is written; keys it does not list are allowed.
        try await sandbox.expectSuccess(["write", "s.json", "volume", "1"])
        try await sandbox.expectSuccess(["write", "s.json", "retries", "-int", "10"])
        try await sandbox.expectSuccess(["write", "s.json", "unlisted", "[1, 2]"])
        let stored = try JSONValue(parsing: try sandbox.text("s.json"))
        #expect(stored == ["retries": 10, "unlisted": [1, 2], "volume": 1])
    }

    @Test func updateImportDeleteAndRenameAreCheckedToo() async throws {
        let sandbox = try await sandboxWithSchema()
        try await sandbox.expectSuccess(["update", "s.json", "retries", "--add", "7"])
        try await expectRefused(
            ["update", "s.json", "retries", "--add", "4"],
            [#"/retries: 11 must be at most 10 (schema keyword "maximum")"#],
            in: sandbox)
        try sandbox.create("in.json", #"{"volume": -1, "theme": "dark", "tags": ["x", "x", "x"]}"#)
        try await expectRefused(
            ["import", "s.json", "in.json"],
            [
                #"/volume: -1 must be at least 0 (schema keyword "minimum")"#,
                #"/tags: ["x","x","x"] must be at most 2 elements long (schema keyword "maxItems")"#,
            ], in: sandbox)
        try await expectRefused(
            ["rename", "s.json", "volume", "theme"], [#"/theme: 0.8 must be of type string"#], in: sandbox)
        // A hand-written schema that requires a key: its removal is refused.
        try sandbox.create("required.json", #"{"type": "object", "required": ["volume"]}"#)
        let before = try sandbox.bytes("s.json")
        let removal = try await sandbox.run(["delete", "s.json", "volume", "--schema", "required.json"])
        #expect(removal.status == 2, "\(removal.stderr)")
        #expect(
            removal.stderr.contains(#"/volume: must be present (the schema requires it) (schema keyword "required")"#))
        #expect(try sandbox.bytes("s.json") == before)
        // A dry run says what the real run would: refused, exit 2.
        let dry = try await sandbox.run(["write", "s.json", "volume", "7", "--dry-run"])
        #expect(dry.status == 2 && dry.stdout.isEmpty, "\(dry.stdout) \(dry.stderr)")
    }

    /// An undo that would put back a value the schema refuses is refused as any other write is: exit 2, each
    /// broken rule named, nothing written (a dry run too); `--no-schema` puts it back.
    @Test func anUndoIsCheckedLikeEveryOtherWrite() async throws {
        let sandbox = try await sandboxWithSchema()
        try await sandbox.expectSuccess(["write", "s.json", "volume", "7", "--no-schema"])
        try await sandbox.expectSuccess(["write", "s.json", "volume", "0.5"])
        let rule = #"/volume: 7 must be at most 1 (schema keyword "maximum")"#
        try await expectRefused(["undo", "s.json"], [rule], in: sandbox)
        try await expectRefused(["undo", "s.json", "volume", "--dry-run"], [rule], in: sandbox)
        try await expectRefused(["undo", "s.json", "--to", "1"], [rule], in: sandbox)
        let unchecked = try await sandbox.run(["undo", "s.json", "--no-schema"])
        #expect(unchecked.status == 0 && unchecked.stdout == "~ volume\t0.5 → 7\n", "\(unchecked.stderr)")
    }

    @Test func anEditTheSchemaRefusesIsShownAndCanBeEditedAgain() async throws {
        let sandbox = try await sandboxWithSchema()
        let script = sandbox.root.appendingPathComponent("editor.sh")
        // The first edit sets 1.5, the second 0.25.
        try Data(
            """
            if [ -e '\(sandbox.root.path)/once' ]; then v=0.25; else v=1.5; touch '\(sandbox.root.path)/once'; fi
            printf '{"volume": %s}\\n' "$v" > "$1"

            """.utf8
        ).write(to: script)
        let refused = try await sandbox.run(
            ["edit", "s.json"], environment: ["VISUAL": "", "EDITOR": "sh \(script.path)"])
        // Standard input is closed: no answer, so the first refusal ends the edit.
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains(#"/volume: 1.5 must be at most 1 (schema keyword "maximum")"#))
        #expect(refused.stderr.contains("Edit again? [y/N]"))
        #expect(try sandbox.text("s.json") == "{\"volume\": 0.8}\n")
        let edited = try await sandbox.run(
            ["edit", "s.json"], environment: ["VISUAL": "", "EDITOR": "sh \(script.path)"])
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(try sandbox.text("s.json") == "{\n  \"volume\": 0.25\n}\n")
    }

    @Test func checkValidatesEveryValueAndStrictReportsUnlistedKeys() async throws {
        let sandbox = try await sandboxWithSchema()
        let valid = try await sandbox.run(["check", "s.json"])
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(valid.stdout.hasSuffix("s.json: valid (1 key), checked against \(sandbox.work.path)/s.schema.json\n"))

        // Another program wrote values the schema refuses, and a key it does not list.
        try sandbox.create("s.json", #"{"volume": 3, "theme": "blue", "token": 5, "extra": true}"#)
        let bad = try await sandbox.run(["check", "s.json"])
        #expect(bad.status == 4)
        let lines = bad.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(bad.stderr)")
        #expect(
            lines.contains {
                $0.hasSuffix(#"s.json: /theme: "blue" must be one of "light", "dark" (schema keyword "enum")"#)
            })
        #expect(
            lines.contains { $0.hasSuffix(#"s.json: /token: must be of type string (schema keyword "type")"#) })
        #expect(lines.contains { $0.hasSuffix(#"s.json: /volume: 3 must be at most 1 (schema keyword "maximum")"#) })
        #expect(lines.last?.hasSuffix("3 problems against the schema \(sandbox.work.path)/s.schema.json") == true)
        let strict = try await sandbox.run(["check", "s.json", "--strict"])
        #expect(strict.status == 4)
        #expect(strict.stderr.contains(#"s.json: key "extra" is not in the schema"#), "\(strict.stderr)")
        #expect(strict.stderr.contains("4 problems"))
        // Without the schema, the file is valid JSON.
        let plain = try await sandbox.run(["check", "s.json", "--no-schema"])
        #expect(plain.status == 0 && plain.stdout.hasSuffix("s.json: valid (4 keys)\n"), "\(plain.stderr)")
        let noSchema = try await sandbox.run(["check", "s.json", "--strict", "--no-schema"])
        #expect(noSchema.status == 2)
        try sandbox.create("other.json", "{}")
        let none = try await sandbox.run(["check", "other.json", "--strict"])
        #expect(none.status == 2 && none.stderr.contains("has no schema"), "\(none.stderr)")
    }

    @Test func aSchemaTheToolCannotCheckIsRefusedNotHalfChecked() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{}")
        try sandbox.create("s.schema.json", #"{"properties": {"name": {"type": "string", "pattern": "^a"}}}"#)
        let result = try await sandbox.run(["write", "s.json", "name", "--string", "b"])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains(#"the schema keyword "pattern" at /properties/name is not supported"#))
        #expect(result.stderr.contains("--no-schema"))
        #expect(try sandbox.text("s.json") == "{}")
        try sandbox.create("s.schema.json", "{\n  \"type\": \"object\",\n  \"properties\": {\"a\": 1,}\n}")
        let broken = try await sandbox.run(["check", "s.json"])
        #expect(broken.status == 4)
        #expect(broken.stderr.contains("s.schema.json:3:"), "\(broken.stderr)")
        // --no-schema writes unchecked; the schema that cannot be read cannot say which keys are secret: a note.
        let unchecked = try await sandbox.run(["write", "s.json", "name", "--string", "b", "--no-schema"])
        #expect(unchecked.status == 0, "\(unchecked.stderr)")
        #expect(unchecked.stderr.hasPrefix("codable-defaults: note: "), "\(unchecked.stderr)")
        let missing = try await sandbox.run(["check", "s.json", "--schema", "nowhere.json"])
        #expect(missing.status == 4 && missing.stderr.contains("nowhere.json"), "\(missing.stderr)")
    }

    /// A key the store's schema marks secret is secret for every command: its value is in no output, no error,
    /// no history record (a rename's under the new name either), no export; `--show-secrets` prints it.
    @Test func aKeyTheSchemaMarksSecretIsSecretForEveryCommand() async throws {
        let sandbox = try await sandboxWithSchema()
        let secret = "s3cret-value"
        try await sandbox.expectSuccess(["write", "s.json", "token", "--string", secret])
        let watch = try sandbox.start(["watch", "s.json", "token", "--initial"])
        defer { watch.kill() }
        #expect(try await watch.waitForOutput(containing: "token\t<secret>\n"), "the initial line, masked")
        #expect(!(try watch.output()).contains("s3cret"))
        try sandbox.create("other.json", #"{"token": "another-s3cret-value"}"# + "\n")
        var outputs: [String: String] = [:]
        func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ToolResult {
            let result = try await sandbox.run(arguments, environment: environment)
            outputs[arguments.joined(separator: " ")] = result.stdout + result.stderr
            return result
        }
        let whole = try await run(["read", "s.json"])
        #expect(whole.status == 0 && whole.stdout.contains("\"<secret>\""), "\(whole.stdout)")
        #expect(try await run(["read", "s.json", "token"]).status == 1)
        #expect(try await run(["export", "s.json"]).status == 1)
        let diff = try await run(["diff", "s.json", "other.json"])
        #expect(diff.status == 1 && diff.stdout.hasPrefix("~ token\t<secret> → <secret>\n"), "\(diff.stdout)")
        let dry = try await run(["write", "s.json", "token", "--string", "new-s3cret-value", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout == "~ token\t<secret> → <secret>\n", "\(dry.stdout)")
        _ = try await run(["import", "s.json", "other.json", "--dry-run"])
        try await sandbox.expectSuccess(["write", "s.json", "token", "--string", "second-s3cret-value"])
        let history = try await run(["history", "s.json"])
        #expect(history.status == 0 && history.stdout.contains("<secret>"), "\(history.stdout)")
        _ = try await run(["history", "s.json", "--json"])
        let undo = try await run(["undo", "s.json", "--dry-run"])
        #expect(undo.status == 1, "a secret's value cannot be put back: \(undo.stderr)")
        #expect(try await run(["check", "s.json"]).status == 0)
        _ = try await run(["rename", "s.json", "token", "credential", "--dry-run"])
        // An edit: the line of what it wrote, and the note of a conflict with another writer, name the key only.
        let editor = sandbox.root.appendingPathComponent("editor.sh")
        let tool = try Fixture.locate("codable-defaults")
        try Data(
            """
            if [ -e '\(sandbox.root.path)/once' ]; then
              '\(tool)' write s.json token --string other-s3cret-value || exit 7
              printf '"again-s3cret-value"\\n' > "$1"
            else
              touch '\(sandbox.root.path)/once'
              printf '"edited-s3cret-value"\\n' > "$1"
            fi

            """.utf8
        ).write(to: editor)
        let editing = ["VISUAL": "", "EDITOR": "sh \(editor.path)"]
        let edit = try await run(["edit", "s.json", "token"], environment: editing)
        #expect(edit.status == 0 && edit.stdout == "~ token\t<secret> → <secret>\n", "\(edit.stdout) \(edit.stderr)")
        let conflict = try await run(["edit", "s.json", "token"], environment: editing)
        #expect(conflict.status == 1 && conflict.stderr.contains("conflict"), "\(conflict.stderr)")
        try await sandbox.expectSuccess(["rename", "s.json", "token", "credential"])
        _ = try await run(["read", "s.json"])
        _ = try await run(["history", "s.json"])
        for (command, output) in outputs {
            #expect(!output.contains("s3cret"), "\(command) printed a secret: \(output)")
        }
        let records = try sandbox.text(".s.json.history")
        #expect(!records.contains("s3cret"), "the history holds a secret: \(records)")
        let shown = try await sandbox.run(["read", "s.json", "credential", "--show-secrets"])
        #expect(shown.status == 0 && shown.stdout == "\"other-s3cret-value\"\n", "\(shown.stdout) \(shown.stderr)")
    }

    @Test func describeSaysWhatEachKeyIsAndWhereItsValueComesFrom() async throws {
        let sandbox = try await sandboxWithSchema()
        try await sandbox.expectSuccess(["write", "s.json", "token", "--string", "s3cret"])
        let volume = try await sandbox.run(
            ["describe", "s.json", "volume", "--env-prefix", "APP_"], environment: ["APP_VOLUME": "0.3"])
        #expect(volume.status == 0, "\(volume.stderr)")
        #expect(
            volume.stdout
                == """
                volume
                  type: number
                  default: 0.5
                  rules: at least 0, at most 1
                  description: Playback volume.
                  value: 0.3 (environment APP_VOLUME)

                """)
        let all = try await sandbox.run(["describe", "s.json"])
        #expect(all.status == 0, "\(all.stderr)")
        let blocks = all.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }
        #expect(blocks == ["even", "nickname", "profile", "retries", "tags", "theme", "token", "volume"])
        #expect(
            all.stdout.contains(
                "even\n  type: integer\n  default: 0\n  rules: an even number (the program's own rule; not checked here)\n"
            ))
        #expect(
            all.stdout.contains(
                "theme\n  type: string\n  default: \"light\"\n  rules: one of \"light\", \"dark\"\n  value: \"light\" (the schema's default: nothing has a value)\n"
            ))
        #expect(
            all.stdout.contains(
                "token\n  type: string\n  secret: yes\n  description: API token.\n  value: <secret> (stored "))
        #expect(!all.stdout.contains("s3cret"))
        #expect(all.stdout.contains("profile\n  type: object\n"), "\(all.stdout)")
        let unknown = try await sandbox.run(["describe", "s.json", "nothing"])
        #expect(unknown.status == 3, "\(unknown.stderr)")
        #expect(unknown.stderr.contains("does not list it"))
    }
}
