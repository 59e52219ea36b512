import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Layers in a real process: a `codable-defaults-fixture serve` started with real environment variables, a
/// fallback file and directories, edited while it runs.
@Suite struct LayerProcessTests {
    /// A fixture serving `dir`'s store with the environment prefix `MYSERVICE_` and the given layer options.
    func serve(
        _ dir: TemporaryDirectory, environment: [String: String], options: [String] = []
    ) async throws -> ChildProcess {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let child = try ChildProcess(
            fixture, ["serve", dir.file().path, "--env-prefix", "MYSERVICE_"] + options, environment: environment)
        let ready = try #require(try await child.readLine(timeout: 30))
        #expect(ready.hasPrefix("ready "), "\(ready)")
        return child
    }

    @Test func environmentVariablesOverrideByTheDocumentedNamesAndTextRule() async throws {
        let dir = try TemporaryDirectory()
        try write("{\n  \"name\": \"stored\",\n  \"server.port\": 80\n}\n", to: dir.file())
        let child = try await serve(
            dir,
            environment: [
                "MYSERVICE_NAME": "Guest", "MYSERVICE_VOLUME": "0.9", "MYSERVICE_TAGS": #"["a","b"]"#,
                "MYSERVICE_SERVER_PORT": "8080",
            ])
        #expect(try await child.ask("checked name string") == #"value name "Guest""#)
        #expect(try await child.ask("checked volume double") == "value volume 0.9")
        #expect(try await child.ask("checked tags strings") == #"value tags ["a","b"]"#)
        #expect(try await child.ask("checked server.port int") == "value server.port 8080")
        #expect(try await child.ask("source server.port") == "source server.port environment MYSERVICE_SERVER_PORT")
        #expect(try await child.ask("quit") == "bye")
        #expect(try text(dir.file()).contains("\"name\": \"stored\""), "the stored value is kept, only shadowed")
    }

    @Test func aWrongTypedVariableIsALoudErrorNamingItAndTheDefaultOtherwise() async throws {
        let dir = try TemporaryDirectory()
        let child = try await serve(dir, environment: ["MYSERVICE_VOLUME": "loud"])
        // The error handler's line first (the failed decode is reported), then the answer: the thrown error.
        let (reported, answer) = try await askLoud(child, "checked volume double")
        #expect(reported == answer)
        #expect(answer.hasPrefix("error "), "\(answer)")
        #expect(answer.contains("decodingFailed"))
        #expect(answer.contains("environment variable MYSERVICE_VOLUME"), "\(answer)")
        #expect(try await child.ask("source volume") == "source volume environment MYSERVICE_VOLUME")
        #expect(try await child.ask("quit") == "bye")
    }

    @Test func aSetOfAnOverriddenKeyIsWrittenAndReadsKeepTheVariable() async throws {
        let dir = try TemporaryDirectory()
        let child = try await serve(dir, environment: ["MYSERVICE_VOLUME": "0.9"])
        #expect(try await child.ask("set volume 0.25") == "ok")
        #expect(try await child.ask("flush") == "ok")
        #expect(try await child.ask("read volume") == "value volume 0.9")
        #expect(try text(dir.file()).contains("\"volume\": 0.25"))
        #expect(try await child.ask("quit") == "bye")
    }

    @Test func fallbackFileAndDirectoryEditsReachARunningProcess() async throws {
        let dir = try TemporaryDirectory()
        let etc = dir.file("defaults.json")
        try write("{\"greeting\": \"hello\"}", to: etc)
        let mounted = dir.file("config")
        try FileManager.default.createDirectory(at: mounted, withIntermediateDirectories: true)
        try write("3\n", to: mounted.appendingPathComponent("retries"))
        let child = try await serve(
            dir, environment: [:], options: ["--fallback", etc.path, "--fallback-dir", mounted.path])
        #expect(try await child.ask("read greeting") == #"value greeting "hello""#)
        #expect(try await child.ask("read retries") == "value retries 3")
        #expect(try await child.ask("observe greeting") == "ok")
        #expect(try await child.ask("observe retries") == "ok")
        try write("{\"greeting\": \"hi\"}", to: etc)
        #expect(try await waitForLine(child, "changed greeting \"hi\""))
        try write("5\n", to: mounted.appendingPathComponent("retries"))
        #expect(try await waitForLine(child, "changed retries 5"))
        #expect(try await child.ask("source retries") == "source retries file \(mounted.path)/retries")
        #expect(try text(etc) == "{\"greeting\": \"hi\"}", "a layer is never written")
        #expect(try await child.ask("quit") == "bye")
    }

    @Test func aSecretDirectoryValueNeverReachesTheProcessOutput() async throws {
        let dir = try TemporaryDirectory()
        let secret = "s3cr3t-value-for-the-test"
        let secrets = dir.file("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        try write("\(secret)\n", to: secrets.appendingPathComponent("port"))
        let child = try await serve(dir, environment: [:], options: ["--secret-dir", secrets.path])
        let (reported, answer) = try await askLoud(child, "checked port int")
        #expect(answer.hasPrefix("error "), "\(answer)")
        #expect(try await child.ask("quit") == "bye")
        _ = try await child.wait(timeout: 30)
        #expect(!answer.contains(secret))
        #expect(!reported.contains(secret))
        #expect(!(try child.standardError()).contains(secret))
    }

    /// Sends a loud read that fails: returns the error handler's line and the answer.
    private func askLoud(_ child: ChildProcess, _ command: String) async throws -> (reported: String, answer: String) {
        let reported = try await child.ask(command)
        let answer = try #require(try await child.readLine(timeout: 30))
        return (reported, answer)
    }

    /// Reads lines until one equals `line` (within 10 s).
    private func waitForLine(_ child: ChildProcess, _ line: String) async throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while deadline.timeIntervalSinceNow > 0 {
            guard let next = try await child.readLine(timeout: deadline.timeIntervalSinceNow) else { return false }
            if next == line { return true }
        }
        return false
    }
}
