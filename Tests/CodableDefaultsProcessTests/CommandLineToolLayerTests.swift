import CodableDefaultsTestSupport
import Foundation
import Testing

/// Tests of the tool's layer options (`--env-prefix`, `--override`, `--fallback`, `--fallback-dir`,
/// `--secret-dir`, `--secret-env-prefix`, `--show-secrets`), `explain`, and the note of a shadowed `write`: the
/// built binary run as a real process, with real environment variables given to it and real files and
/// directories.
@Suite struct CommandLineToolLayerTests {
    /// A prefix no variable of the test's own environment has.
    let prefix = "CDLAYERS_\(UInt32.random(in: 0...UInt32.max))_"

    // MARK: explain

    @Test func explainListsEveryLayerInLookupOrderAndMarksTheWinner() async throws {
        let sandbox = try ToolSandbox()
        let layers = try LayerFiles(sandbox)
        try await sandbox.expectSuccess(["write", layers.store, "volume", "0.8"])
        let environment = [prefix + "VOLUME": "0.9"]
        let options = layers.options(prefix: prefix)

        let explained = try await sandbox.run(["explain", layers.store, "volume"] + options, environment: environment)
        #expect(explained.status == 0, "\(explained.stderr)")
        #expect(explained.stderr.isEmpty)
        #expect(
            explained.stdout == """
                * environment \(prefix)VOLUME\t0.9
                  stored \(layers.store)\t0.8
                  file \(layers.fallback)\t0.5
                  file \(layers.secrets)/volume\t<secret>

                """)

        let shown = try await sandbox.run(
            ["explain", layers.store, "volume", "--show-secrets"] + options, environment: environment)
        #expect(shown.stdout.hasSuffix("  file \(layers.secrets)/volume\t0.3\n"), "\(shown.stdout)")

        // Only a secret has the key: the winner is the secret file, its value hidden unless asked for.
        let token = try await sandbox.run(["explain", layers.store, "token"] + options, environment: environment)
        #expect(token.status == 0)
        #expect(token.stdout == "* file \(layers.secrets)/token\t<secret>\n")
        let tokenShown = try await sandbox.run(
            ["explain", layers.store, "token", "--show-secrets"] + options, environment: environment)
        #expect(tokenShown.stdout == "* file \(layers.secrets)/token\t\"\(LayerFiles.secret)\"\n")

        // Nothing has the key: the default line, and status 3 as for read KEY.
        let none = try await sandbox.run(["explain", layers.store, "missing"] + options, environment: environment)
        #expect(none.status == 3)
        #expect(none.stdout == "* default\t(none)\n")
        #expect(none.stderr.contains("key \"missing\": no value stored or in a layer"), "\(none.stderr)")

        // Without layers: the stored value only.
        let plain = try await sandbox.run(["explain", layers.store, "volume"], environment: environment)
        #expect(plain.stdout == "* stored \(layers.store)\t0.8\n")
    }

    @Test func layersAreReadInTheOrderGiven() async throws {
        let sandbox = try ToolSandbox()
        let layers = try LayerFiles(sandbox)
        try sandbox.create("first.json", #"{"theme":"first"}"#)
        try sandbox.create("second.json", #"{"theme":"second"}"#)
        let first = sandbox.work.appendingPathComponent("first.json").path
        let second = sandbox.work.appendingPathComponent("second.json").path
        try await sandbox.expectSuccess(["write", layers.store, "theme", #""stored""#])

        let fallbacks = try await sandbox.run(
            ["explain", layers.store, "limit", "--fallback-dir", layers.directory, "--fallback", layers.fallback])
        #expect(fallbacks.stdout == "* file \(layers.directory)/limit\t10\n  file \(layers.fallback)\t20\n")
        let swapped = try await sandbox.run(
            ["explain", layers.store, "limit", "--fallback", layers.fallback, "--fallback-dir", layers.directory])
        #expect(swapped.stdout == "* file \(layers.fallback)\t20\n  file \(layers.directory)/limit\t10\n")

        let overrides = try await sandbox.run(
            ["explain", layers.store, "theme", "--override", second, "--env-prefix", prefix, "--override", first],
            environment: [prefix + "THEME": "env"])
        #expect(
            overrides.stdout == """
                * file \(second)\t"second"
                  environment \(prefix)THEME\t"env"
                  file \(first)\t"first"
                  stored \(layers.store)\t"stored"

                """)
        let read = try await sandbox.run(
            ["read", layers.store, "theme", "--override", first, "--override", second])
        #expect(read.stdout == "\"first\"\n")
    }

    // MARK: write

    @Test func writeOfAShadowedKeyWritesTheStoreAndSaysWhatShadowsIt() async throws {
        let sandbox = try ToolSandbox()
        let layers = try LayerFiles(sandbox)
        let environment = [prefix + "VOLUME": "0.9"]
        let before = try layers.snapshot()

        let written = try await sandbox.run(
            ["write", layers.store, "volume", "0.7", "--env-prefix", prefix], environment: environment)
        #expect(written.status == 0)
        #expect(written.stdout.isEmpty)
        #expect(
            written.stderr
                == "codable-defaults: note: \"volume\" is shadowed by environment \(prefix)VOLUME; reads give that value\n"
        )
        #expect(try sandbox.text("s.json") == "{\n  \"volume\": 0.7\n}\n")
        let effective = try await sandbox.run(
            ["read", layers.store, "volume", "--env-prefix", prefix], environment: environment)
        #expect(effective.stdout == "0.9\n")
        let stored = try await sandbox.run(["read", layers.store, "volume"], environment: environment)
        #expect(stored.stdout == "0.7\n")

        // A typed write and an --override file: the note names the file.
        try sandbox.create("override.json", #"{"count":1}"#)
        let override = sandbox.work.appendingPathComponent("override.json").path
        let typed = try await sandbox.run(["write", layers.store, "count", "--override", override, "-int", "5"])
        #expect(typed.status == 0)
        #expect(
            typed.stderr == "codable-defaults: note: \"count\" is shadowed by file \(override); reads give that value\n"
        )
        let added = try await sandbox.run(
            ["write", layers.store, "recent", "--override", override, "-array-add", "a"])
        #expect(added.status == 0)
        #expect(added.stderr.isEmpty, "nothing shadows recent")
        #expect(try sandbox.text("s.json") == "{\n  \"count\": 5,\n  \"recent\": [\"a\"],\n  \"volume\": 0.7\n}\n")

        // A fallback does not shadow a stored value: no note.
        try await sandbox.expectSuccess(
            ["write", layers.store, "limit", "3"] + layers.options(prefix: prefix), environment: environment)
        // The layers are read, never written, created or locked.
        #expect(try layers.snapshot() == before)
    }

    // MARK: Errors

    @Test func aBadFallbackFileIsAnErrorWithItsPositionAndTheExitStatusOfABadStore() async throws {
        let sandbox = try ToolSandbox()
        let layers = try LayerFiles(sandbox)
        try await sandbox.expectSuccess(["write", layers.store, "volume", "0.8"])
        try sandbox.create("bad.json", "{\"a\": 1,\n  \"b\": ]}\n")
        let bad = sandbox.work.appendingPathComponent("bad.json").path
        let storeBefore = try sandbox.text("s.json")

        let asStore = try await sandbox.run(["read", bad])
        #expect(asStore.status == 4)
        for command in [
            ["read", layers.store], ["read", layers.store, "volume"], ["read-type", layers.store, "volume"],
            ["explain", layers.store, "volume"], ["export", layers.store], ["keys", layers.store],
            ["write", layers.store, "volume", "0.1"],
        ] {
            for option in ["--fallback", "--override"] {
                let result = try await sandbox.run(command + [option, bad])
                #expect(result.status == asStore.status, "\(command) \(option)")
                #expect(result.stdout.isEmpty, "\(command) \(option)")
                #expect(result.stderr.hasPrefix("codable-defaults: \(bad):2:8: "), "\(command): \(result.stderr)")
            }
        }
        #expect(try sandbox.text("s.json") == storeBefore, "a failed write leaves the store as it was")

        // A missing layer file or directory is an empty layer.
        let missing = try await sandbox.run(
            ["read", layers.store, "volume", "--fallback", bad + ".missing", "--secret-dir", bad + ".dir"])
        #expect(missing.status == 0)
        #expect(missing.stdout == "0.8\n")
        // A --fallback-dir that is a file: a bad file too.
        let notADirectory = try await sandbox.run(["read", layers.store, "--fallback-dir", layers.fallback])
        #expect(notADirectory.status == 4)
        #expect(notADirectory.stderr.contains(layers.fallback), "\(notADirectory.stderr)")
    }

    @Test func layerOptionsAreCheckedAsUsage() async throws {
        let sandbox = try ToolSandbox()
        let cases: [([String], String)] = [
            (["read", "s.json", "--fallback"], "option --fallback needs a value"),
            (["read", "s.json", "--fallback", ""], "--fallback FILE is empty"),
            (["explain", "s.json", "k", "--env-prefix="], "--env-prefix PREFIX is empty"),
            (["explain", "s.json"], "missing KEY"),
            (["explain", "s.json", "k", "extra"], "unexpected argument 'extra'"),
            (["explain", "s.json", "k", "--show-secrets=yes"], "does not take a value"),
            (["update", "s.json", "k", "--add", "1", "--fallback", "f.json"], "unknown option '--fallback'"),
            (["--env-prefix", "X_", "read"], "--env-prefix is an option of"),
        ]
        for (arguments, message) in cases {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(try sandbox.workContents().isEmpty)
    }

    // MARK: read, read-type, keys, export

    @Test func readReadTypeKeysAndExportGiveTheEffectiveValues() async throws {
        let sandbox = try ToolSandbox()
        let layers = try LayerFiles(sandbox)
        try await sandbox.expectSuccess(["write", layers.store, "volume", "0.8"])
        let environment = [prefix + "VOLUME": "0.9", prefix + "NAME": "Guest"]
        let options = ["--env-prefix", prefix, "--fallback", layers.fallback, "--fallback-dir", layers.directory]

        let type = try await sandbox.run(["read-type", layers.store, "limit"] + options, environment: environment)
        #expect(type.stdout == "Type is integer\n")
        let name = try await sandbox.run(["read-type", layers.store, "name"] + options, environment: environment)
        #expect(name.stdout == "Type is string\n", "the environment's text that is not JSON is a string")
        let missing = try await sandbox.run(["read-type", layers.store, "missing"] + options)
        #expect(missing.status == 3)
        let storedOnly = try await sandbox.run(["read-type", layers.store, "limit"])
        #expect(storedOnly.status == 3, "without layers, read-type reads the store only")

        let read = try await sandbox.run(["read", layers.store] + options, environment: environment)
        #expect(read.status == 0)
        // The fallback file comes first; a name found only in the environment (name) is not listed.
        #expect(read.stdout == "{\n  \"limit\": 20,\n  \"volume\": 0.9\n}\n")
        let keys = try await sandbox.run(["keys", layers.store] + options, environment: environment)
        #expect(keys.stdout == "limit\nvolume\n")

        let exported = try await sandbox.run(["export", layers.store] + options, environment: environment)
        #expect(exported.status == 0)
        #expect(exported.stdout == "{\n  \"limit\": 20,\n  \"volume\": 0.9\n}\n")
        let destination = sandbox.work.appendingPathComponent("effective.json").path
        try await sandbox.expectSuccess(["export", layers.store, destination] + options, environment: environment)
        #expect(try sandbox.text("effective.json") == exported.stdout)
        let plain = try await sandbox.run(["export", layers.store], environment: environment)
        #expect(plain.stdout == "{\n  \"volume\": 0.8\n}\n", "without layers, export writes the stored members")

        // A secret: read KEY and export refuse (status 1), the whole read masks it and says so.
        let secret = ["--secret-dir", layers.secrets]
        let token = try await sandbox.run(["read", layers.store, "token"] + secret)
        #expect(token.status == 1)
        #expect(token.stdout.isEmpty)
        #expect(token.stderr.contains("key \"token\": the value (file \(layers.secrets)/token) is secret"))
        let tokenShown = try await sandbox.run(["read", layers.store, "token", "--show-secrets"] + secret)
        #expect(tokenShown.stdout == "\"\(LayerFiles.secret)\"\n")
        let masked = try await sandbox.run(["read", layers.store] + secret)
        #expect(masked.status == 0)
        #expect(masked.stdout == "{\n  \"token\": \"<secret>\",\n  \"volume\": 0.8\n}\n")
        #expect(masked.stderr.contains("note: secret values are shown as \"<secret>\" (\"token\")"))
        let refused = try await sandbox.run(["export", layers.store, "secret.json"] + secret)
        #expect(refused.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("secret.json").path))
        let tokenType = try await sandbox.run(["read-type", layers.store, "token"] + secret)
        #expect(tokenType.stdout == "Type is string\n")
    }

    // MARK: Secrets

    @Test func noCommandPrintsASecretUnlessAsked() async throws {
        let sandbox = try ToolSandbox()
        let layers = try LayerFiles(sandbox)
        try await sandbox.expectSuccess(["write", layers.store, "volume", "0.8"])
        let envSecret = "env-only-\(UUID().uuidString)"
        let environment = [prefix + "PASSWORD": envSecret, prefix + "TOKEN": envSecret]
        let fileSecret = "file-only-\(UUID().uuidString)"
        try sandbox.create("secret.json", "{\"apiKey\": \"\(fileSecret)\"}")
        let secrets = [
            "--secret-dir", layers.secrets, "--secret-env-prefix", prefix, "--secret-fallback",
            sandbox.work.appendingPathComponent("secret.json").path,
        ]
        let destination = sandbox.work.appendingPathComponent("out.json").path
        let commands: [[String]] = [
            ["read", layers.store], ["read", layers.store, "token"], ["read", layers.store, "password"],
            ["read", layers.store, "volume"], ["read-type", layers.store, "token"], ["keys", layers.store],
            ["export", layers.store], ["export", layers.store, destination], ["explain", layers.store, "token"],
            ["explain", layers.store, "password"], ["explain", layers.store, "volume"],
            ["write", layers.store, "password", "1"], ["write", layers.store, "token", "-array-add", "x"],
            ["write", layers.store, "token", "-int", "x"], ["read", layers.store, "apiKey"],
            ["explain", layers.store, "apiKey"],
        ]
        var sawAny = false
        for command in commands {
            // The options go after FILE: after a type flag (-int), every argument is one of its values.
            let withSecrets = Array(command.prefix(2)) + secrets + command.dropFirst(2)
            let result = try await sandbox.run(withSecrets, environment: environment)
            let exported = FileManager.default.contents(atPath: destination).map { String(decoding: $0, as: UTF8.self) }
            for secret in [LayerFiles.secret, envSecret, fileSecret] {
                #expect(!result.stdout.contains(secret), "\(command): stdout \(result.stdout)")
                #expect(!result.stderr.contains(secret), "\(command): stderr \(result.stderr)")
                #expect(exported?.contains(secret) != true, "\(command): the exported file")
            }
            let shown = try await sandbox.run(
                Array(command.prefix(2)) + ["--show-secrets"] + withSecrets.dropFirst(2), environment: environment)
            sawAny =
                sawAny || shown.stdout.contains(LayerFiles.secret) || shown.stdout.contains(envSecret)
                || shown.stdout.contains(fileSecret)
            if FileManager.default.fileExists(atPath: destination) {
                try FileManager.default.removeItem(atPath: destination)
            }
        }
        #expect(sawAny, "--show-secrets prints them: the search can find them")
        // Each command ran twice: -array-add x added two elements.
        let shown = try await sandbox.run(
            ["explain", layers.store, "token", "--show-secrets"] + secrets, environment: environment)
        #expect(
            shown.stdout == """
                * environment \(prefix)TOKEN\t"\(envSecret)"
                  stored \(layers.store)\t["x","x"]
                  file \(layers.secrets)/token\t"\(LayerFiles.secret)"

                """)
    }

    // MARK: Help

    @Test func helpListsExplainAndTheLayerOptions() async throws {
        let sandbox = try ToolSandbox()
        let general = try await sandbox.run(["help"])
        #expect(general.stdout.contains("\n  explain FILE KEY "))
        #expect(general.stdout.contains("LAYERS:"))
        let options = [
            "--env-prefix PREFIX", "--secret-env-prefix PREFIX", "--override FILE", "--fallback FILE",
            "--fallback-dir DIR", "--secret-dir DIR", "--show-secrets",
        ]
        for command in ["explain", "read", "read-type", "keys", "export", "write"] {
            let help = try await sandbox.run(["help", command])
            #expect(help.status == 0)
            for option in options { #expect(help.stdout.contains("\n  \(option) "), "help \(command): \(option)") }
        }
        let explain = try await sandbox.run(["explain", "--help"])
        #expect(explain.stdout.contains("USAGE: codable-defaults explain FILE KEY [OPTIONS]"))
        #expect(explain.stdout.contains("* default<TAB>(none)"))
        let update = try await sandbox.run(["help", "update"])
        #expect(!update.stdout.contains("--env-prefix"))
    }
}

/// The layer files of a test, in its sandbox's `work/`: a fallback file, a directory of plain values and a
/// directory of secrets, with absolute paths.
private struct LayerFiles {
    /// The secret's bytes, searched for in every output.
    static let secret = "s3cr3t-\(UUID().uuidString)"

    let store: String
    let fallback: String
    let directory: String
    let secrets: String
    private let sandbox: ToolSandbox

    init(_ sandbox: ToolSandbox) throws {
        self.sandbox = sandbox
        store = sandbox.work.appendingPathComponent("s.json").path
        fallback = sandbox.work.appendingPathComponent("etc.json").path
        directory = sandbox.work.appendingPathComponent("conf.d").path
        secrets = sandbox.work.appendingPathComponent("secrets").path
        try sandbox.create("etc.json", #"{"limit":20,"volume":0.5}"#)
        try sandbox.createDirectory("conf.d")
        try sandbox.create("conf.d/limit", "10\n")
        try sandbox.createDirectory("secrets")
        try sandbox.create("secrets/token", Self.secret + "\n")
        try sandbox.create("secrets/volume", "0.3\n")
    }

    /// The layer options of every layer: the environment with `prefix`, the fallback file, the secrets.
    func options(prefix: String) -> [String] {
        ["--env-prefix", prefix, "--fallback", fallback, "--secret-dir", secrets]
    }

    /// The names and bytes of the layers' files, and of every entry of their directories.
    func snapshot() throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for directory in [directory, secrets] {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                files[directory + "/" + name] = Array(
                    try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            }
        }
        files[fallback] = Array(try Data(contentsOf: URL(fileURLWithPath: fallback)))
        let others = try sandbox.workContents().filter {
            !["s.json", ".s.json.lock", ".s.json.queue", ".s.json.history", "override.json"].contains($0)
        }
        files["work/"] = Array(others.joined(separator: "\n").utf8)
        return files
    }
}
