import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// A store on etcd is among the stores that are flushed together (`Defaults.saveAll()`: at exit, and when an
/// app is suspended), though no path names it.
@Suite("Defaults on etcd: flushed with every other store", .needsEtcd)
struct EtcdSaveAllTests {
    @Test func saveAllSavesAnEtcdStoresPendingChanges() async throws {
        try await EtcdServer.with { server in
            let defaults = try await Defaults(
                etcd: [URL(string: server.clientURL)!], prefix: "f/", saveMode: .afterIdle(.seconds(3600)))
            defaults.set(7, forKey: "count")
            #expect(try await server.etcdctl(["get", "--print-value-only", "f/count"]) == "", "not saved yet")
            // Only this test's store: the registry is the process's, and other tests' stores are theirs.
            StoreRegistry.saveAll { $0 === defaults.store }
            #expect(try await server.etcdctl(["get", "--print-value-only", "f/count"]) == "7\n")
        }
    }
}
