import CodableDefaultsTestSupport
import Foundation
import Testing

/// Starts `codable-defaults-etcd-fixture` on `endpoints` and `prefix`, and waits for its `ready` line.
private func startFixture(_ endpoints: [String], prefix: String = "myservice/") throws -> ChildProcess {
    let path = try Fixture.locate("codable-defaults-etcd-fixture")
    let child = try ChildProcess(path, [endpoints.joined(separator: ","), prefix])
    let ready = try child.readLineBlocking(timeout: 30)
    try #require(ready?.hasPrefix("ready ") == true, "\(ready ?? "no line")")
    return child
}

/// Asks `child` for `key` until it answers `expected`, for up to 30 s; returns its last answer.
private func askUntil(_ child: ChildProcess, _ key: String, is expected: String) throws -> String {
    let deadline = Date().addingTimeInterval(30)
    var answer = try child.askBlocking("get \(key)")
    while answer != expected && Date() < deadline {
        Thread.sleep(forTimeInterval: 0.02)
        answer = try child.askBlocking("get \(key)")
    }
    return answer
}

/// A fixture's conversation: answers to commands, with the `changed` events that came among them set aside.
private final class Conversation {
    let child: ChildProcess
    private var events: [String] = []

    init(_ child: ChildProcess) { self.child = child }

    /// Sends `command` and returns its answer (the first line that is not an event).
    func ask(_ command: String) throws -> String {
        try child.send(command)
        while true {
            let line = try child.readLineBlocking(timeout: 120) ?? "end of output"
            guard line.hasPrefix("changed ") || line.hasPrefix("reported ") else { return line }
            events.append(line)
        }
    }

    /// The next event, waiting for it up to 30 s.
    func nextEvent() throws -> String {
        if !events.isEmpty { return events.removeFirst() }
        return try child.readLineBlocking(timeout: 30) ?? "end of output"
    }
}

@Suite("Defaults on etcd: two real processes", .needsEtcd)
struct EtcdProcessTests {
    @Test func twoProcessesSeeEachOthersChangesThroughObservers() async throws {
        try await EtcdServer.with { server in
            let endpoints = server.clientURLs
            let lines = try await onThread { () throws -> [String] in
                let a = Conversation(try startFixture(endpoints))
                let b = Conversation(try startFixture(endpoints))
                var lines: [String] = []
                lines.append(try b.ask("observe volume"))
                lines.append(try a.ask("observe volume"))
                lines.append(try a.ask("set volume 0.8"))
                lines.append(try a.nextEvent())
                lines.append(try b.nextEvent())
                lines.append(try b.ask("remove volume"))
                lines.append(try b.nextEvent())
                lines.append(try a.nextEvent())
                lines.append(try a.ask("quit"))
                lines.append(try b.ask("quit"))
                lines.append("\(try a.child.waitBlocking(timeout: 30)) \(try b.child.waitBlocking(timeout: 30))")
                return lines
            }
            #expect(
                lines == [
                    "ok", "ok", "ok", "changed volume 0.8", "changed volume 0.8", "ok", "changed volume none",
                    "changed volume none", "bye", "bye", "exit status 0 exit status 0",
                ])
        }
    }

    @Test func modifyFromTwoProcessesFiveHundredTimesEachCountsToExactlyOneThousand() async throws {
        try await EtcdServer.with { server in
            let endpoints = server.clientURLs
            let lines = try await onThread { () throws -> [String] in
                let a = try startFixture(endpoints)
                let b = try startFixture(endpoints)
                try a.send("increment counter 500")
                try b.send("increment counter 500")
                return [
                    try a.readLineBlocking(timeout: 120) ?? "end", try b.readLineBlocking(timeout: 120) ?? "end",
                    try askUntil(a, "counter", is: "value counter 1000"),
                    try askUntil(b, "counter", is: "value counter 1000"), try a.askBlocking("quit"),
                    try b.askBlocking("quit"),
                ]
            }
            #expect(lines == ["ok", "ok", "value counter 1000", "value counter 1000", "bye", "bye"])
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/counter"]) == "1000\n")
        }
    }
}
