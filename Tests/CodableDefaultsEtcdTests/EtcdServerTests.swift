import Foundation
import Testing

/// The tests' own etcd: a server is never another test's.
@Suite("The tests' etcd servers", .needsEtcd)
struct EtcdServerTests {
    /// A port found free may be taken by another test's etcd before a member binds it. The member then fails to
    /// start, and the other etcd answers on its port: the server must start on other ports, not take that etcd
    /// for its member (two tests then shared one cluster, and one enabling authentication failed the other).
    @Test func aServerWhosePortAnotherEtcdHoldsStartsOnOtherPorts() async throws {
        try await EtcdServer.with { first in
            let second = try await EtcdServer.start(
                members: 1, firstPorts: [first.members[0].clientPort] + freePorts(1))
            do {
                #expect(second.clientURL != first.clientURL)
                try await second.etcdctl(["put", "only-in-the-second", "1"])
                #expect(try await first.etcdctl(["get", "--print-value-only", "only-in-the-second"]).isEmpty)
                await second.stop()
            } catch {
                await second.stop()
                throw error
            }
        }
    }
}
