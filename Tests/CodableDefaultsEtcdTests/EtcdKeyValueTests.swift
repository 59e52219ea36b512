import CodableDefaultsEtcd
import Foundation
import Testing

@Suite("EtcdClient: keys and values against a real etcd")
struct EtcdKeyValueTests {
    /// Keys and values that are not plain ASCII text: bytes 0 and 0xFF, invalid UTF-8, non-ASCII text, empty.
    static let samples: [(key: [UInt8], value: [UInt8])] = [
        (utf8("app/plain"), utf8("\"text\"")),
        (utf8("app/日本語 ключ ✓"), utf8("{\"é\":\"ü ✓ 🎉\"}")),
        (utf8("app/") + [0x00, 0x01, 0xFF, 0xFE, 0x0A], [0x00, 0xFF, 0x80, 0x0D, 0x0A, 0x22, 0x5C]),
        (utf8("app/") + [0xFF, 0xFF], []),
    ]

    @Test(.needsEtcd) func putGetRangeAndDeleteAreBinarySafe() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            var revisions: [Int64] = []
            for sample in Self.samples { revisions.append(try await client.put(sample.key, sample.value)) }
            #expect(revisions == revisions.sorted() && Set(revisions).count == revisions.count)
            try await client.put(utf8("apq"), utf8("outside the prefix"))

            for (sample, revision) in zip(Self.samples, revisions) {
                let got = try #require(try await client.get(sample.key))
                #expect(got.key == sample.key)
                #expect(got.value == sample.value)
                #expect(got.modRevision == revision)
            }
            #expect(try await client.get(utf8("app/absent")) == nil)

            let range = try await client.range(prefix: utf8("app/"))
            #expect(range.keyValues.map(\.key) == Self.samples.map(\.key).sorted { $0.lexicographicallyPrecedes($1) })
            #expect(Set(range.keyValues.map(\.value)) == Set(Self.samples.map(\.value)))
            #expect(range.revision == revisions.last! + 1)

            let everything = try await client.range(prefix: [])
            #expect(everything.keyValues.count == Self.samples.count + 1)

            let removed = try await client.delete(Self.samples[2].key)
            #expect(removed.deleted == 1 && removed.revision == range.revision + 1)
            #expect(try await client.get(Self.samples[2].key) == nil)
            #expect(try await client.delete(Self.samples[2].key).deleted == 0)
            #expect(try await client.range(prefix: utf8("app/")).keyValues.count == Self.samples.count - 1)
        }
    }

    @Test(.needsEtcd) func aPrefixEndingInFFRangesOnlyItsKeys() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let prefix: [UInt8] = [0x61, 0xFF]
            try await client.put(prefix + [0x00], utf8("1"))
            try await client.put(prefix + [0xFF, 0xFF], utf8("2"))
            try await client.put([0x62], utf8("after the prefix"))
            try await client.put([0x61, 0xFE], utf8("before the prefix"))
            let keys = try await client.range(prefix: prefix).keyValues.map(\.key)
            #expect(keys == [prefix + [0x00], prefix + [0xFF, 0xFF]])
        }
    }

    @Test(.needsEtcd) func aTransactionFailsWhenTheRevisionMovedAndSucceedsAfterRereading() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let counter = utf8("app/counter")
            let other = utf8("app/other")

            // Absent (mod revision 0): creating succeeds once, then the same compare fails.
            let created = try await client.transaction(
                compares: [EtcdCompare(key: counter, modRevision: 0)],
                operations: [.put(key: counter, value: utf8("1"))])
            #expect(created.succeeded)
            let again = try await client.transaction(
                compares: [EtcdCompare(key: counter, modRevision: 0)],
                operations: [.put(key: counter, value: utf8("9"))])
            #expect(!again.succeeded && again.revision == created.revision)

            let read = try #require(try await client.get(counter))
            try await server.etcdctl(["put", "app/counter", "2"])  // another writer moves the revision
            let stale = try await client.transaction(
                compares: [EtcdCompare(key: counter, modRevision: read.modRevision)],
                operations: [.put(key: counter, value: utf8("11")), .put(key: other, value: utf8("x"))])
            #expect(!stale.succeeded)
            #expect(try await client.get(counter)?.value == utf8("2"))
            #expect(try await client.get(other) == nil)

            let reread = try #require(try await client.get(counter))
            let fresh = try await client.transaction(
                compares: [
                    EtcdCompare(key: counter, modRevision: reread.modRevision), EtcdCompare(key: other, modRevision: 0),
                ],
                operations: [
                    .put(key: counter, value: utf8("3")), .put(key: other, value: utf8("y")),
                    .delete(key: utf8("app/none")),
                ])
            #expect(fresh.succeeded && fresh.revision == reread.modRevision + 1)
            let after = try await client.range(prefix: utf8("app/"))
            #expect(after.keyValues.map(\.value) == [utf8("3"), utf8("y")])
            #expect(after.keyValues.allSatisfy { $0.modRevision == fresh.revision })
        }
    }

    @Test(.needsEtcd) func etcdsRefusalIsAnErrorNamingTheEndpointAndQuotingEtcd() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let key = utf8("app/twice")
            let error = await #expect(throws: EtcdError.self) {
                try await client.transaction(
                    compares: [], operations: [.put(key: key, value: utf8("1")), .put(key: key, value: utf8("2"))])
            }
            #expect(error?.code == .server)
            #expect(error?.endpoint == server.clientURL)
            #expect(error?.message.contains("duplicate key") == true)
            #expect(error?.description.contains(server.clientURL) == true)
        }
    }

    @Test func endpointsThatAreNotHTTPURLsAreRefused() throws {
        for bad in ["127.0.0.1:2379", "ftp://127.0.0.1:2379", "http://", ""] {
            let error = #expect(throws: EtcdError.self) { try EtcdClient(endpoints: [bad]) }
            #expect(error?.code == .invalidEndpoint)
        }
        #expect(throws: EtcdError.self) { try EtcdClient(endpoints: []) }
    }

    @Test func aMissingEtcdBinaryFailsWithHowToInstallIt() {
        let error = #expect(throws: (any Error).self) {
            try EtcdServer.binary(environment: ["ETCD_BINARY": "/nonexistent/etcd"])
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("apt-get install etcd-server etcd-client"))
    }

    /// The reason the etcd tests print when they are skipped names the missing program and how to get it.
    @Test func theSkipReasonOfAMissingEtcdNamesItAndHowToInstallIt() {
        let missing = ["ETCD_BINARY": "/nonexistent/etcd"]
        #expect(EtcdServer.missingPrograms(environment: missing) == ["/nonexistent/etcd", "/nonexistent/etcdctl"])
        let reason = EtcdServer.unavailableReason(environment: missing)
        #expect(reason.contains("not found at /nonexistent/etcd and /nonexistent/etcdctl"), "\(reason)")
        #expect(reason.contains("bash Scripts/install-etcd.sh") && reason.contains("$ETCD_BINARY"), "\(reason)")
    }
}
