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

/// A fixture process on `endpoints` under `myservice/` with its local copy in `copy`: its `ready` line, and the
/// `reported` lines that came before it (the notice of opening from the copy). Used by one thread at a time: a
/// test hands it from one `onThread` call to the next, each awaited before the next starts.
private final class Service: @unchecked Sendable {
    let child: ChildProcess
    /// The `reported` lines read so far.
    private(set) var reports: [String] = []
    /// The `changed` lines read so far.
    private(set) var changes: [String] = []

    init(_ endpoints: [String], copy: String) throws {
        let path = try Fixture.locate("codable-defaults-etcd-fixture")
        child = try ChildProcess(path, [endpoints.joined(separator: ","), "myservice/", "--local-copy", copy])
        while true {
            let line = try child.readLineBlocking(timeout: 120) ?? "end of output"
            if line.hasPrefix("reported ") {
                reports.append(line)
                continue
            }
            try #require(line.hasPrefix("ready "), "\(line)")
            return
        }
    }

    /// Sends `command` and returns its answer, setting `reported` and `changed` lines aside.
    func ask(_ command: String) throws -> String {
        try child.send(command)
        while true {
            let line = try child.readLineBlocking(timeout: 120) ?? "end of output"
            if line.hasPrefix("reported ") {
                reports.append(line)
                continue
            }
            if line.hasPrefix("changed ") {
                changes.append(line)
                continue
            }
            return line
        }
    }

    /// Asks `status` until it answers `expected` (the store caught up by itself), for up to 120 s.
    func waitForStatus(_ expected: String) throws -> String {
        try waitForAnswer(to: "status", expected)
    }

    /// Asks `command` until it answers `expected` (a change the watch brings), for up to 120 s; the last answer.
    func waitForAnswer(to command: String, _ expected: String) throws -> String {
        let deadline = Date().addingTimeInterval(120)
        var answer = try ask(command)
        while answer != expected && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            answer = try ask(command)
        }
        return answer
    }
}

/// The `version` etcd gives `key` (how many times it was written since it was created), from `etcdctl get -w json`.
private func version(of key: String, _ server: EtcdServer) async throws -> Int? {
    let json = try await server.etcdctl(["get", key, "-w", "json"])
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    let kvs = object?["kvs"] as? [[String: Any]]
    return kvs?.first?["version"] as? Int
}

@Suite("Defaults on etcd with a local copy: starting and changing while the cluster is down", .needsEtcd)
struct EtcdLocalCopyTests {
    @Test func aServiceStartsOfflineKeepsChangesAcrossAKillAndEveryChangeLandsOnceWhenTheClusterReturns() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let endpoints = server.clientURLs
            let other = try await Defaults(
                etcd: endpoints.map { URL(string: $0)! }, prefix: "myservice/", saveMode: .immediate)
            let volume = Defaults.Key<Double>("volume", default: 0)
            let name = Defaults.Key<String?>("name")
            let answers = try await onThread { () throws -> [String] in
                var answers: [String] = []
                // Online: a value lands, and the copy holds it.
                let first = try Service(endpoints, copy: copy)
                answers.append(try first.ask("set volume 0.1"))
                answers.append(try first.ask("quit"))
                return answers
            }
            #expect(answers == ["ok", "bye"])
            for member in server.members { try await server.kill(member) }

            let offline = try await onThread { () throws -> [String] in
                var answers: [String] = []
                // Every member down: the service opens from its copy, says so, and takes changes.
                let service = try Service(endpoints, copy: copy)
                answers.append(service.reports.first.map { String($0.prefix(9)) } ?? "no report")
                answers.append(
                    service.reports.contains { $0.contains("serves its local copy") }
                        ? "reported" : "\(service.reports)")
                answers.append(try service.ask("get volume"))
                answers.append(try service.ask("status"))
                answers.append(try service.ask("set volume 0.5"))
                answers.append(try service.ask("set name \"offline\""))
                answers.append(try service.ask("status"))
                // Killed: nothing is flushed at exit; the changes are in the copy already.
                service.child.kill(SIGKILL)
                answers.append("\(try service.child.waitBlocking(timeout: 30))")
                // Restarted, still offline: the changes are there.
                let again = try Service(endpoints, copy: copy)
                answers.append(try again.ask("get volume"))
                answers.append(try again.ask("get name"))
                answers.append(try again.ask("status"))
                again.child.kill(SIGKILL)
                answers.append("\(try again.child.waitBlocking(timeout: 30))")
                return answers
            }
            #expect(
                offline == [
                    "reported ", "reported", "value volume 0.1", "status stale=true unsent=0", "ok", "ok",
                    "status stale=true unsent=2", "killed by signal 9", "value volume 0.5", "value name \"offline\"",
                    "status stale=true unsent=2", "killed by signal 9",
                ], "\(offline)")

            // A third run starts offline, then the cluster comes back: it sends the changes and catches up.
            let service = try await onThread { try Service(endpoints, copy: copy) }
            for member in server.members { try await server.restart(member) }
            let status = try await onThread { try service.waitForStatus("status stale=false unsent=0") }
            #expect(status == "status stale=false unsent=0")
            #expect(
                try await eventually { other[volume] == 0.5 && other[name] == "offline" }, "the other handle sees them")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.5\n")
            // Exactly once: volume was written twice in all (0.1, then 0.5), name once.
            #expect(try await version(of: "myservice/volume", server) == 2)
            #expect(try await version(of: "myservice/name", server) == 1)
            let bye = try await onThread { try service.ask("quit") }
            #expect(bye == "bye")
            let text = try String(contentsOfFile: copy, encoding: .utf8)
            #expect(text.contains("\"offline\": []"), "nothing kept any more: \(text)")
        }
    }

    @Test func aChangeAnotherWriterOvertookIsAConflictEtcdsValueIsKeptAndTheOthersLand() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let endpoints = server.clientURLs
            _ = try await server.etcdctl(["put", "myservice/theme", "\"light\""])
            _ = try await server.etcdctl(["put", "myservice/volume", "0.1"])
            try await onThread {
                let service = try Service(endpoints, copy: copy)
                _ = try service.ask("quit")
            }
            for member in server.members { try await server.kill(member) }
            let kept = try await onThread { () throws -> [String] in
                let service = try Service(endpoints, copy: copy)
                let answers = [try service.ask("set theme \"dark\""), try service.ask("set volume 0.9")]
                service.child.kill(SIGKILL)
                _ = try service.child.waitBlocking(timeout: 30)
                return answers
            }
            #expect(kept == ["ok", "ok"])
            // The cluster is back, and another writer changes theme before the service returns.
            for member in server.members { try await server.restart(member) }
            _ = try await server.etcdctl(["put", "myservice/theme", "\"solarized\""])
            let (reports, answers) = try await onThread { () throws -> ([String], [String]) in
                let service = try Service(endpoints, copy: copy)
                let answers = [try service.ask("get theme"), try service.ask("get volume"), try service.ask("status")]
                _ = try service.ask("quit")
                return (service.reports, answers)
            }
            #expect(answers == ["value theme \"solarized\"", "value volume 0.9", "status stale=false unsent=0"])
            let conflict = try #require(reports.first { $0.contains("\"conflict\"") }, "\(reports)")
            #expect(conflict.contains(#"\"theme\""#) || conflict.contains("\"key\":\"theme\""), "\(conflict)")
            #expect(conflict.contains("dark") && conflict.contains("solarized"), "both values: \(conflict)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/theme"]) == "\"solarized\"\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.9\n")
        }
    }

    @Test func aServiceThatWaitedThroughACompactionCatchesUpAndTellsItsObservers() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let endpoints = server.clientURLs
            _ = try await server.etcdctl(["put", "myservice/theme", "\"light\""])
            try await onThread {
                let service = try Service(endpoints, copy: copy)
                _ = try service.ask("quit")
            }
            for member in server.members { try await server.kill(member) }
            let service = try await onThread { () throws -> Service in
                let service = try Service(endpoints, copy: copy)
                #expect(try service.ask("observe theme") == "ok")
                #expect(try service.ask("set volume 0.7") == "ok")
                return service
            }
            // Meanwhile (the service still offline, as its backoff goes), others write and etcd compacts.
            for member in server.members { try await server.restart(member) }
            for index in 0..<5 { _ = try await server.etcdctl(["put", "myservice/filler", "\(index)"]) }
            _ = try await server.etcdctl(["put", "myservice/theme", "\"dark\""])
            let revision = try await server.etcdctl(["get", "myservice/theme", "-w", "json"])
            let header = try JSONSerialization.jsonObject(with: Data(revision.utf8)) as? [String: Any]
            let current = try #require((header?["header"] as? [String: Any])?["revision"] as? Int)
            _ = try await server.etcdctl(["compact", "\(current)"])
            let (status, theme, volume, filler) = try await onThread { () throws -> (String, String, String, String) in
                let status = try service.waitForStatus("status stale=false unsent=0")
                return (
                    status, try service.ask("get theme"), try service.ask("get volume"), try service.ask("get filler")
                )
            }
            #expect(status == "status stale=false unsent=0")
            #expect(theme == "value theme \"dark\"")
            #expect(volume == "value volume 0.7")
            #expect(filler == "value filler 4")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.7\n")
            // The observer was told of theme's change when the service caught up.
            let told = try await onThread { () throws -> [String] in
                _ = try service.ask("quit")
                return service.changes
            }
            #expect(told.contains("changed theme \"dark\""), "\(told)")
        }
    }

    @Test func changesResentFromACopyRewrittenTooLateAreNeitherWrittenTwiceNorConflicts() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let saved = directory.file("saved.json").path
            let endpoints = server.clientURLs
            _ = try await server.etcdctl(["put", "myservice/theme", "\"light\""])
            _ = try await server.etcdctl(["put", "myservice/gone", "1"])
            try await onThread {
                let service = try Service(endpoints, copy: copy)
                _ = try service.ask("quit")
            }
            for member in server.members { try await server.kill(member) }
            let kept = try await onThread { () throws -> [String] in
                let service = try Service(endpoints, copy: copy)
                let answers = [
                    try service.ask("set theme \"dark\""), try service.ask("remove gone"),
                    try service.ask("set fresh 2"), try service.ask("status"),
                ]
                service.child.kill(SIGKILL)
                _ = try service.child.waitBlocking(timeout: 30)
                // The copy with the changes not sent: what a process killed between sending them and rewriting
                // its copy leaves.
                try FileManager.default.copyItem(atPath: copy, toPath: saved)
                return answers
            }
            #expect(kept == ["ok", "ok", "ok", "status stale=true unsent=3"])
            for member in server.members { try await server.restart(member) }
            let sent = try await onThread { () throws -> String in
                let service = try Service(endpoints, copy: copy)
                let status = try service.ask("status")
                _ = try service.ask("quit")
                _ = try service.child.waitBlocking(timeout: 30)
                return rename(saved, copy) == 0 ? status : "rename: \(String(cString: strerror(errno)))"
            }
            #expect(sent == "status stale=false unsent=0")
            let (reports, answers) = try await onThread { () throws -> ([String], [String]) in
                let service = try Service(endpoints, copy: copy)
                let answers = [
                    try service.ask("status"), try service.ask("get theme"), try service.ask("get gone"),
                    try service.ask("get fresh"),
                ]
                _ = try service.ask("quit")
                return (service.reports, answers)
            }
            #expect(!reports.contains { $0.contains("\"conflict\"") }, "\(reports)")
            #expect(
                answers == ["status stale=false unsent=0", "value theme \"dark\"", "none gone", "value fresh 2"])
            #expect(try await version(of: "myservice/theme", server) == 2)
            #expect(try await version(of: "myservice/fresh", server) == 1)
        }
    }

    @Test func aChangeKeptOfAKeyAnotherWriterRemovedIsAConflictSayingSo() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let endpoints = server.clientURLs
            _ = try await server.etcdctl(["put", "myservice/theme", "\"light\""])
            try await onThread {
                let service = try Service(endpoints, copy: copy)
                _ = try service.ask("quit")
            }
            for member in server.members { try await server.kill(member) }
            let kept = try await onThread { () throws -> String in
                let service = try Service(endpoints, copy: copy)
                let answer = try service.ask("set theme \"dark\"")
                service.child.kill(SIGKILL)
                _ = try service.child.waitBlocking(timeout: 30)
                return answer
            }
            #expect(kept == "ok")
            for member in server.members { try await server.restart(member) }
            _ = try await server.etcdctl(["del", "myservice/theme"])
            let (reports, answers) = try await onThread { () throws -> ([String], [String]) in
                let service = try Service(endpoints, copy: copy)
                let answers = [try service.ask("get theme"), try service.ask("status")]
                _ = try service.ask("quit")
                return (service.reports, answers)
            }
            #expect(answers == ["none theme", "status stale=false unsent=0"])
            let conflict = try #require(reports.first { $0.contains("\"conflict\"") }, "\(reports)")
            #expect(conflict.contains("removed the key"), "\(conflict)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/theme"]) == "")
        }
    }

    /// Puts 30 values in `server` (its revision is then 31), then runs a service on a local copy in `directory`
    /// once, with `commands`; returns the copy's path.
    private func copyAfterThirtyRevisions(
        of server: EtcdServer, in directory: TemporaryDirectory, running commands: [String] = []
    ) async throws -> String {
        let copy = directory.file("copy.json").path
        for index in 0..<30 { _ = try await server.etcdctl(["put", "myservice/filler", "\(index)"]) }
        let endpoints = server.clientURLs
        try await onThread {
            let service = try Service(endpoints, copy: copy)
            for command in commands { _ = try service.ask(command) }
            _ = try service.ask("quit")
        }
        return copy
    }

    @Test func aServiceOnACopyNewerThanARestoredClusterCatchesUp() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let endpoints = server.clientURLs
            let copy = try await copyAfterThirtyRevisions(of: server, in: directory)
            // The cluster comes back from an older state (here, none): its revisions start again below the copy's.
            try await server.killAndWipe()
            let service = try await onThread { try Service(endpoints, copy: copy) }
            for member in server.members { try await server.restart(member) }
            _ = try await server.etcdctl(["put", "myservice/theme", "\"restored\""])
            let status = try await onThread { try service.waitForStatus("status stale=false unsent=0") }
            #expect(status == "status stale=false unsent=0")
            // The catch-up may read the cluster before the put: the value then comes through the watch.
            let theme = try await onThread { try service.waitForAnswer(to: "get theme", "value theme \"restored\"") }
            #expect(theme == "value theme \"restored\"")
            // The watch follows the restored cluster's revisions: a change made now comes.
            _ = try await server.etcdctl(["put", "myservice/theme", "\"later\""])
            let later = try await onThread { try service.waitForAnswer(to: "get theme", "value theme \"later\"") }
            #expect(later == "value theme \"later\"")
            _ = try await onThread { try service.ask("quit") }
        }
    }

    /// A store opened stale from a copy whose own last save is newer than what the copy reflects of the rest (a
    /// process killed before its watch told it of the other changes) catches up with a cluster restored from a
    /// backup taken in between: it takes the cluster's values once, ends staleness, and follows its revisions.
    @Test func aServiceCatchesUpWithAClusterRestoredBetweenItsCopyAndItsLastSave() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let endpoints = server.clientURLs
            let copy = try await copyAfterThirtyRevisions(
                of: server, in: directory, running: (0..<6).map { "set theme \"mine-\($0)\"" } + ["flush"])
            // The copy reflects the cluster up to revision 31 only; the service's last save is later (37).
            let text = try String(contentsOfFile: copy, encoding: .utf8)
            let edited = try #require(
                text.range(of: #""revision": \d+"#, options: .regularExpression).map {
                    text.replacingCharacters(in: $0, with: #""revision": 31"#)
                })
            try edited.write(toFile: copy, atomically: true, encoding: .utf8)
            // The restored cluster: its revision between the copy's (31) and the service's last save (37), before
            // the service, opened while it is down, first reaches it.
            try await server.killAndWipe()
            for member in server.members { try await server.restart(member) }
            for index in 0..<33 { _ = try await server.etcdctl(["put", "myservice/filler", "\(index)"]) }
            for member in server.members { try await server.kill(member) }
            let service = try await onThread { try Service(endpoints, copy: copy) }
            for member in server.members { try await server.restart(member) }
            let status = try await onThread { try service.waitForStatus("status stale=false unsent=0") }
            #expect(status == "status stale=false unsent=0")
            #expect(try await onThread { try service.ask("get theme") } == "none theme")
            _ = try await server.etcdctl(["put", "myservice/theme", "\"after\""])
            let after = try await onThread { try service.waitForAnswer(to: "get theme", "value theme \"after\"") }
            #expect(after == "value theme \"after\"")
            _ = try await onThread { try service.ask("quit") }
        }
    }

    @Test func aServiceOpeningWithAKeptChangeEtcdRefusesServesItAndSendsTheOthers() async throws {
        try await EtcdServer.with(arguments: ["--max-request-bytes", "20000"]) { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json").path
            let endpoints = server.clientURLs
            try await onThread {
                let service = try Service(endpoints, copy: copy)
                _ = try service.ask("quit")
            }
            for member in server.members { try await server.kill(member) }
            let huge = "\"" + String(repeating: "x", count: 30_000) + "\""
            let kept = try await onThread { () throws -> [String] in
                let service = try Service(endpoints, copy: copy)
                let answers = [try service.ask("set huge \(huge)"), try service.ask("set small 1")]
                service.child.kill(SIGKILL)
                _ = try service.child.waitBlocking(timeout: 30)
                return answers
            }
            #expect(kept == ["ok", "ok"])
            for member in server.members { try await server.restart(member) }
            let (reports, answers) = try await onThread { () throws -> ([String], [String]) in
                let service = try Service(endpoints, copy: copy)
                let answers = [
                    try service.ask("status"), try service.ask("get huge") == "value huge \(huge)" ? "kept" : "not",
                    try service.ask("get small"),
                ]
                service.child.kill(SIGKILL)
                _ = try service.child.waitBlocking(timeout: 30)
                return (service.reports, answers)
            }
            #expect(answers == ["status stale=false unsent=1", "kept", "value small 1"])
            #expect(reports.contains { $0.contains("\\\"huge\\\"") }, "the refusal is reported: \(reports)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/small"]) == "1\n")
        }
    }

    @Test func aSecondStoreOnTheSameCopyIsRefusedAndACopyOfAnotherPrefixIsLeftAsItIs() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json")
            let urls = server.clientURLs.map { URL(string: $0)! }
            let first = try await Defaults(etcd: urls, prefix: "myservice/", localCopy: copy)
            let second = await #expect(throws: DefaultsError.self) {
                _ = try await Defaults(etcd: urls, prefix: "myservice/", localCopy: copy)
            }
            #expect(second?.code == .lockTimeout && second?.path == copy.path, "\(String(describing: second))")
            withExtendedLifetime(first) {}
            let other = directory.file("other.json")
            try Data(
                #"{"codableDefaultsEtcdCopy": 1, "prefix": "else/", "revision": 1, "members": [], "offline": []}"#.utf8
            ).write(to: other)
            let before = try Data(contentsOf: other)
            let refused = await #expect(throws: DefaultsError.self) {
                _ = try await Defaults(etcd: urls, prefix: "myservice/", localCopy: other)
            }
            #expect(refused?.code == .decodingFailed && refused?.message.contains("\"else/\"") == true)
            #expect(try Data(contentsOf: other) == before, "a copy it cannot take is left as it is")
        }
    }
}
