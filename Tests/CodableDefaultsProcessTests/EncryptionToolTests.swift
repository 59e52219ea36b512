import CodableDefaultsTestSupport
import Foundation
import Testing

/// The tool's encryption of secret values at rest, run as the built binary: `write --secret`, `--encryption-key` and
/// `$CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE`, `read --show-secrets`, `export`, `import`, `rename`, `diff` and `rekey`.
/// No file and no output holds a secret's text unless `--show-secrets` asked for it with the key.
@Suite struct EncryptionToolTests {
    let secret = "hunter2-plain-text"

    /// A sandbox with two key files only their owner can read.
    func sandbox() throws -> ToolSandbox {
        let sandbox = try ToolSandbox()
        for (name, hex) in [
            ("a.key", String(repeating: "3c", count: 32)), ("b.key", String(repeating: "4d", count: 32)),
        ] {
            try writeKeyFile(sandbox.work.appendingPathComponent(name), hex: hex)
        }
        return sandbox
    }

    /// Every file of the sandbox's `work/` directory but the key files, as text.
    func workFiles(_ sandbox: ToolSandbox) throws -> String {
        try sandbox.workContents().filter { !$0.hasSuffix(".key") }.map { try sandbox.text($0) }.joined()
    }

    @Test func aSecretWrittenWithTheKeyRestsEncryptedAndReadsBackOnlyWithIt() async throws {
        let sandbox = try sandbox()
        // Without a key, --secret is refused: nothing is stored in clear.
        let refused = try await sandbox.run(["write", "s.json", "token", "--string", secret, "--secret"])
        #expect(refused.status == 2 && refused.stderr.contains("--encryption-key"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("s.json").path))

        try await sandbox.expectSuccess(
            ["write", "s.json", "token", "--string", secret, "--secret", "--encryption-key", "a.key"])
        try await sandbox.expectSuccess(["write", "s.json", "volume", "0.5"])
        #expect(!(try workFiles(sandbox)).contains(secret))
        #expect(try sandbox.text("s.json").contains("\"token\": \"cdenc:1:"))

        // Read without --show-secrets: the encrypted text; with it and the key (option or variable): the value.
        let hidden = try await sandbox.run(["read", "s.json", "token", "--encryption-key", "a.key"])
        #expect(hidden.status == 0 && hidden.stdout.hasPrefix("\"cdenc:1:"), "\(hidden.stderr)")
        #expect(!hidden.stdout.contains(secret) && !hidden.stderr.contains(secret))
        let shown = try await sandbox.run(["read", "s.json", "token", "--show-secrets", "--encryption-key", "a.key"])
        #expect(shown.status == 0 && shown.stdout == "\"\(secret)\"\n", "\(shown.stderr)")
        let fromVariable = try await sandbox.run(
            ["read", "s.json", "token", "--show-secrets"],
            environment: ["CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE": "a.key"])
        #expect(fromVariable.status == 0 && fromVariable.stdout == "\"\(secret)\"\n", "\(fromVariable.stderr)")

        // --show-secrets without the key, or with another: exit 4 naming the key, the value nowhere, the file kept.
        let before = try sandbox.bytes("s.json")
        for arguments in [[], ["--encryption-key", "b.key"]] {
            let failed = try await sandbox.run(["read", "s.json", "token", "--show-secrets"] + arguments)
            #expect(failed.status == 4, "\(arguments): \(failed.stderr)")
            #expect(failed.stderr.contains("\"token\"") && !failed.stderr.contains(secret) && failed.stdout.isEmpty)
        }
        // A new value without the key is refused (never stored in clear); another key's write keeps the value's bytes.
        let overwrite = try await sandbox.run(["write", "s.json", "token", "--string", "in clear"])
        #expect(overwrite.status == 4 && overwrite.stderr.contains("encryption key"))
        try await sandbox.expectSuccess(["write", "s.json", "volume", "0.25"])
        let token = { (bytes: [UInt8]) throws -> String? in
            (try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["token"] as? String
        }
        #expect(try token(sandbox.bytes("s.json")) == token(before))
        #expect(!(try workFiles(sandbox)).contains("in clear"))
    }

    @Test func exportImportRenameDiffAndRekeyKeepTheValueEncrypted() async throws {
        let sandbox = try sandbox()
        try await sandbox.expectSuccess(
            ["write", "s.json", "token", "--string", secret, "--secret", "--encryption-key", "a.key"])

        // export writes the encrypted text; import of it keeps the value, readable with the key.
        let exported = try await sandbox.run(["export", "s.json"])
        #expect(exported.status == 0 && exported.stdout.contains("cdenc:1:") && !exported.stdout.contains(secret))
        try await sandbox.expectSuccess(["export", "s.json", "copy.json"])
        try await sandbox.expectSuccess(["import", "t.json", "copy.json"])
        let imported = try await sandbox.run(["read", "t.json", "token", "--show-secrets", "--encryption-key", "a.key"])
        #expect(imported.stdout == "\"\(secret)\"\n", "\(imported.stderr)")
        let plainExport = try await sandbox.run(["export", "s.json", "--show-secrets", "--encryption-key", "a.key"])
        #expect(plainExport.stdout.contains(secret), "\(plainExport.stderr)")

        // diff shows neither side's secret.
        let diff = try await sandbox.run(["diff", "s.json", "t.json", "--encryption-key", "a.key"])
        #expect(!diff.stdout.contains(secret) && !diff.stderr.contains(secret))

        // rename without the key changes nothing; with it, the value is encrypted under its new name.
        let before = try sandbox.bytes("s.json")
        let refused = try await sandbox.run(["rename", "s.json", "token", "apiToken"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(try sandbox.bytes("s.json") == before)
        try await sandbox.expectSuccess(["rename", "s.json", "token", "apiToken", "--encryption-key", "a.key"])
        let renamed = try await sandbox.run(
            ["read", "s.json", "apiToken", "--show-secrets", "--encryption-key", "a.key"])
        #expect(renamed.stdout == "\"\(secret)\"\n", "\(renamed.stderr)")

        // rekey: the new key reads it, the old one no longer does; the keys it wrote are listed.
        let rekeyed = try await sandbox.run(
            ["rekey", "s.json", "--encryption-key", "a.key", "--new-encryption-key", "b.key"])
        #expect(rekeyed.status == 0 && rekeyed.stdout == "apiToken\n", "\(rekeyed.stderr)")
        let withNew = try await sandbox.run([
            "read", "s.json", "apiToken", "--show-secrets", "--encryption-key", "b.key",
        ])
        #expect(withNew.stdout == "\"\(secret)\"\n", "\(withNew.stderr)")
        let withOld = try await sandbox.run([
            "read", "s.json", "apiToken", "--show-secrets", "--encryption-key", "a.key",
        ])
        #expect(withOld.status == 4 && withOld.stderr.contains("key whose id is"))
        // Run again (a rotation finished, or cut short and resumed): what NEW sealed already is kept as it is.
        let unchanged = try sandbox.bytes("s.json")
        let again = try await sandbox.run(
            ["rekey", "s.json", "--encryption-key", "a.key", "--new-encryption-key", "b.key"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sandbox.bytes("s.json") == unchanged)
        // A value the old key does not open (sealed with NEW, rotating to OLD with OLD): nothing is written.
        let wrongOld = try await sandbox.run(
            ["rekey", "s.json", "--encryption-key", "a.key", "--new-encryption-key", "a.key"])
        #expect(wrongOld.status == 4)
        #expect(try sandbox.bytes("s.json") == unchanged)
        #expect(!(try workFiles(sandbox)).contains(secret))
    }

    @Test func editShowsTheEncryptedTextAndKeepsTheValue() async throws {
        let sandbox = try sandbox()
        try await sandbox.expectSuccess(
            ["write", "s.json", "token", "--string", secret, "--secret", "--encryption-key", "a.key"])
        try await sandbox.expectSuccess(["write", "s.json", "volume", "0.5"])
        let before = try sandbox.text("s.json")
        // The editor records the copy it is given, then changes the plain value only.
        let seen = sandbox.root.appendingPathComponent("seen").path
        let script = sandbox.root.appendingPathComponent("edit.sh")
        try Data("cat \"$1\" > '\(seen)'\nsed -i 's/0.5/0.75/' \"$1\"\n".utf8).write(to: script)
        let edited = try await sandbox.run(
            ["edit", "s.json"], environment: ["VISUAL": "", "EDITOR": "sh \(script.path)"])
        #expect(edited.status == 0, "\(edited.stderr)")
        let copy = try sandbox.text(at: URL(fileURLWithPath: seen))
        #expect(copy.contains("cdenc:1:") && !copy.contains(secret))
        let after = try sandbox.text("s.json")
        #expect(after.contains("\"volume\": 0.75"))
        let line = { (text: String) in text.split(separator: "\n").first { $0.contains("\"token\"") } }
        #expect(line(after) == line(before))
        let read = try await sandbox.run(["read", "s.json", "token", "--show-secrets", "--encryption-key", "a.key"])
        #expect(read.stdout == "\"\(secret)\"\n", "\(read.stderr)")
    }

    @Test func showingOrChangingAnEncryptedValueNeedsTheKeyWithLayersAndDryRunsToo() async throws {
        let sandbox = try sandbox()
        try await sandbox.expectSuccess(
            ["write", "s.json", "token", "--string", secret, "--secret", "--encryption-key", "a.key"])
        try await sandbox.expectSuccess(
            ["write", "s.json", "list", "[1]", "--secret", "--encryption-key", "a.key"])
        try sandbox.create("fallback.json", #"{"other": 1}"#)
        for arguments in [
            ["read", "s.json", "token", "--show-secrets", "--fallback", "fallback.json"],
            ["export", "s.json", "--show-secrets", "--fallback", "fallback.json"],
            ["write", "s.json", "--dry-run", "list", "-array-add", "2"],
        ] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 4, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("encrypt") && !result.stdout.contains("cdenc"), "\(arguments)")
        }
        // With the key, the dry run and the real update read the value decrypted.
        let dry = try await sandbox.run(
            ["write", "s.json", "--dry-run", "--encryption-key", "a.key", "list", "-array-add", "2"])
        #expect(dry.status == 0, "\(dry.stderr)")
        try await sandbox.expectSuccess(["write", "s.json", "--encryption-key", "a.key", "list", "-array-add", "2"])
        let list = try await sandbox.run(["read", "s.json", "list", "--show-secrets", "--encryption-key", "a.key"])
        #expect(list.stdout == "[1,\"2\"]\n", "\(list.stderr)")

        // One value encrypted twice differs in its text only: with the key, diff finds no difference.
        try await sandbox.expectSuccess(["export", "s.json", "copy.json"])
        try await sandbox.expectSuccess(
            ["write", "s.json", "token", "--string", secret, "--encryption-key", "a.key"])
        #expect(try sandbox.text("s.json") != sandbox.text("copy.json"))
        let same = try await sandbox.run(["diff", "s.json", "copy.json", "--encryption-key", "a.key"])
        #expect(same.status == 0 && same.stdout.isEmpty, "\(same.stdout) \(same.stderr)")
        // The same value in clear on one side is a difference (that one rests in clear), printed as a secret.
        try await sandbox.expectSuccess([
            "export", "s.json", "plain.json", "--show-secrets", "--encryption-key", "a.key",
        ])
        let plain = try await sandbox.run(["diff", "s.json", "plain.json", "--encryption-key", "a.key"])
        #expect(plain.status == 1 && plain.stdout.contains("token") && !plain.stdout.contains(secret))

        // edit with the key: the copy shows the encrypted text; replacing it with a value stores that value
        // encrypted, with no false conflict.
        let script = sandbox.root.appendingPathComponent("edit.sh")
        try Data("sed -i 's/\"list\": \"[^\"]*\"/\"list\": [9]/' \"$1\"\n".utf8).write(to: script)
        let edited = try await sandbox.run(
            ["edit", "s.json", "--encryption-key", "a.key"], environment: ["VISUAL": "", "EDITOR": "sh \(script.path)"])
        #expect(edited.status == 0, "\(edited.stderr)")
        let after = try await sandbox.run(["read", "s.json", "list", "--show-secrets", "--encryption-key", "a.key"])
        #expect(after.stdout == "[9]\n", "\(after.stderr)")
        #expect(try sandbox.text("s.json").contains("\"list\": \"cdenc:1:"))
        // Without the key, the same edit is refused and nothing changes.
        let before = try sandbox.bytes("s.json")
        try Data("sed -i 's/\"list\": \"[^\"]*\"/\"list\": [7]/' \"$1\"\n".utf8).write(to: script)
        let refused = try await sandbox.run(
            ["edit", "s.json"], environment: ["VISUAL": "", "EDITOR": "sh \(script.path)"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(try sandbox.bytes("s.json") == before)
    }
}
