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
            try await defaults.save()
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

    @Test func whatASaveInSeveralTransactionsWroteBeforeOneFailedIsSavedAndNeverWrittenAgain() async throws {
        try await EtcdServer.with { server in
            let defaults = try await Defaults(
                etcd: [URL(string: server.clientURL)!], prefix: "myservice/", saveMode: .manual)
            let direct = try EtcdClient(endpoints: [server.clientURL])
            defaults.set("new", forKey: "a")
            defaults.set(String(repeating: "x", count: 2 << 20), forKey: "huge")  // over etcd's request limit
            let refused = #expect(throws: DefaultsError.self) { try defaults.save() }
            #expect(refused?.code == .writeFailed)
            #expect(refused?.message.contains("\"huge\"") == true, "\(String(describing: refused))")
            #expect(try await direct.get(utf8("myservice/a"))?.value == utf8("\"new\""), "the first transaction")

            // Another writer changes `a` after it: the store takes that in, and its next save leaves it.
            let key = Defaults.Key<String>("a", default: "")
            let sawTheirs = DispatchSemaphore(value: 0)
            let token = defaults.observe(key) { change in if change.newValue == "theirs" { sawTheirs.signal() } }
            try await direct.put(utf8("myservice/a"), utf8("\"theirs\""))
            #expect(try await signalled(sawTheirs))
            #expect(throws: DefaultsError.self) { try defaults.save() }  // `huge` still fails
            #expect(try await direct.get(utf8("myservice/a"))?.value == utf8("\"theirs\""))

            // Discarding goes back to what etcd holds.
            defaults.discardUnsavedChanges()
            #expect(defaults[key] == "theirs")
            #expect(defaults.object(forKey: "huge") == nil)
            try await defaults.save()
            token.cancel()
        }
    }
}
