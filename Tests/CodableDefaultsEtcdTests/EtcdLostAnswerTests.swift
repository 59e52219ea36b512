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

/// A proxy on a free port of 127.0.0.1 in front of one etcd member, for plain HTTP/1.0 calls, one request and its
/// answer per connection: it takes the client's `Connection: keep-alive` out of the request, so etcd closes the
/// connection after its answer and the client does not keep it. Watches are refused (closed at once). Its mode says
/// what it does with a call: forward it and its answer; forward it and drop the answer (etcd applies the call, the
/// client sees the connection closed without an answer); or close it unsent.
private final class LossyProxy: Sendable {
    enum Mode: Sendable { case forward, dropAnswers, closeUnsent }

    private let mode: Locked<Mode>
    private let acceptor: LoopbackAcceptor

    init(target: Int) throws {
        let mode = Locked(Mode.forward)
        self.mode = mode
        acceptor = try LoopbackAcceptor("the proxy") { client in
            Self.handle(client, target: target, mode: mode)
        }
    }

    var url: URL { URL(string: "http://127.0.0.1:\(acceptor.port)")! }

    func set(_ mode: Mode) { self.mode.withLock { $0 = mode } }

    func stop() { acceptor.stop() }

    /// One call: its request read whole (headers and `Content-Length` bytes), then dealt with as the mode says.
    private static func handle(_ client: Int32, target: Int, mode: Locked<Mode>) {
        defer { close(client) }
        guard let request = readRequest(client), !request.isWatch else { return }
        let mode = mode.withLock { $0 }
        guard mode != .closeUnsent else { return }
        let server = tcpSocket()
        defer { close(server) }
        guard server >= 0, connectLoopback(server, port: target) == 0, writeAllBytes(server, request.bytes) else {
            return
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(server, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        if mode == .forward { _ = writeAllBytes(client, answer) }
    }

    private struct Request {
        var bytes: [UInt8]
        var isWatch: Bool
    }

    /// The client's request, without its `Connection: keep-alive` (see the type).
    private static func readRequest(_ client: Int32) -> Request? {
        var buffer: [UInt8] = []
        guard let message = readHTTPMessage(from: client, buffer: &buffer),
            let end = message.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
        else { return nil }
        let head = String(decoding: message[..<end], as: UTF8.self)
        let kept = head.replacingOccurrences(of: "Connection: keep-alive\r\n", with: "")
        return Request(bytes: Array(kept.utf8) + message[end...], isWatch: head.contains(" /v3/watch "))
    }
}

/// A save whose answer never came (etcd applied it), then a newer change of the key kept while no endpoint
/// answered: sending the newer change finds the store's own earlier write in etcd, not another writer's.
@Suite("Defaults on etcd with a local copy: a save whose answer was lost", .needsEtcd)
struct EtcdLostAnswerTests {
    @Test func aChangeKeptAfterASaveWhoseAnswerWasLostIsNoConflictAndLands() async throws {
        try await EtcdServer.with { server in
            let target = try #require(URL(string: server.clientURL)?.port)
            let proxy = try LossyProxy(target: target)
            defer { proxy.stop() }
            let directory = try TemporaryDirectory()
            let reports = Recorder<DefaultsError>()
            // Opening needs an answer through the proxy; on a machine busy enough to let the request time out (a
            // full run on two cores), it is asked again (the copy does not exist yet, so opening cannot go on
            // without one).
            var opened: Defaults?
            for attempt in 1...10 where opened == nil {
                do {
                    opened = try await Defaults(
                        etcd: [proxy.url], prefix: "myservice/", saveMode: .manual,
                        localCopy: directory.file("copy.json")
                    ) { reports.append($0) }
                } catch let error as DefaultsError where error.message.contains("no endpoint answered") && attempt < 10
                {
                    continue
                }
            }
            let defaults = try #require(opened)
            let volume = Defaults.Key<Double>("volume", default: 0)
            defaults[volume] = 0.1
            try await defaults.save()

            // etcd applies 0.2, and its answer is lost: the store keeps the change, not knowing.
            proxy.set(.dropAnswers)
            defaults[volume] = 0.2
            try await defaults.save()
            #expect(defaults.etcd?.unsentChangeCount == 1)
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.2\n")
            // No endpoint answers; a newer change is kept.
            proxy.set(.closeUnsent)
            defaults[volume] = 0.3
            try await defaults.save()
            #expect(defaults.etcd?.unsentChangeCount == 1)

            proxy.set(.forward)
            #expect(try await eventually { defaults.etcd?.unsentChangeCount == 0 }, "\(reports.values)")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.3\n")
            #expect(!reports.values.contains { $0.code == .conflict }, "\(reports.values)")
            #expect(defaults[volume] == 0.3)
        }
    }
}
