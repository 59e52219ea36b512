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
            let path = sandbox.work.appendingPathComponent(name).path
            #expect(
                FileManager.default.createFile(
                    atPath: path, contents: Data((hex + "\n").utf8), attributes: [.posixPermissions: 0o600]))
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

        // Read without --show-secrets: refused as any secret; with it and the key (option or variable): the value.
        let hidden = try await sandbox.run(["read", "s.json", "token", "--encryption-key", "a.key"])
        #expect(hidden.status == 1 && !hidden.stdout.contains(secret) && !hidden.stderr.contains(secret))
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
        // rekey with the wrong old key writes nothing.
        let unchanged = try sandbox.bytes("s.json")
        let wrongOld = try await sandbox.run(
            ["rekey", "s.json", "--encryption-key", "a.key", "--new-encryption-key", "b.key"])
        #expect(wrongOld.status == 4)
        #expect(try sandbox.bytes("s.json") == unchanged)
        #expect(!(try workFiles(sandbox)).contains(secret))
    }
}
