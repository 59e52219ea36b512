import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The value etcd holds at `key`, as `etcdctl get --print-value-only` prints it.
private func stored(_ key: String, _ server: EtcdServer) async throws -> String {
    try await server.etcdctl(["get", "--print-value-only", key])
}

@Suite("Defaults on etcd with a local copy: edge cases of kept changes", .needsEtcd)
struct EtcdLocalCopyEdgeTests {
    @Test func aChangeKeptOfAKeyRemovedBeforeTheOutageLandsWithoutAConflict() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let urls = server.clientURLs.map { URL(string: $0)! }
            let reports = Recorder<DefaultsError>()
            let defaults = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .immediate, localCopy: directory.file("copy.json")
            ) { reports.append($0) }
            let theme = Defaults.Key<String?>("theme")
            let volume = Defaults.Key<Double>("volume", default: 0)
            // theme: set and removed by this store; volume: set and removed by another writer, seen by the watch.
            defaults[theme] = "light"
            defaults[theme] = nil
            _ = try await server.etcdctl(["put", "myservice/volume", "0.1"])
            #expect(try await eventually { defaults[volume] == 0.1 })
            _ = try await server.etcdctl(["del", "myservice/volume"])
            #expect(try await eventually { defaults[volume] == 0 })
            for member in server.members { try await server.kill(member) }
            defaults[theme] = "dark"
            defaults[volume] = 0.5
            #expect(defaults.unsentChangeCount == 2)
            for member in server.members { try await server.restart(member) }
            #expect(try await eventually { defaults.unsentChangeCount == 0 })
            #expect(try await stored("myservice/theme", server) == "\"dark\"\n")
            #expect(try await stored("myservice/volume", server) == "0.5\n")
            #expect(!reports.values.contains { $0.code == .conflict }, "\(reports.values)")
            #expect(defaults[theme] == "dark" && defaults[volume] == 0.5)
        }
    }
}
