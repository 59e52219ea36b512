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

/// The store's watch on etcd: what it brings while the store's own call waits for its answer (another writer's
/// newer change is kept, not overwritten by the older answer), and where a watch catching up in batches resumes.
@Suite("Defaults on etcd: the store's watch, racing its own calls and catching up")
struct EtcdStorageWatchTests {
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
}
