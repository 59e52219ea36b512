import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The storage contract (``StorageContract``) on etcd, as the unit tests run it on memory and on the JSON file:
/// every check on a prefix of its own, in one real etcd.
@Suite("Defaults on etcd: the storage contract every engine keeps", .needsEtcd)
struct EtcdStorageContractTests {
    /// A prefix of a real etcd: every store a new handle on it; another writer is another store on it, and another
    /// tool is etcdctl.
    struct Etcd: StorageContractSubject {
        let server: EtcdServer
        let prefix: String
        var sharesData: Bool { true }
        var keepsHistory: Bool { true }

        func open() async throws -> Defaults {
            try await Defaults(etcd: server.clientURLs.map { URL(string: $0)! }, prefix: prefix, saveMode: .manual)
        }

        func writeAsAnotherWriter(_ values: [String: JSONValue?], besides defaults: Defaults) async throws {
            let other = try await open()
            for (name, value) in values { other.set(value, forKey: name) }
            try await other.save()
        }

        func storeText(_ text: String, named name: String, besides defaults: Defaults) async throws -> Bool {
            try await server.etcdctl(["put", prefix + name, text])
            return true
        }
    }

    @Test func everyCheckHoldsOnAPrefixOfItsOwn() async throws {
        try await EtcdServer.with { server in
            for check in StorageContract.allCases {
                try await check.check(Etcd(server: server, prefix: "contract/\(check.rawValue)/"))
            }
        }
    }
}
