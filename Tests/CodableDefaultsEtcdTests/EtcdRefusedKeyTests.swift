import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// A change etcd refuses stays unsaved alone: the other changes of the save are written, and later saves are
/// not blocked by it. The empty key, which etcd has no room for under the empty prefix, is refused when set.
@Suite("Defaults on etcd: a key etcd refuses", .needsEtcd)
struct EtcdRefusedKeyTests {
    @Test func theEmptyKeyUnderTheEmptyPrefixIsRefusedWhenSetAndOtherKeysAreSaved() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let defaults = try await Defaults(
                etcd: [URL(string: server.clientURL)!], prefix: "", saveMode: .manual, onError: errors.handler)
            defaults[Defaults.Key<Int>("", default: 0)] = 1
            let refused = try #require(errors.errors.first)
            #expect(refused.code == .invalidArgument)
            #expect(refused.message.contains("empty key"), "\(refused)")
            #expect(defaults[Defaults.Key<Int>("", default: 0)] == 0, "nothing was stored")
            #expect(throws: DefaultsError.self) { try defaults.set(1, for: Defaults.Key<Int>("", default: 0)) }

            defaults.set(2, forKey: "b")
            try defaults.flush()
            #expect(try await server.etcdctl(["get", "--print-value-only", "b"]) == "2\n")
        }
    }

    /// The engine given a change etcd refuses (the empty key under the empty prefix) together with others, in
    /// one save: the others are written and reported as saved, the refused one is the error.
    @Test func aRefusedChangeDoesNotKeepTheOthersOfItsSaveFromBeingWritten() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            let storage = EtcdStorage(client: client, prefix: "", maximumDepth: 64)
            let write = storage.write([
                MemberChange("a", Array("1".utf8)), MemberChange("", Array("2".utf8)),
                MemberChange("c", Array("3".utf8)),
            ])
            guard case .failure(let error) = write.outcome else {
                Issue.record("etcd took the empty key")
                return
            }
            #expect(error.code == .writeFailed)
            #expect(error.message.contains("\"\""), "\(error)")
            #expect(write.savedDespiteFailure == [0, 2])
            #expect(try await client.get(Array("a".utf8))?.value == Array("1".utf8))
            #expect(try await client.get(Array("c".utf8))?.value == Array("3".utf8))
        }
    }
}
