import CodableDefaults
import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaultsEtcd

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if !canImport(Darwin)
    /// A proxy in front of one etcd member that forwards a connection's requests one at a time with their answers,
    /// and after `answeredPerConnection` answers either closes the connection at once (`closesWhenIdle`: a server
    /// closing an idle connection kept alive) or closes it when the next request arrives, unanswered and without
    /// passing it on (as a server, or a proxy, that lost the connection after the client sent on it). It counts the
    /// connections, the ones it closed, and the requests that reached etcd.
    private final class ClosingProxy: Sendable {
        private let acceptor: LoopbackAcceptor
        private let counts: Locked<(connections: Int, forwarded: Int, closed: Int)>

        init(target: Int, answeredPerConnection: Int, closesWhenIdle: Bool) throws {
            let counts = Locked((connections: 0, forwarded: 0, closed: 0))
            self.counts = counts
            acceptor = try LoopbackAcceptor("the proxy") { client in
                counts.withLock { $0.connections += 1 }
                defer {
                    shutdown(client, Int32(SHUT_RDWR))
                    close(client)
                    counts.withLock { $0.closed += 1 }
                }
                let server = tcpSocket()
                defer { close(server) }
                guard server >= 0, connectLoopback(server, port: target) == 0 else { return }
                var fromClient: [UInt8] = []
                var fromServer: [UInt8] = []
                var answered = 0
                while let request = readHTTPMessage(from: client, buffer: &fromClient) {
                    guard answered < answeredPerConnection, writeAllBytes(server, request) else { return }
                    counts.withLock { $0.forwarded += 1 }
                    guard let answer = readHTTPMessage(from: server, buffer: &fromServer),
                        writeAllBytes(client, answer)
                    else { return }
                    answered += 1
                    if closesWhenIdle && answered == answeredPerConnection { return }
                }
            }
        }

        var url: String { "http://127.0.0.1:\(acceptor.port)" }
        var connections: Int { counts.withLock { $0.connections } }
        var forwarded: Int { counts.withLock { $0.forwarded } }
        var closed: Int { counts.withLock { $0.closed } }

        func stop() { acceptor.stop() }
    }

    /// A server that takes each connection's request and never answers, and counts the connections the client
    /// closed (their end of stream).
    private final class SilentServer: Sendable {
        private let acceptor: LoopbackAcceptor
        private let ended: Locked<Int>

        init() throws {
            let ended = Locked(0)
            self.ended = ended
            acceptor = try LoopbackAcceptor("the server") { client in
                defer { close(client) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(client, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                }
                ended.withLock { $0 += 1 }
            }
        }

        var url: String { "http://127.0.0.1:\(acceptor.port)" }
        var connectionsEnded: Int { ended.withLock { $0 } }
        func stop() { acceptor.stop() }
    }

    @Suite("EtcdClient over plain HTTP: connections kept alive", .needsEtcd)
    struct EtcdPlainKeepAliveTests {
        @Test func callsKeepTheirConnectionAliveAndOpenANewOneAfterARestart() async throws {
            try await EtcdServer.with { server in
                let client = try EtcdClient(endpoints: [server.clientURL])
                for index in 0..<20 { try await client.put(Array("app/\(index)".utf8), Array("\(index)".utf8)) }
                #expect(client.httpConnections == (opened: 1, idle: 1))

                // Concurrent calls each take a connection; at most four wait idle after.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<8 {
                        group.addTask { try await client.put(Array("app/c\(index)".utf8), Array("1".utf8)) }
                    }
                    try await group.waitForAll()
                }
                #expect(client.httpConnections.opened <= 8 && client.httpConnections.idle <= 4)
                #expect(try await client.range(prefix: Array("app/".utf8)).keyValues.count == 28)

                // An error answer keeps the connection too (etcd sends it with a length).
                let before = client.httpConnections.opened
                await #expect(throws: EtcdError.self) { try await client.put([], Array("1".utf8)) }
                #expect(try await client.get(Array("app/3".utf8))?.value == Array("3".utf8))
                #expect(client.httpConnections.opened == before)

                // The member restarts: the kept connections are dead, and the next call opens a new one.
                try await server.kill(server.members[0])
                try await server.restart(server.members[0])
                #expect(try await client.get(Array("app/4".utf8))?.value == Array("4".utf8))
                #expect(client.httpConnections.opened > before)
            }
        }

        /// A call that times out closes its connection: none is left open, nor kept.
        @Test func aCallThatTimesOutClosesItsConnection() async throws {
            let silent = try SilentServer()
            defer { silent.stop() }
            let client = try EtcdClient(endpoints: [silent.url], requestTimeout: 0.2)
            for _ in 0..<3 {
                let error = await #expect(throws: EtcdError.self) { _ = try await client.get(Array("k".utf8)) }
                #expect(error?.code == .unreachable)
            }
            #expect(try await eventually { silent.connectionsEnded == 3 }, "\(silent.connectionsEnded) closed")
            #expect(client.httpConnections == (opened: 3, idle: 0))
        }

        /// A kept connection the server closed while it was idle is not used: the call goes on a new one.
        @Test func aConnectionTheServerClosedWhileIdleIsNotUsed() async throws {
            try await EtcdServer.with { server in
                let target = try #require(URL(string: server.clientURL)?.port)
                let proxy = try ClosingProxy(target: target, answeredPerConnection: 1, closesWhenIdle: true)
                defer { proxy.stop() }
                let client = try EtcdClient(endpoints: [proxy.url])
                _ = try await client.put(Array("k".utf8), Array("1".utf8))
                #expect(try await eventually { proxy.closed == 1 })
                _ = try await client.put(Array("k".utf8), Array("2".utf8))
                #expect(client.httpConnections.opened == 2)
                #expect(proxy.forwarded == 2)
                #expect(try await server.etcdctl(["get", "--print-value-only", "k"]) == "2\n")
            }
        }

        /// A kept connection that ends after the request was sent, without an answer, is an error: the request
        /// may have been acted on (here a proxy took it), so it is never sent again by the transport. The next call
        /// opens a new connection.
        @Test func aRequestSentOnAConnectionThatEndsUnansweredIsNotSentAgain() async throws {
            try await EtcdServer.with { server in
                let target = try #require(URL(string: server.clientURL)?.port)
                let proxy = try ClosingProxy(target: target, answeredPerConnection: 1, closesWhenIdle: false)
                defer { proxy.stop() }
                let client = try EtcdClient(endpoints: [proxy.url])
                _ = try await client.put(Array("k".utf8), Array("1".utf8))
                #expect(client.httpConnections == (opened: 1, idle: 1))
                let error = await #expect(throws: EtcdError.self) {
                    _ = try await client.put(Array("k".utf8), Array("2".utf8))
                }
                #expect(error?.code == .unreachable, "\(String(describing: error))")
                #expect(proxy.forwarded == 1 && client.httpConnections == (opened: 1, idle: 0))
                _ = try await client.put(Array("k".utf8), Array("3".utf8))
                #expect(client.httpConnections.opened == 2 && proxy.forwarded == 2)
                #expect(try await server.etcdctl(["get", "--print-value-only", "k"]) == "3\n")
            }
        }
    }
#endif
