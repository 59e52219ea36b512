import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

/// Peers that are not etcd, standing in with fake servers (no etcd needed): one that closes while a request is
/// still being sent, one whose answers lack etcd's header. Each is an error, never the end of the process nor an
/// acknowledgement.
@Suite("EtcdClient: peers that close early or answer what etcd never would")
struct EtcdMisbehavingPeerTests {
    @Test func aPeerThatClosesWhileARequestIsSentIsAnErrorNotTheEndOfTheProcess() async throws {
        let peer = try TestTCPServer(.closeEarly)
        defer { withExtendedLifetime(peer) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [peer.url])
        let error = await #expect(throws: EtcdError.self) {
            try await client.put(utf8("k"), [UInt8](repeating: 0x41, count: 32 << 20))
        }
        #expect(error?.code == .unreachable)
    }

    @Test func answersWithoutEtcdsHeaderAreNotTakenAsAcknowledged() async throws {
        let fake = try TestTCPServer(.answer(utf8("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}")))
        defer { withExtendedLifetime(fake) {} }  // It closes its listener when it goes away.
        let client = try EtcdClient(endpoints: [fake.url])
        let put = await #expect(throws: EtcdError.self) { try await client.put(utf8("k"), utf8("1")) }
        #expect(put?.code == .badResponse)
        let opening = await #expect(throws: DefaultsError.self) {
            try await Defaults(etcd: [URL(string: fake.url)!], prefix: "myservice/")
        }
        #expect(opening?.code == .readFailed)

        // A watch that such a server ends at once is tried again with a backoff (50, 100, 200 ms, ...), not in a
        // tight loop: its fourth request comes 350 ms after the first at the earliest (a slow machine only adds).
        let storage = EtcdStorage(client: client, prefix: "myservice/", maximumDepth: 64)
        let started = ContinuousClock.now
        storage.startWatching(on: DispatchQueue(label: "test")) {}
        // (A long bound: the watch runs on Swift's cooperative pool, which tests running alongside may keep busy.)
        let fourth = try await eventually(timeout: 120) { fake.requests.filter { $0.contains("/v3/watch") }.count >= 4 }
        #expect(fourth)
        let elapsed = ContinuousClock.now - started
        storage.stopWatching()
        #expect(elapsed >= .milliseconds(300), "four watch requests within \(elapsed)")
    }
}
