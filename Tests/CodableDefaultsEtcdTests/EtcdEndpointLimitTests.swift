import CodableDefaults
import CodableDefaultsEtcd
import Foundation
import Testing

/// What the etcd client refuses before or while it talks to an endpoint: an endpoint whose port is out of
/// range (never connected to, so no password goes to the port it would wrap to), and an answer larger than
/// any etcd sends (never held whole in memory). These need no etcd: fake servers stand in.
@Suite struct EtcdEndpointLimitTests {
    /// A fake server whose port, plus 65536, is a port number out of range that a socket would wrap to it.
    @Test func aPortOutOfRangeIsRefusedBeforeAnyConnection() async throws {
        let server = try TestTCPServer(.answer(Array("HTTP/1.0 200 OK\r\n\r\n{}".utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        for endpoint in ["http://127.0.0.1:\(server.port + 65536)", "http://127.0.0.1:0", "https://h:70000"] {
            let error = #expect(throws: EtcdError.self) { try EtcdClient(endpoints: [endpoint]) }
            #expect(error?.code == .invalidEndpoint)
            #expect(error?.description.contains("not in 1...65535") == true)

            let opening = await #expect(throws: DefaultsError.self) {
                try await Defaults(
                    etcd: [try #require(URL(string: endpoint))], prefix: "p/", username: "app", password: "pw")
            }
            #expect(opening?.code == .invalidArgument)
        }
        #expect(server.requests.isEmpty)
    }

    /// The answer's body is larger than the client's limit: refused, naming the endpoint, and not taken as the
    /// endpoint being down (no other endpoint would answer better).
    @Test func anAnswerOverTheLimitIsAnErrorNamingTheEndpoint() async throws {
        let body = "{\"header\":{\"revision\":\"1\"},\"kvs\":[]}" + String(repeating: " ", count: 300_000)
        let server = try TestTCPServer(.answer(Array("HTTP/1.0 200 OK\r\n\r\n\(body)".utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [server.url], maximumAnswerSize: 100_000)
        let error = await #expect(throws: EtcdError.self) { try await client.range(prefix: Array("p/".utf8)) }
        #expect(error?.code == .badResponse)
        #expect(error?.endpoint == server.url)
        #expect(error?.description.contains("over 100000 bytes") == true)

        // The same answer under a limit it fits in is read.
        let roomy = try EtcdClient(endpoints: [server.url], maximumAnswerSize: 400_000)
        #expect(try await roomy.range(prefix: Array("p/".utf8)).keyValues.isEmpty)
    }

    /// Headers that never end (no blank line) are refused once they pass 64 KiB, whatever the answer's limit.
    @Test func headersThatNeverEndAreRefused() async throws {
        let head = "HTTP/1.0 200 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 5_000)
        let server = try TestTCPServer(.answer(Array(head.utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [server.url])
        let error = await #expect(throws: EtcdError.self) { try await client.range(prefix: Array("p/".utf8)) }
        #expect(error?.code == .badResponse, "\(String(describing: error))")
        #expect(error?.description.contains("headers are over 65536 bytes") == true)
    }

    /// A watch whose server sends an answer over the limit is ended with an error once the answer passes it,
    /// instead of holding it all: a line that never ends (no message boundary), and an error answer (read whole
    /// before it is reported, it is bounded all the same).
    @Test(arguments: [
        OversizedWatchAnswer(
            "a message whose line never ends",
            head: "HTTP/1.0 200 OK",
            body: "{\"result\":{\"header\":{\"revision\":\"1\"}," + String(repeating: " ", count: 300_000),
            error: "over 100000 bytes"),
        OversizedWatchAnswer(
            "an error answer",
            head: "HTTP/1.0 500 Internal Server Error",
            body: "{\"error\":\"" + String(repeating: "x", count: 300_000),
            error: "the error answer is over 100000 bytes"),
    ])
    func aWatchAnswerOverTheLimitEndsTheWatch(_ answer: OversizedWatchAnswer) async throws {
        let server = try TestTCPServer(.answer(Array("\(answer.head)\r\n\r\n\(answer.body)".utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [server.url], maximumAnswerSize: 100_000)
        let error = await #expect(throws: EtcdError.self) {
            for try await _ in client.watch(prefix: Array("p/".utf8), startRevision: 1) {}
        }
        #expect(error?.code == .badResponse)
        #expect(error?.description.contains(answer.error) == true, "\(String(describing: error))")
    }

    /// A file size limit of `Int.max` (no limit) gives no answer limit, rather than an overflow.
    @Test func theLargestFileLimitIsNoAnswerLimitNotACrash() async throws {
        let options = Defaults.Options(maximumFileSize: Int.max)
        let error = await #expect(throws: DefaultsError.self) {
            try await Defaults(etcd: [URL(string: "http://127.0.0.1:1")!], prefix: "p/", options: options)
        }
        #expect(error?.code == .readFailed, "nothing listens on port 1: \(String(describing: error))")
    }

    /// A transaction whose answer is not etcd's may have been applied: its changes are not sent again one by
    /// one (which could write over what another writer stored since), unlike a transaction etcd refused.
    @Test func aTransactionWhoseAnswerIsNotEtcdsIsNotSentAgainChangeByChange() throws {
        let server = try TestTCPServer(.answer(Array("HTTP/1.0 200 OK\r\n\r\nnot json".utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let storage = EtcdStorage(client: try EtcdClient(endpoints: [server.url]), prefix: "p/", maximumDepth: 64)
        let write = storage.write([MemberChange("a", Array("1".utf8)), MemberChange("b", Array("2".utf8))])
        guard case .failure = write.outcome else {
            Issue.record("a write answered with text that is not etcd's succeeded")
            return
        }
        #expect(write.savedDespiteFailure.isEmpty)
        #expect(server.requests.filter { $0.contains("/v3/kv/txn") }.count == 1, "\(server.requests)")
    }
}

/// An answer to a watch over the client's limit, and what the error must say of it.
struct OversizedWatchAnswer: Sendable, CustomTestStringConvertible {
    /// What the answer is, as the test case is named.
    var testDescription: String
    /// The status line.
    var head: String
    /// The body, over the limit.
    var body: String
    /// What the error's description must contain.
    var error: String

    init(_ testDescription: String, head: String, body: String, error: String) {
        self.testDescription = testDescription
        self.head = head
        self.body = body
        self.error = error
    }
}
