import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A peer on a free port of 127.0.0.1 that accepts connections and never answers: each connection is read until
/// the client closes it. `connected` is signalled once a connection is accepted, `closed` once the client has
/// closed one. It stops (its listener and connections closed) when ``stop()`` is called.
private final class SilentPeer: @unchecked Sendable {
    let port: Int
    let connected = DispatchSemaphore(value: 0)
    let closed = DispatchSemaphore(value: 0)
    private let listener: Int32
    private let stopped = Locked(false)

    init() throws {
        listener = tcpSocket()
        guard listener >= 0 else { throw ChildProcessError(description: "socket: errno \(errno)") }
        guard bindLoopback(listener, port: 0) == 0, listen(listener, 16) == 0, let port = boundPort(listener) else {
            close(listener)
            throw ChildProcessError(description: "bind or listen: errno \(errno)")
        }
        self.port = port
        Thread.detachNewThread { [self] in
            while !stopped.withLock({ $0 }) {
                // A short wait at a time, so that a stop is seen where `shutdown` does not wake a waiting `accept`.
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 100) > 0 else { continue }
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { continue }
                connected.signal()
                Thread.detachNewThread { [self] in
                    defer { close(connection) }
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while !stopped.withLock({ $0 }) {
                        var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                        guard poll(&entry, 1, 100) > 0 else { continue }
                        let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress!, $0.count) }
                        if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
                            closed.signal()
                            return
                        }
                    }
                }
            }
            close(listener)
        }
    }

    /// Whether a connection was accepted (without waiting for one).
    var hasConnected: Bool {
        guard connected.wait(timeout: .now()) == .success else { return false }
        connected.signal()
        return true
    }

    /// `http://127.0.0.1:PORT`.
    var url: String { "http://127.0.0.1:\(port)" }

    /// Stops accepting and closes every connection (within a tenth of a second).
    func stop() { stopped.withLock { $0 = true } }
}

/// Connections to a peer that never answers: a call over HTTPS ends at its request timeout, cancelling a watch
/// closes its connection at once, and a watch's connection silent for the idle timeout ends the watch.
@Suite("EtcdClient: connections to a peer that never answers")
struct EtcdSilentPeerTests {
    @Test func aCallOverHTTPSEndsAtItsRequestTimeout() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        // The TLS handshake never completes: no certificate needs trusting.
        let client = try EtcdClient(endpoints: ["https://127.0.0.1:\(peer.port)"], requestTimeout: 1)
        let error = await #expect(throws: EtcdError.self) { try await client.put(Array("k".utf8), Array("1".utf8)) }
        #expect(error?.code == .unreachable, "\(String(describing: error))")
        // A machine too busy to connect within the timeout leaves no connection to close.
        if peer.hasConnected { #expect(try await signalled(peer.closed), "the call closed its connection") }
    }

    @Test func cancellingAWatchClosesItsConnectionAtOnce() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        // An idle timeout far longer than the test: only the cancellation can end the watch.
        let client = try EtcdClient(endpoints: [peer.url], watchIdleTimeout: 3600)
        let watching = Task {
            for try await _ in client.watch(prefix: Array("myservice/".utf8), startRevision: 0) {}
        }
        #expect(try await signalled(peer.connected), "the watch connected")
        watching.cancel()
        #expect(try await signalled(peer.closed), "the cancelled watch closed its connection")
        // It ends (how is the watch's own business: its stream ends on cancellation too).
        _ = await watching.result
    }

    @Test func aConnectionSilentForTheIdleTimeoutEndsTheWatch() async throws {
        let peer = try SilentPeer()
        defer { peer.stop() }
        let client = try EtcdClient(endpoints: [peer.url], watchIdleTimeout: 1)
        let error = await #expect(throws: EtcdError.self) {
            for try await _ in client.watch(prefix: Array("myservice/".utf8), startRevision: 0) {}
        }
        // The endpoint never accepted the watch: it did not answer.
        #expect(error?.code == .unreachable, "\(String(describing: error))")
        // A machine too busy to connect within the timeout leaves no connection to close.
        if peer.hasConnected { #expect(try await signalled(peer.closed), "the watch closed its connection") }
    }
}
