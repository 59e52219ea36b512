import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

private let volume = Defaults.Key<Double>("volume", default: 0.5)
private let counter = Defaults.Key<Int>("counter", default: 0)

/// Opens a `Defaults` on every member of `server` under `myservice/`, its errors to `errors`.
private func open(_ server: EtcdServer, _ errors: ErrorLog, saveMode: Defaults.SaveMode = .immediate) async throws
    -> Defaults
{
    try await Defaults(
        etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "myservice/", saveMode: saveMode,
        onError: errors.handler)
}

@Suite("Defaults on etcd: faults of a real cluster", .needsEtcd)
struct EtcdDefaultsFaultTests {
    @Test func whenOneMemberOfThreeIsKilledWritesAndWatchesGoOn() async throws {
        try await EtcdServer.with(members: 3) { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            let b = try await open(server, errors)
            let seen = Locked<[Double]>([])
            let token = b.observe(volume) { change in seen.withLock { $0.append(change.newValue) } }
            a[volume] = 0.1
            #expect(try await eventually { seen.withLock { $0 } == [0.1] })

            // Both handles speak to the first member (the watch too): it goes away.
            try await server.kill(server.members[0])
            a[volume] = 0.2
            #expect(try await eventually(timeout: 120) { seen.withLock { $0.last } == 0.2 })
            let alive = server.members.dropFirst().map(\.clientURL)
            #expect(
                try await server.etcdctl(["get", "--print-value-only", "myservice/volume"], endpoints: alive) == "0.2\n"
            )
            #expect(errors.errors.allSatisfy { $0.code == .writeFailed }, "\(errors.errors)")
            token.cancel()
        }
    }

    @Test func whenTheWholeClusterIsDownChangesStayPendingAndLandWhenItIsBack() async throws {
        try await EtcdServer.with(members: 3) { server in
            let errors = ErrorLog()
            let quiet = ErrorLog()
            let a = try await open(server, errors)
            let b = try await open(server, quiet)
            let seen = Locked<[Int]>([])
            let token = b.observe(counter) { change in seen.withLock { $0.append(change.newValue) } }
            a[counter] = 1
            #expect(try await eventually { seen.withLock { $0 } == [1] })

            for member in server.members { try await server.kill(member) }
            for value in 2...5 { a[counter] = value }
            a[volume] = 0.3
            // Reads serve what was set; each save failed, to onError; flush throws.
            #expect(a[counter] == 5)
            #expect(a[volume] == 0.3)
            #expect(errors.errors.count == 5)
            #expect(errors.errors.allSatisfy { $0.code == .writeFailed && $0.message.contains("no endpoint") })
            let thrown = #expect(throws: DefaultsError.self) { try a.save() }
            #expect(thrown?.code == .writeFailed)
            #expect(b[counter] == 1)

            try await server.restartStopped()
            // The store saves its pending changes once etcd answers; the other handle's watch resumes.
            #expect(try await eventually(timeout: 120) { b[counter] == 5 && b[volume] == 0.3 })
            #expect(seen.withLock { $0.last } == 5)
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/counter"]) == "5\n")
            try await a.save()
            token.cancel()
        }
    }

    @Test func aWatchWhoseRevisionWasCompactedReloadsAndMissesNoChange() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            let b = try await open(server, errors)
            let storage = try #require(b.engine as? EtcdStorage)
            let seen = Locked<[Double]>([])
            let token = b.observe(volume) { change in seen.withLock { $0.append(change.newValue) } }
            a[counter] = 3
            #expect(try await eventually { b[counter] == 3 })

            // As a long disconnect: b's watch stops while a changes a value twice and removes another, and etcd
            // compacts those revisions away.
            storage.pauseWatching()
            a[volume] = 0.1
            a[volume] = 0.2
            a.reset(counter)
            let client = try EtcdClient(endpoints: server.clientURLs)
            let revision = try await client.put(Array("other/mark".utf8), Array("x".utf8))
            try await server.etcdctl(["compact", "\(revision)"])

            storage.resumeWatching()
            #expect(try await eventually { storage.compactionReloadCount == 1 })
            #expect(try await eventually { b[volume] == 0.2 && !b.hasStoredValue(for: counter) })
            #expect(seen.withLock { $0 } == [0.2])

            // The watch goes on from the reload.
            a[volume] = 0.3
            #expect(try await eventually { seen.withLock { $0 } == [0.2, 0.3] })
            #expect(errors.errors.isEmpty, "\(errors.errors)")
            token.cancel()
        }
    }

    @Test func aStoreOnTheWholeKeySpaceSavesItsPendingChangesWhenEtcdIsBack() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let defaults = try await Defaults(
                etcd: [URL(string: server.clientURL)!], prefix: "", saveMode: .immediate, onError: errors.handler)
            try await server.kill(server.members[0])
            defaults.set(42, forKey: "answer")
            #expect(errors.errors.first?.code == .writeFailed)
            try await server.restartStopped()
            let client = try EtcdClient(endpoints: [server.clientURL])
            var stored = try await client.get(utf8("answer"))?.value
            for _ in 0..<300 where stored != utf8("42") {
                try await Task.sleep(for: .milliseconds(100))
                stored = try await client.get(utf8("answer"))?.value
            }
            #expect(stored == utf8("42"), "the pending change landed once etcd answered")
            try await defaults.save()
        }
    }
}
