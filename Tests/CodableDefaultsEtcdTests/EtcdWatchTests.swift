import CodableDefaultsEtcd
import Foundation
import Testing

@Suite("EtcdClient: watches against a real etcd", .needsEtcd)
struct EtcdWatchTests {
    @Test func aWatchSeesAPutAndADeleteMadeByEtcdctl() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let start = try await client.range(prefix: utf8("app/")).revision + 1
            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: start))
            try await server.etcdctl(["put", "app/volume", "0.75 é"])
            try await server.etcdctl(["put", "other/volume", "not watched"])
            try await server.etcdctl(["del", "app/volume"])
            let events = try await recorder.waitForEvents(2)
            #expect(recorder.error == nil)
            #expect(
                events == [
                    EtcdEvent(kind: .put, key: utf8("app/volume"), value: utf8("0.75 é"), modRevision: start),
                    EtcdEvent(kind: .delete, key: utf8("app/volume"), value: [], modRevision: start + 2),
                ])
        }
    }

    @Test func aWatchResumedFromARevisionSeesEveryLaterEvent() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            var revisions: [Int64] = []
            for index in 0..<20 { revisions.append(try await client.put(utf8("app/k\(index % 3)"), utf8("\(index)"))) }
            // The changes of one transaction come as one revision.
            let both = try await client.transaction(
                compares: [], operations: [.put(key: utf8("app/a"), value: utf8("1")), .delete(key: utf8("app/k0"))])

            // As after a disconnect: the last revision seen was revisions[9]; resume from the next one.
            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: revisions[9] + 1))
            let events = try await recorder.waitForEvents(12)
            #expect(recorder.error == nil)
            #expect(events.count == 12)
            #expect(events.prefix(10).map(\.modRevision) == Array(revisions[10...]))
            #expect(events.prefix(10).map(\.value) == (10..<20).map { utf8("\($0)") })
            #expect(events.suffix(2).map(\.modRevision) == [both.revision, both.revision])
            #expect(events.suffix(2).map(\.kind) == [.put, .delete])

            // Later changes keep coming on the same watch.
            let later = try await client.put(utf8("app/later"), utf8("x"))
            #expect(try await recorder.waitForEvents(13).last?.modRevision == later)
        }
    }

    @Test func aCompactedStartRevisionIsReportedAsCompaction() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let first = try await client.put(utf8("app/x"), utf8("1"))
            let last = try await client.put(utf8("app/x"), utf8("2"))
            try await server.etcdctl(["compact", "\(last)"])

            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: first))
            let error = try #require(try await recorder.waitForEnd() as? EtcdError)
            #expect(error.code == .compacted)
            #expect(error.compactRevision == last)
            #expect(error.endpoint == server.clientURL)
            #expect(recorder.events.isEmpty)

            // What the caller does next: reload, then watch from the reload's revision + 1.
            let reloaded = try await client.range(prefix: utf8("app/"))
            #expect(reloaded.keyValues.map(\.value) == [utf8("2")])
            let resumed = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: reloaded.revision + 1))
            let next = try await client.put(utf8("app/x"), utf8("3"))
            #expect(try await resumed.waitForEvents(1).map(\.modRevision) == [next])
        }
    }

    @Test func aQuietWatchReportsProgressSoThatItsRevisionMovesOn() async throws {
        try await EtcdServer.with(arguments: ["--experimental-watch-progress-notify-interval", "100ms"]) { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let start = try await client.range(prefix: utf8("app/")).revision + 1
            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: start))
            let elsewhere = try await client.put(utf8("other/x"), utf8("not watched"))
            let progress = try await recorder.waitForResponse { $0.revision >= elsewhere }
            #expect(progress?.events == [])
            #expect(recorder.error == nil)
        }
    }

    @Test func aWatchWhoseMemberStopsEndsAsDisconnected() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let start = try await client.put(utf8("app/x"), utf8("1"))
            let recorder = WatchRecorder(client.watch(prefix: utf8("app/"), startRevision: start))
            #expect(try await recorder.waitForEvents(1).count == 1)  // the watch is running
            try await server.kill(server.members[0])
            let error = try #require(try await recorder.waitForEnd() as? EtcdError)
            #expect(error.code == .watchDisconnected)
            #expect(error.endpoint == server.clientURL)
        }
    }
}
