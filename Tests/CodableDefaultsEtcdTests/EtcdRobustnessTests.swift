import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

/// The bytes of `text`.
private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Puts `value` at `key`, again (up to 5 times) when no member takes it (a member under heavy load gives up on
/// requests): a test's setup, not what it tests.
private func put(_ client: EtcdClient, _ key: String, _ value: String) async throws {
    var attempts = 1
    while true {
        do {
            try await client.put(bytes(key), bytes(value))
            return
        } catch let error as EtcdError where error.code == .unreachable && attempts < 5 {
            attempts += 1
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// A `Defaults` under `myservice/` through `endpoint` (a holding proxy), `.immediate`, whose calls wait up to 60 s
/// for an answer: a held answer is released long before, even on a slow machine.
private func openPatiently(_ endpoint: String) async throws -> (Defaults, EtcdStorage) {
    let client = try EtcdClient(endpoints: [endpoint], requestTimeout: 60)
    let storage = EtcdStorage(client: client, prefix: "myservice/", maximumDepth: 64)
    try await storage.prime()
    return (try Defaults(engine: storage, saveMode: .immediate), storage)
}

/// Waits on a thread of its own (never the cooperative pool) for `semaphore`, up to 30 s; whether it came.
private func signalled(_ semaphore: DispatchSemaphore) async throws -> Bool {
    try await onThread { semaphore.wait(timeout: .now() + 30) == .success }
}

/// The store on etcd under races with other writers and against servers that misbehave: what the watch brings
/// while the store's own call waits for its answer, a watch catching up in batches, an outage of a store on the
/// whole key space, peers that close early or answer what etcd never would, keys that are not UTF-8.
@Suite("Defaults on etcd: races and misbehaving servers")
struct EtcdRobustnessTests {
    @Test(.needsEtcd) func anotherWritersChangeThatArrivesBeforeTheAnswerToOurTransactionIsKept() async throws {
        try await EtcdServer.with { server in
            let proxy = try TestTCPServer(.proxy(to: server.members[0].clientPort))
            let (defaults, storage) = try await openPatiently(proxy.url)
            let direct = try EtcdClient(endpoints: [server.clientURL])
            let key = Defaults.Key<String>("k", default: "")
            let sawB = DispatchSemaphore(value: 0)
            let token = defaults.observe(key) { change in if change.newValue == "B" { sawB.signal() } }

            // Our set's transaction reaches etcd; its answer is held on the way back.
            proxy.hold(["/v3/kv/txn"])
            let set = Task { try await onThread { defaults[key] = "A" } }
            #expect(try await onThread { proxy.waitUntilHolding() })
            // Another writer changes the key after it; the watch brings both changes before our answer.
            try await direct.put(bytes("myservice/k"), bytes("\"B\""))
            #expect(try await eventually { storage.unappliedChange(named: "k")?.value == bytes("\"B\"") })
            proxy.release()
            try await set.value

            #expect(try await signalled(sawB), "the newer change reaches the store")
            #expect(defaults[key] == "B")
            #expect(try await direct.get(bytes("myservice/k"))?.value == bytes("\"B\""))
            token.cancel()
        }
    }

    @Test(.needsEtcd) func aModifyThatChangesNothingKeepsTheChangeTheWatchBroughtAfterItsRead() async throws {
        try await EtcdServer.with { server in
            let direct = try EtcdClient(endpoints: [server.clientURL])
            try await direct.put(bytes("myservice/k"), bytes("\"1\""))
            let proxy = try TestTCPServer(.proxy(to: server.members[0].clientPort))
            let (defaults, storage) = try await openPatiently(proxy.url)
            let key = Defaults.Key<String>("k", default: "")
            #expect(defaults[key] == "1")

            // The modify's read reaches etcd; its answer is held while another writer changes the key.
            proxy.hold(["/v3/kv/range"])
            let modify = Task { try await onThread { try defaults.modify(key) { _ in } } }
            #expect(try await onThread { proxy.waitUntilHolding() })
            try await direct.put(bytes("myservice/k"), bytes("\"2\""))
            #expect(try await eventually { storage.unappliedChange(named: "k")?.value == bytes("\"2\"") })
            proxy.release()
            try await modify.value

            #expect(defaults[key] == "2", "the newer value, not the one the modify read")
        }
    }

    @Test(.needsEtcd) func aWatchCatchingUpResumesAfterTheLastEventItGotNotAfterTheHeadersRevision() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let start = try await client.range(prefix: bytes("myservice/")).revision + 1
            // More revisions than etcd sends in one message of a watch that catches up (1,000).
            for index in 0..<1_010 { try await put(client, "myservice/k\(index)", "\(index)") }
            var messages = client.watch(prefix: bytes("myservice/"), startRevision: start).makeAsyncIterator()
            let first = try #require(try await messages.next())
            let last = try #require(first.events.last?.modRevision)
            #expect(last < first.revision, "etcd: the first batch ends before the revision in its header")

            // A storage that got this message resumes after its last event, whatever the header says.
            let storage = EtcdStorage(client: client, prefix: "myservice/", maximumDepth: 64)
            storage.take(first)
            #expect(storage.resumeRevision == last + 1)
            // A message without events (a progress notification) moves it to its header's revision.
            var progress = first
            progress.events = []
            storage.take(progress)
            #expect(storage.resumeRevision == first.revision + 1)
        }
    }

    @Test(.needsEtcd) func aStoreOnTheWholeKeySpaceSavesItsPendingChangesWhenEtcdIsBack() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let defaults = try await Defaults(
                etcd: [URL(string: server.clientURL)!], prefix: "", saveMode: .immediate, onError: errors.handler)
            try await server.kill(server.members[0])
            defaults.set(42, forKey: "answer")
            #expect(errors.errors.first?.code == .writeFailed)
            try await server.restartStopped()
            let client = try EtcdClient(endpoints: [server.clientURL])
            var stored = try await client.get(bytes("answer"))?.value
            for _ in 0..<300 where stored != bytes("42") {
                try await Task.sleep(for: .milliseconds(100))
                stored = try await client.get(bytes("answer"))?.value
            }
            #expect(stored == bytes("42"), "the pending change landed once etcd answered")
            try defaults.flush()
        }
    }

    @Test func aPeerThatClosesWhileARequestIsSentIsAnErrorNotTheEndOfTheProcess() async throws {
        let peer = try TestTCPServer(.closeEarly)
        defer { withExtendedLifetime(peer) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [peer.url])
        let error = await #expect(throws: EtcdError.self) {
            try await client.put(bytes("k"), [UInt8](repeating: 0x41, count: 32 << 20))
        }
        #expect(error?.code == .unreachable)
    }

    @Test func answersWithoutEtcdsHeaderAreNotTakenAsAcknowledged() async throws {
        let fake = try TestTCPServer(.answer(bytes("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}")))
        defer { withExtendedLifetime(fake) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [fake.url])
        let put = await #expect(throws: EtcdError.self) { try await client.put(bytes("k"), bytes("1")) }
        #expect(put?.code == .badResponse)
        let opening = await #expect(throws: DefaultsError.self) {
            try await Defaults(etcd: [URL(string: fake.url)!], prefix: "myservice/")
        }
        #expect(opening?.code == .readFailed)

        // A watch that such a server ends at once is tried again with a backoff (50, 100, 200 ms, ...), not in a
        // tight loop: its fourth request comes 350 ms after the first at the earliest (a slow machine only adds).
        let storage = EtcdStorage(client: client, prefix: "myservice/", maximumDepth: 64)
        let started = ContinuousClock.now
        storage.startWatching(on: DispatchQueue(label: "test")) {}
        // (A long bound: the watch runs on Swift's cooperative pool, which tests running alongside may keep busy.)
        let fourth = try await eventually(timeout: 60) { fake.requests.filter { $0.contains("/v3/watch") }.count >= 4 }
        #expect(fourth)
        let elapsed = ContinuousClock.now - started
        storage.stopWatching()
        #expect(elapsed >= .milliseconds(300), "four watch requests within \(elapsed)")
    }

    @Test(.needsEtcd) func whatASaveInSeveralTransactionsWroteBeforeOneFailedIsSavedAndNeverWrittenAgain() async throws
    {
        try await EtcdServer.with { server in
            let defaults = try await Defaults(
                etcd: [URL(string: server.clientURL)!], prefix: "myservice/", saveMode: .manual)
            let direct = try EtcdClient(endpoints: [server.clientURL])
            defaults.set("new", forKey: "a")
            defaults.set(String(repeating: "x", count: 2 << 20), forKey: "huge")  // over etcd's request limit
            let refused = #expect(throws: DefaultsError.self) { try defaults.flush() }
            #expect(refused?.code == .writeFailed)
            #expect(refused?.message.contains("\"huge\"") == true, "\(String(describing: refused))")
            #expect(try await direct.get(bytes("myservice/a"))?.value == bytes("\"new\""), "the first transaction")

            // Another writer changes `a` after it: the store takes that in, and its next save leaves it.
            let key = Defaults.Key<String>("a", default: "")
            let sawTheirs = DispatchSemaphore(value: 0)
            let token = defaults.observe(key) { change in if change.newValue == "theirs" { sawTheirs.signal() } }
            try await direct.put(bytes("myservice/a"), bytes("\"theirs\""))
            #expect(try await signalled(sawTheirs))
            #expect(throws: DefaultsError.self) { try defaults.flush() }  // `huge` still fails
            #expect(try await direct.get(bytes("myservice/a"))?.value == bytes("\"theirs\""))

            // Discarding goes back to what etcd holds.
            defaults.discardUnsavedChanges()
            #expect(defaults[key] == "theirs")
            #expect(defaults.object(forKey: "huge") == nil)
            try defaults.flush()
            token.cancel()
        }
    }

    @Test(.needsEtcd) func aMemberThatGivesUpOnARequestIsSkippedForTheNextOne() async throws {
        try await EtcdServer.with { server in
            let body = #"{"error":"context canceled","message":"context canceled","code":1}"#
            let tired = try TestTCPServer(
                .answer(bytes("HTTP/1.0 408 Request Timeout\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")))
            let client = try EtcdClient(endpoints: [tired.url, server.clientURL])
            try await client.put(bytes("myservice/k"), bytes("1"))
            #expect(client.preferredEndpoint.absoluteString == server.clientURL)
            #expect(tired.requests.count == 1)
            #expect(try await client.get(bytes("myservice/k"))?.value == bytes("1"))
        }
    }

    @Test(.needsEtcd) func keysWhoseNamesAreNotUTF8AreLeftOutAndNeverWritten() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            try await client.put(bytes("myservice/") + [0xFF], bytes("1"))
            try await client.put(bytes("myservice/") + [0xFE], bytes("2"))
            try await client.put(bytes("myservice/ok"), bytes("3"))
            let defaults = try await Defaults(etcd: [URL(string: server.clientURL)!], prefix: "myservice/")
            #expect(defaults.keys == ["ok"])
            #expect(defaults.object(forKey: "\u{FFFD}") == nil, "no name stands for both")
            defaults.removeAll()
            try defaults.flush()
            let left = try await client.range(prefix: bytes("myservice/")).keyValues.map(\.key)
            #expect(left == [bytes("myservice/") + [0xFE], bytes("myservice/") + [0xFF]])
        }
    }
}
