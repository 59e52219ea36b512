import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

@Suite("EtcdClient: failover and authentication against a real etcd")
struct EtcdFailoverTests {
    @Test(.needsEtcd) func aDeadFirstEndpointFailsOverToTheLiveOneAndIsRemembered() async throws {
        try await EtcdServer.with { server in
            let refusing = try RefusingPort()
            defer { withExtendedLifetime(refusing) {} }
            let dead = refusing.url
            let client = try EtcdClient(endpoints: [dead, server.clientURL])
            #expect(client.preferredEndpoint.absoluteString == dead)
            try await client.put(utf8("app/x"), utf8("1"))
            #expect(client.preferredEndpoint.absoluteString == server.clientURL)
            #expect(try await client.get(utf8("app/x"))?.value == utf8("1"))

            let watcher = try EtcdClient(endpoints: [dead, server.clientURL])
            let recorder = WatchRecorder(watcher.watch(prefix: utf8("app/"), startRevision: 1))
            #expect(try await recorder.waitForEvents(1).map(\.value) == [utf8("1")])
        }
    }

    @Test func whenNoEndpointAnswersTheErrorNamesEach() async throws {
        let refusing = [try RefusingPort(), try RefusingPort()]
        defer { withExtendedLifetime(refusing) {} }
        let endpoints = refusing.map(\.url)
        let client = try EtcdClient(endpoints: endpoints)
        let error = await #expect(throws: EtcdError.self) { try await client.get(utf8("app/x")) }
        #expect(error?.code == .unreachable)
        #expect(error?.failures.map(\.endpoint) == endpoints)
        #expect(error?.failures.allSatisfy { $0.reason.contains("connection refused") } == true)
        #expect(error.map { "\($0)" }?.contains(endpoints[1]) == true)

        let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: 0))
        let watchError = try await recorder.waitForEnd() as? EtcdError
        #expect(watchError?.code == .unreachable)
    }

    @Test(.needsEtcd, .needsOpenSSL) func anHTTPSEndpointWhoseCertificateTheSystemDoesNotTrustIsRefused() async throws {
        let made = try await TestCertificate()
        try await EtcdServer.with(tls: made.tls) { server in
            #expect(server.clientURL.hasPrefix("https://"))
            let client = try EtcdClient(endpoints: [server.clientURL])
            let error = await #expect(throws: EtcdError.self) { try await client.get(utf8("app/x")) }
            #expect(error?.code == .unreachable)
            #expect(error?.failures.map(\.endpoint) == [server.clientURL])
            let reason = error?.failures.first?.reason ?? ""
            #expect(reason.contains("certificate"), "\(reason)")
            // etcd itself serves it: etcdctl with the certificate as its CA reads through it.
            try await server.etcdctl(["--cacert", made.certificate, "put", "app/x", "1"])
        }
    }

    @Test(.needsEtcd) func withTheRightPasswordCallsWorkAndAWrongOneIsAClearError() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["user", "add", "root:pass"])
            try await server.etcdctl(["auth", "enable"])

            let client = try EtcdClient(endpoints: [server.clientURL], user: "root", password: "pass")
            try await client.put(utf8("app/secret"), utf8("1"))
            #expect(try await client.get(utf8("app/secret"))?.value == utf8("1"))
            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: 1))
            #expect(try await recorder.waitForEvents(1).map(\.value) == [utf8("1")])

            let wrong = try EtcdClient(endpoints: [server.clientURL], user: "root", password: "wrong")
            let error = await #expect(throws: EtcdError.self) { try await wrong.get(utf8("app/secret")) }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.endpoint == server.clientURL)
            #expect(error?.message.contains("authentication failed") == true)

            let anonymous = try EtcdClient(endpoints: [server.clientURL])
            let refused = await #expect(throws: EtcdError.self) { try await anonymous.get(utf8("app/secret")) }
            #expect(refused?.code == .server)
            #expect(refused?.message.contains("user name is empty") == true)
        }
    }

    @Test(.needsEtcd) func anInvalidatedTokenIsRenewedOnce() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["user", "add", "root:pass"])
            try await server.etcdctl(["auth", "enable"])
            let client = try EtcdClient(endpoints: [server.clientURL], user: "root", password: "pass")
            try await client.put(utf8("app/x"), utf8("1"))
            // Turning authentication off and on drops every token etcd handed out, the client's too.
            try await server.etcdctl(["--user", "root:pass", "auth", "disable"])
            try await server.etcdctl(["auth", "enable"])
            try await client.put(utf8("app/x"), utf8("2"))
            #expect(try await client.get(utf8("app/x"))?.value == utf8("2"))
        }
    }

    @Test(.needsEtcd) func withOneMemberOfThreeKilledTheClientStillReadsWritesAndWatches() async throws {
        try await EtcdServer.with(members: 3) { server in
            let client = try EtcdClient(endpoints: server.clientURLs)
            let first = try await client.put(utf8("app/x"), utf8("1"))
            #expect(client.preferredEndpoint.absoluteString == server.clientURLs[0])
            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: first))
            #expect(try await recorder.waitForEvents(1).count == 1)

            try await server.kill(server.members[0])
            let second = try await client.put(utf8("app/x"), utf8("2"))
            #expect(client.preferredEndpoint.absoluteString != server.clientURLs[0])
            #expect(try await client.get(utf8("app/x"))?.value == utf8("2"))
            #expect(try await client.range(prefix: utf8("app/")).revision == second)

            // The watch on the killed member ends; resumed from the last revision it saw + 1, it misses nothing.
            let error = try #require(try await recorder.waitForEnd() as? EtcdError)
            #expect(error.code == .watchDisconnected)
            let last = try #require(recorder.events.last?.modRevision)
            let resumed = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: last + 1))
            let third = try await client.put(utf8("app/x"), utf8("3"))
            #expect(try await resumed.waitForEvents(2).map(\.modRevision) == [second, third])

            // The member comes back and catches up.
            try await server.restart(server.members[0])
            let alone = try EtcdClient(endpoints: [server.clientURLs[0]])
            #expect(try await alone.get(utf8("app/x"))?.value == utf8("3"))
        }
    }

    @Test(.needsEtcd) func aMemberThatGivesUpOnARequestIsSkippedForTheNextOne() async throws {
        try await EtcdServer.with { server in
            let body = #"{"error":"context canceled","message":"context canceled","code":1}"#
            let tired = try TestTCPServer(
                .answer(utf8("HTTP/1.0 408 Request Timeout\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")))
            let client = try EtcdClient(endpoints: [tired.url, server.clientURL])
            try await client.put(utf8("myservice/k"), utf8("1"))
            #expect(client.preferredEndpoint.absoluteString == server.clientURL)
            #expect(tired.requests.count == 1)
            #expect(try await client.get(utf8("myservice/k"))?.value == utf8("1"))
        }
    }
}
