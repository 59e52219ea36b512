import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `codable-defaults` with `arguments` to its end; returns its exit status and output lines.
private func tool(_ arguments: [String]) async throws -> (
    status: CodableDefaultsTestSupport.ExitStatus, output: [String]
) {
    let path = try Fixture.locate("codable-defaults")
    return try await onThread { try runCommandBlocking([path] + arguments) }
}

/// Runs the built `codable-defaults` with `arguments` to its end; returns its exit status, output lines and
/// standard error.
private func toolWithErrors(_ arguments: [String]) async throws -> (
    status: CodableDefaultsTestSupport.ExitStatus, output: [String], errors: String
) {
    let path = try Fixture.locate("codable-defaults")
    return try await onThread {
        let child = try ChildProcess(path, arguments)
        child.closeInput()
        let output = try child.readToEndBlocking(timeout: 30)
        return (try child.waitBlocking(timeout: 30), output, try child.standardError())
    }
}

@Suite("codable-defaults --etcd: the tool on a store in a real etcd")
struct EtcdCommandLineToolTests {
    @Test(.needsEtcd) func historyAndUndoWorkOnAPrefix() async throws {
        try await EtcdServer.with { server in
            let store = ["--etcd", server.clientURLs.joined(separator: ","), "--prefix", "myservice/"]
            #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))
            #expect(try await tool(["write"] + store + ["volume", "0.2"]).status == .exited(0))
            let history = try await tool(["history"] + store + ["--json"])
            #expect(history.status == .exited(0))
            #expect(history.output.count == 2, "\(history.output)")
            #expect(history.output.first?.contains(#""changes":{"volume":{"old":0.8,"new":0.2}}"#) == true)

            let before = try await server.etcdctl(["get", "--print-value-only", "myservice/volume"])
            let dryRun = try await tool(["undo"] + store + ["--dry-run"])
            #expect(dryRun == (.exited(0), ["~ volume\t0.2 → 0.8"]))
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == before)
            #expect(try await tool(["undo"] + store) == (.exited(0), ["~ volume\t0.2 → 0.8"]))
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.8\n")
            #expect(try await tool(["undo"] + store + ["volume", "--to", "0"]) == (.exited(0), ["- volume\t0.8"]))
            #expect(try await tool(["keys"] + store) == (.exited(0), []))
            #expect(try await tool(["history"] + store + ["--json"]).output.count == 4)
        }
    }

    @Test(.needsEtcd) func theSchemaKeptUnderThePrefixChecksTheToolsWritesAndCheckAndDescribeUseIt() async throws {
        try await EtcdServer.with { server in
            let endpoints = server.clientURLs.joined(separator: ",")
            let store = ["--etcd", endpoints, "--prefix", "myservice/"]
            let program = try await Defaults(
                etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "myservice/", saveMode: .immediate)
            try program.publishSchema(for: SchemaKeys.keys, title: "myservice")
            #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))

            let refused = try await toolWithErrors(["write"] + store + ["volume", "1.5"])
            #expect(refused.status == .exited(2), "\(refused.errors)")
            #expect(refused.errors.contains(#"/volume: 1.5 must be at most 1 (schema keyword "maximum")"#))
            #expect(refused.errors.contains("myservice/\\xFFschema refuses the change"), "\(refused.errors)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.8\n")

            // Another writer (etcdctl) stores what the schema refuses: check names it, the program reads its
            // default.
            _ = try await server.etcdctl(["put", "myservice/theme", "\"blue\""])
            _ = try await server.etcdctl(["put", "myservice/extra", "1"])
            let check = try await toolWithErrors(["check"] + store)
            #expect(check.status == .exited(4))
            #expect(check.errors.contains(#"/theme: "blue" must be one of "light", "dark" (schema keyword "enum")"#))
            #expect(!check.errors.contains("extra"), "a key the schema does not list is allowed without --strict")
            let strict = try await toolWithErrors(["check"] + store + ["--strict"])
            #expect(strict.status == .exited(4))
            #expect(strict.errors.contains(#"key "extra" is not in the schema"#), "\(strict.errors)")

            let describe = try await tool(["describe"] + store + ["volume"])
            #expect(describe.status == .exited(0))
            #expect(
                describe.output == [
                    "volume", "  type: number", "  default: 0.5", "  rules: at least 0, at most 1",
                    "  description: Playback volume.",
                    "  value: 0.8 (stored etcd://\(server.clientURLs[0].dropFirst(7))/myservice/)",
                ], "\(describe.output)")
            // A schema file given on the command line wins over the prefix's.
            let directory = try TemporaryDirectory()
            let file = directory.url.appendingPathComponent("open.schema.json")
            try Data(#"{"type": "object"}"#.utf8).write(to: file)
            #expect(try await tool(["write"] + store + ["volume", "1.5", "--schema", file.path]).status == .exited(0))
        }
    }

    @Test(.needsEtcd) func withALocalCopyAReadAnswersOfflineAndAWriteIsKeptAndSentByTheNextCommand() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let store = [
                "--etcd", server.clientURLs.joined(separator: ","), "--prefix", "myservice/", "--etcd-cache", copy,
            ]
            #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))
            for member in server.members { try await server.kill(member) }

            let read = try await toolWithErrors(["read"] + store + ["volume"])
            #expect(read.status == .exited(0) && read.output == ["0.8"], "\(read.errors)")
            #expect(read.errors.contains("note:") && read.errors.contains("serves its local copy \(copy)"))
            #expect(read.errors.contains("stale"), "\(read.errors)")
            let keys = try await toolWithErrors(["keys"] + store)
            #expect(keys.status == .exited(0) && keys.output == ["volume"], "\(keys.errors)")
            let write = try await toolWithErrors(["write"] + store + ["volume", "0.3"])
            #expect(write.status == .exited(0), "\(write.errors)")
            #expect(write.errors.contains("the change is kept in the local copy \(copy)"), "\(write.errors)")
            #expect(try await tool(["read"] + store + ["volume"]) == (.exited(0), ["0.3"]), "the copy holds it")
            // Without the copy, the store cannot open.
            let without = Array(store.dropLast(2))
            #expect(try await tool(["read"] + without + ["volume"]).status == .exited(4))

            for member in server.members { try await server.restart(member) }
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.8\n")
            // The next command that reaches the cluster sends it.
            let online = try await toolWithErrors(["read"] + store + ["volume"])
            #expect(online.status == .exited(0) && online.output == ["0.3"], "\(online.errors)")
            #expect(!online.errors.contains("stale"), "\(online.errors)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.3\n")
        }
    }

    /// A conflict note about a key the prefix's schema marks secret quotes neither value.
    @Test(.needsEtcd) func aConflictOfAKeyTheSchemaMarksSecretQuotesNoValue() async throws {
        try await EtcdServer.with { server in
            let urls = server.clientURLs.map { URL(string: $0)! }
            let publisher = try await Defaults(etcd: urls, prefix: "myservice/")
            try publisher.publishSchema(for: [Defaults.Key<String?>("tok", secret: true)])
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let store = [
                "--etcd", server.clientURLs.joined(separator: ","), "--prefix", "myservice/", "--etcd-cache", copy,
            ]
            #expect(try await tool(["write"] + store + ["tok", "--string", "first-s3cret"]).status == .exited(0))
            for member in server.members { try await server.kill(member) }
            let kept = try await toolWithErrors(["write"] + store + ["tok", "--string", "mine-s3cret"])
            #expect(kept.status == .exited(0), "\(kept.errors)")
            for member in server.members { try await server.restart(member) }
            _ = try await server.etcdctl(["put", "myservice/tok", #""theirs-s3cret""#])
            let next = try await toolWithErrors(["keys"] + store)
            #expect(next.errors.contains("conflict") || next.errors.contains("another writer"), "\(next.errors)")
            #expect(!next.errors.contains("s3cret") && !kept.errors.contains("s3cret"), "\(next.errors)")
        }
    }

    /// Text that is not JSON under a key the prefix's schema marks secret: every command that reports it names
    /// the key and the place, and quotes none of the text (the parser's words may quote a character of it).
    @Test(.needsEtcd) func aSecretKeysTextThatIsNotJSONIsReportedWithoutQuotingIt() async throws {
        try await EtcdServer.with { server in
            let urls = server.clientURLs.map { URL(string: $0)! }
            let publisher = try await Defaults(etcd: urls, prefix: "myservice/")
            try publisher.publishSchema(for: [Defaults.Key<String?>("tok", secret: true)])
            try await server.etcdctl(["put", "myservice/tok", "s3cret not json"])
            let store = ["--etcd", server.clientURLs.joined(separator: ","), "--prefix", "myservice/"]
            let directory = try TemporaryDirectory()
            let other = directory.file("other.json")
            try Data("{}\n".utf8).write(to: other)
            let commands = [
                ["read"] + store, ["check"] + store, ["diff"] + store + [other.path],
                ["write"] + store + ["tok", "-array-add", "x", "--dry-run"], ["edit"] + store + ["tok"],
            ]
            for command in commands {
                let run = try await toolWithErrors(command)
                #expect(run.status == .exited(4), "\(command): \(run.errors)")
                #expect(run.errors.contains("myservice/tok") && run.errors.contains("is not JSON"), "\(run.errors)")
                #expect(run.errors.contains("details withheld"), "\(command): \(run.errors)")
            }
        }
    }

    @Test(.needsEtcd) func writeReadKeysAndWatchWorkOnAPrefix() async throws {
        try await EtcdServer.with { server in
            let store = ["--etcd", server.clientURLs.joined(separator: ","), "--prefix", "myservice/"]
            #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))
            #expect(try await tool(["write"] + store + ["name", "--string", "A"]).status == .exited(0))
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.8\n")
            #expect(try await tool(["read"] + store + ["volume"]) == (.exited(0), ["0.8"]))
            #expect(
                try await tool(["read"] + store) == (.exited(0), ["{", "  \"name\": \"A\",", "  \"volume\": 0.8", "}"]))
            #expect(try await tool(["keys"] + store) == (.exited(0), ["name", "volume"]))
            #expect(try await tool(["read"] + store + ["missing"]).status == .exited(3))

            let path = try Fixture.locate("codable-defaults")
            let lines = try await onThread { () throws -> [String] in
                let watch = try ChildProcess(path, ["watch"] + store + ["volume", "--initial"])
                var lines = [try watch.readLineBlocking(timeout: 30) ?? "end"]
                // The watch started from the revision it read: a change made now is not missed.
                let client = try ChildProcess(path, ["write"] + store + ["volume", "0.25"])
                lines.append("\(try client.waitBlocking(timeout: 30))")
                lines.append(try watch.readLineBlocking(timeout: 30) ?? "end")
                watch.kill(SIGTERM)
                lines.append("\(try watch.waitBlocking(timeout: 30))")
                return lines
            }
            #expect(lines == ["volume\t0.8", "exit status 0", "volume\t0.25", "exit status 0"])
        }
    }

    @Test(.needsEtcd) func diffComparesAPrefixWithAFileAndADryRunLeavesEtcdUnchanged() async throws {
        try await EtcdServer.with { server in
            let store = ["--etcd", server.clientURL, "--prefix", "myservice/"]
            #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))
            #expect(try await tool(["write"] + store + ["name", "--string", "A"]).status == .exited(0))
            let directory = try TemporaryDirectory()
            try write(#"{"name":"A","theme":"dark","volume":0.9}"#, to: directory.file("other.json"))
            try write(#"{"volume":0.80,"name":"A"}"#, to: directory.file("same.json"))
            #expect(
                try await tool(["diff"] + store + [directory.file("other.json").path])
                    == (.exited(1), ["+ theme\t\"dark\"", "~ volume\t0.8 → 0.9"]))
            #expect(try await tool(["diff"] + store + [directory.file("same.json").path]) == (.exited(0), []))

            // A dry run prints the change and leaves etcd as it was, -array-add (an update) included.
            #expect(
                try await tool(["write", "--dry-run"] + store + ["volume", "0.5"]) == (
                    .exited(0), ["~ volume\t0.8 → 0.5"]
                ))
            #expect(
                try await tool(["write", "--dry-run"] + store + ["recent", "-array-add", "a.txt"])
                    == (.exited(0), ["+ recent\t[\"a.txt\"]"]))
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.8\n")
            // The members, and the history's record key (`myservice/`, the byte 0xFF, `history`).
            #expect(
                try await server.etcdctl(["get", "--prefix", "--keys-only", "myservice/"])
                    == "myservice/name\n\nmyservice/volume\n\nmyservice/\u{FFFD}history\n\n")
            // The real run writes what the dry run printed.
            #expect(try await tool(["write"] + store + ["volume", "0.5"]).status == .exited(0))
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.5\n")
        }
    }

    @Test(.needsEtcd) func editAppliesTheChangedKeysOfAPrefixAndKeepsAnotherWritersValue() async throws {
        try await EtcdServer.with { server in
            let store = ["--etcd", server.clientURL, "--prefix", "myservice/"]
            for (key, value) in [("limit", "1"), ("name", "\"A\""), ("volume", "0.8")] {
                #expect(try await tool(["write"] + store + [key, value]).status == .exited(0))
            }
            // The editor: another writer changes limit meanwhile; the edit changes limit and volume, removes
            // name and adds theme.
            let directory = try TemporaryDirectory()
            let path = try Fixture.locate("codable-defaults")
            let script = directory.file("editor.sh")
            try write(
                """
                '\(path)' write --etcd '\(server.clientURL)' --prefix myservice/ limit 2 >/dev/null || exit 7
                printf '{"limit": 5, "theme": "dark", "volume": 0.5}' > "$1"

                """, to: script)
            let (status, output, errors) = try await onThread {
                let child = try ChildProcess(
                    path, ["edit"] + store, environment: ["VISUAL": "", "EDITOR": "sh '\(script.path)'"])
                child.closeInput()
                let output = try child.readToEndBlocking(timeout: 30)
                return (try child.waitBlocking(timeout: 30), output, try child.standardError())
            }
            #expect(status == .exited(1), "\(errors)")
            #expect(output == ["- name\t\"A\"", "+ theme\t\"dark\"", "~ volume\t0.8 → 0.5"])
            #expect(errors.contains(#"key "limit": conflict: another writer changed it to 2"#), "\(errors)")
            #expect(
                try await tool(["read"] + store)
                    == (.exited(0), ["{", "  \"limit\": 2,", "  \"theme\": \"dark\",", "  \"volume\": 0.5", "}"]))
        }
    }

    @Test(.needsEtcd) func anEtcdUserWithAPasswordFileOpensAClusterWithAuthenticationAndThePasswordIsNeverPrinted()
        async throws
    {
        try await EtcdServer.with { server in
            try await server.etcdctl(["user", "add", "root:s3cret-pass"])
            try await server.etcdctl(["auth", "enable"])
            let directory = try TemporaryDirectory()
            try write("s3cret-pass\n", to: directory.file("password"))
            try write("wr0ng-pass\n", to: directory.file("wrong"))
            let store = ["--etcd", server.clientURL, "--prefix", "myservice/"]
            let user = ["--etcd-user", "root", "--etcd-password-file", directory.file("password").path]

            #expect(try await tool(["write"] + store + user + ["volume", "0.8"]).status == .exited(0))
            let stored = try await server.etcdctl([
                "--user", "root:s3cret-pass", "get", "--print-value-only", "myservice/volume",
            ])
            #expect(stored == "0.8\n")
            #expect(try await tool(["read"] + store + user + ["volume"]) == (.exited(0), ["0.8"]))
            #expect(try await tool(["keys"] + store + user) == (.exited(0), ["volume"]))
            // A file written on Windows ends its line with CRLF: dropped whole.
            try write("s3cret-pass\r\n", to: directory.file("crlf"))
            let crlf = ["--etcd-user", "root", "--etcd-password-file", directory.file("crlf").path]
            #expect(try await tool(["read"] + store + crlf + ["volume"]) == (.exited(0), ["0.8"]))
            // A directory given as the file: a clear error.
            let folder = try await toolWithErrors(
                ["read"] + store + ["--etcd-user", "root", "--etcd-password-file", directory.path, "volume"])
            #expect(folder.status == .exited(4))
            #expect(folder.errors.contains("a directory, not a file"), "\(folder.errors)")
            // A pipe, as a shell's process substitution gives: read to its end.
            let piped = try await onThread { () throws -> CodableDefaultsTestSupport.ExitStatus in
                let path = try Fixture.locate("codable-defaults")
                let arguments = ["--etcd-user", "root", "--etcd-password-file", "/dev/stdin", "volume"]
                let child = try ChildProcess(path, ["read"] + store + arguments)
                try child.send("s3cret-pass")
                child.closeInput()
                _ = try child.readToEndBlocking(timeout: 30)
                return try child.waitBlocking(timeout: 30)
            }
            #expect(piped == .exited(0))

            // Refused: no user, a wrong password, a password file that is not there. Each names what went wrong
            // and prints no password.
            let anonymous = try await toolWithErrors(["read"] + store + ["volume"])
            #expect(anonymous.status == .exited(4))  // The store cannot be read.
            #expect(anonymous.errors.contains("user name is empty"), "\(anonymous.errors)")
            let wrong = try await toolWithErrors(
                ["read"] + store + [
                    "--etcd-user", "root", "--etcd-password-file", directory.file("wrong").path, "volume",
                ])
            #expect(wrong.status == .exited(4))
            #expect(wrong.errors.contains("authentication failed"), "\(wrong.errors)")
            let missing = directory.file("missing").path
            let absent = try await toolWithErrors(
                ["read"] + store + ["--etcd-user", "root", "--etcd-password-file", missing, "volume"])
            #expect(absent.status == .exited(4))
            #expect(absent.errors.contains(missing), "\(absent.errors)")
            for run in [anonymous, wrong, absent] {
                #expect(run.output.isEmpty)
                #expect(!run.errors.contains("s3cret") && !run.errors.contains("wr0ng"), "\(run.errors)")
            }
        }
    }

    @Test(.needsEtcd) func readingAKeyWhoseTextIsNotJSONSaysSoInsteadOfNoValue() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["put", "myservice/bad", "not json"])
            let store = ["--etcd", server.clientURL, "--prefix", "myservice/"]
            let run = try await toolWithErrors(["read"] + store + ["bad"])
            #expect(run.status == .exited(4))
            #expect(run.output.isEmpty)
            #expect(run.errors.contains("myservice/bad") && run.errors.contains("is not JSON"), "\(run.errors)")
            #expect(run.errors.components(separatedBy: "is not JSON").count == 2, "said once: \(run.errors)")
            #expect(try await tool(["read"] + store + ["missing"]).status == .exited(3))
        }
    }

    /// Text that is not JSON is a value the tool cannot read: an update that needs it refuses (exit 4) and
    /// keeps it, the whole store's read names it and exits with 4, and a watch does not call it a deletion.
    @Test(.needsEtcd) func aValueThatIsNotJSONIsNeverWrittenOverNorTakenForAbsent() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["put", "c1/list", "a.txt,b.txt"])
            try await server.etcdctl(["put", "c1/map", "not{json"])
            try await server.etcdctl(["put", "c1/good", "1"])
            let store = ["--etcd", server.clientURL, "--prefix", "c1/"]

            let arrayAdd = try await toolWithErrors(["write"] + store + ["list", "-array-add", "c.txt"])
            #expect(arrayAdd.status == .exited(4), "\(arrayAdd.errors)")
            #expect(
                arrayAdd.errors.contains("c1/list") && arrayAdd.errors.contains("is not JSON"), "\(arrayAdd.errors)")
            let dictAdd = try await toolWithErrors(["write"] + store + ["map", "-dict-add", "k", "v"])
            #expect(dictAdd.status == .exited(4), "\(dictAdd.errors)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "c1/list"]) == "a.txt,b.txt\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "c1/map"]) == "not{json\n")

            let whole = try await toolWithErrors(["read"] + store)
            #expect(whole.status == .exited(4))
            #expect(whole.output == ["{", "  \"good\": 1", "}"])
            #expect(whole.errors.contains("c1/list") && whole.errors.contains("c1/map"), "\(whole.errors)")

            let path = try Fixture.locate("codable-defaults")
            let lines = try await onThread { () throws -> (out: [String], errors: String) in
                let watch = try ChildProcess(path, ["watch"] + store + ["--initial"])
                var lines = [try watch.readLineBlocking(timeout: 30) ?? "end"]
                let writer = try ChildProcess(
                    EtcdServer.etcdctlPath(), ["--endpoints", server.clientURL, "put", "c1/good", "oops{"],
                    environment: ["ETCDCTL_API": "3"])
                lines.append("\(try writer.waitBlocking(timeout: 30))")
                // The watch has taken in the unreadable text once it says so (before the next write, which
                // could otherwise arrive in the same batch of changes).
                let deadline = Date().addingTimeInterval(30)
                while try !watch.standardError().contains("is not JSON") && Date() < deadline {
                    usleep(10_000)
                }
                let good = try ChildProcess(path, ["write"] + store + ["good", "2"])
                lines.append("\(try good.waitBlocking(timeout: 30))")
                lines.append(try watch.readLineBlocking(timeout: 30) ?? "end")
                watch.kill(SIGTERM)
                lines.append("\(try watch.waitBlocking(timeout: 30))")
                return (lines, try watch.standardError())
            }
            // The unreadable write came first; the next line is the later write of "good", not "good (deleted)".
            #expect(lines.out == ["good\t1", "exit status 0", "exit status 0", "good\t2", "exit status 0"])
            #expect(lines.errors.contains("c1/good") && lines.errors.contains("is not JSON"), "\(lines.errors)")
        }
    }

    /// A plain-http endpoint that answers with a redirect (307, to another port) is an error naming the redirect:
    /// no request reaches where it points, with the user's token or without.
    @Test func aRedirectOfAPlainHTTPEndpointIsNeverFollowed() async throws {
        let elsewhere = try TestTCPServer(.answer(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".utf8)))
        let redirect =
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: \(elsewhere.url)/v3/kv/range\r\nContent-Length: 0\r\n"
            + "Connection: close\r\n\r\n"
        let server = try TestTCPServer(.answer(Array(redirect.utf8)))
        defer { withExtendedLifetime((server, elsewhere)) {} }  // They close their listeners when they go away.
        let run = try await toolWithErrors(["read", "--etcd", server.url, "--prefix", "p/", "v"])
        #expect(run.status == .exited(4), "\(run.errors)")
        #expect(run.errors.contains("a redirect, which is never followed"), "\(run.errors)")
        #expect(!server.requests.isEmpty)
        #expect(elsewhere.requests.isEmpty, "\(elsewhere.requests)")
    }

    /// A gateway that answers a revision etcd never gives (−2⁶³, whose `- 1` would trap) is refused, naming what
    /// it said: `history` and `undo --dry-run` exit with 4 instead of stopping on a trap (exit 132).
    @Test(arguments: [["history"], ["undo", "--dry-run"]])
    func aRevisionEtcdNeverGivesIsAnErrorNotATrap(_ command: [String]) async throws {
        let body =
            #"{"header":{"revision":"7"},"kvs":[{"key":"cC92","value":"MQ==","#
            + #""mod_revision":"-9223372036854775808"}]}"#
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n" + body
        let server = try TestTCPServer(.answer(Array(answer.utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let run = try await toolWithErrors([command[0], "--etcd", server.url, "--prefix", "p/"] + command.dropFirst())
        #expect(run.status == .exited(4), "\(run.errors)")
        #expect(run.errors.contains("not a revision etcd gives"), "\(run.errors)")
    }

    /// A port out of range never reaches a socket (it would wrap modulo 65536 and carry the password there):
    /// a usage error, and the server on the port it would wrap to hears nothing.
    @Test func anEtcdPortOutOfRangeIsAUsageErrorAndConnectsNowhere() async throws {
        let server = try TestTCPServer(.answer(Array("HTTP/1.0 200 OK\r\n\r\n{}".utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let directory = try TemporaryDirectory()
        let password = directory.file("pw.txt")
        try Data("s3cret\n".utf8).write(to: password)
        let run = try await toolWithErrors([
            "read", "--etcd", "http://127.0.0.1:\(server.port + 65536)", "--prefix", "p/", "v", "--etcd-user", "app",
            "--etcd-password-file", password.path,
        ])
        #expect(run.status == .exited(2), "\(run.errors)")
        #expect(run.errors.contains("not in 1...65535"), "\(run.errors)")
        #expect(!run.errors.contains("s3cret"))
        #expect(server.requests.isEmpty)
    }

    @Test func anEtcdUserNeedsAPasswordFileAndBothNeedEtcd() async throws {
        let file = ["--etcd-password-file", "/dev/null"]
        let usages = [
            ["read", "--etcd", "http://127.0.0.1:1", "--prefix", "p/", "--etcd-user", "root", "volume"],
            ["read", "--etcd", "http://127.0.0.1:1", "--prefix", "p/"] + file + ["volume"],
            ["read", "settings.json", "--etcd-user", "root"] + file + ["volume"],
            ["read", "--etcd", "http://127.0.0.1:1", "--prefix", "p/", "--etcd-user", ""] + file + ["volume"],
        ]
        for arguments in usages {
            let run = try await toolWithErrors(arguments)
            #expect(run.status == .exited(2), "\(arguments)")
            #expect(run.errors.contains("--etcd"), "\(run.errors)")
        }
    }

    @Test func aPrefixWithoutEtcdOrEtcdWithoutAPrefixIsAUsageError() async throws {
        #expect(try await tool(["read", "--prefix", "p/", "volume"]).status == .exited(2))
        #expect(try await tool(["read", "--etcd", "http://127.0.0.1:1", "volume"]).status == .exited(2))
        #expect(
            try await tool(["read", "--etcd", "http://127.0.0.1:1", "--suite", "s", "--prefix", "p/"]).status
                == .exited(2))
    }
}
