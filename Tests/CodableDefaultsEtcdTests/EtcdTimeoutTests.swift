import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc

    /// A loopback port whose listener never accepts and whose queue is full: the kernel drops further SYNs, so a
    /// connection to it neither succeeds nor fails, as to a member behind a firewall that drops packets.
    final class UnansweredPort: Sendable {
        /// The port.
        let port: Int
        private let descriptors: [Int32]

        init() throws {
            let listener = tcpSocket()
            guard listener >= 0, bindLoopback(listener, port: 0) == 0, listen(listener, 0) == 0,
                let port = boundPort(listener)
            else { throw ChildProcessError(description: "cannot listen on loopback: errno \(errno)") }
            // The queue of a listener with backlog 0 holds one connection: two fill it (the second waits as the
            // kernel's SYN queue takes it), and later SYNs are dropped.
            var fillers: [Int32] = []
            for _ in 0..<2 {
                let filler = tcpSocket()
                _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL, 0) | O_NONBLOCK)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                fillers.append(filler)
            }
            self.port = port
            descriptors = [listener] + fillers
        }

        deinit { for descriptor in descriptors { close(descriptor) } }
    }

    /// The milliseconds a message says a connection waited ("after 300 ms"), or `nil`.
    private func waited(in message: String) -> Int? {
        guard let range = message.range(of: #"after (\d+) ms"#, options: .regularExpression) else { return nil }
        return Int(message[range].dropFirst(6).dropLast(3))
    }

    @Suite("etcd timeouts: connecting and answering, as etcdctl's --dial-timeout and --command-timeout")
    struct EtcdTimeoutTests {
        @Test func aMemberThatNeverAcceptsIsLeftAfterTheConnectTimeoutNotTheRequestTimeout() async throws {
            let silent = try UnansweredPort()
            for scheme in ["http", "https"] {
                let client = try EtcdClient(
                    endpoints: ["\(scheme)://127.0.0.1:\(silent.port)"], connectTimeout: 0.3, requestTimeout: 60)
                let error = await #expect(throws: EtcdError.self) { try await client.get(Array("k".utf8)) }
                let message = error?.failures.first?.reason ?? ""
                #expect(error?.code == .unreachable)
                // The connect timeout, not the request's minute: the message says how long it waited.
                let milliseconds = try #require(waited(in: message), "\(scheme): \(message)")
                #expect(milliseconds < 5_000, "\(scheme): \(message)")
            }
        }

        @Test func timeoutsThatAreNotMoreThanZeroAreRefusedWhenTheStoreOpens() async throws {
            for timeouts in [EtcdTimeouts(connect: .zero), EtcdTimeouts(request: .seconds(-1))] {
                let error = await #expect(throws: DefaultsError.self) {
                    _ = try await Defaults(
                        etcd: [URL(string: "http://127.0.0.1:1")!], prefix: "p/", timeouts: timeouts)
                }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.contains("timeout") == true)
            }
        }

        /// The longest timeouts a `Duration` holds convert without a trap, on both transports.
        @Test func theLongestTimeoutsAreTaken() async throws {
            let refusing = try RefusingPort()
            let longest = EtcdTimeouts(connect: .seconds(Int64.max), request: .seconds(Int64.max))
            for scheme in ["http", "https"] {
                let error = await #expect(throws: DefaultsError.self) {
                    _ = try await Defaults(
                        etcd: [URL(string: "\(scheme)://127.0.0.1:\(refusing.port)")!], prefix: "p/", timeouts: longest)
                }
                #expect(error?.code == .readFailed, "\(scheme): \(String(describing: error))")
            }
        }

        @Test func theToolTakesEtcdctlsTimeoutOptions() async throws {
            let silent = try UnansweredPort()
            let path = try Fixture.locate("codable-defaults")
            let store = ["--etcd", "http://127.0.0.1:\(silent.port)", "--prefix", "p/"]
            let (status, _, errors) = try await onThread {
                let child = try ChildProcess(
                    path, ["read"] + store + ["--dial-timeout", "300ms", "--command-timeout", "1m", "k"])
                child.closeInput()
                _ = try child.readToEndBlocking(timeout: 30)
                return (try child.waitBlocking(timeout: 30), 0, try child.standardError())
            }
            #expect(status == .exited(4))
            #expect((waited(in: errors) ?? .max) < 5_000, "\(errors)")
            let refused = try await onThread {
                try runCommandBlocking([path, "read"] + store + ["--dial-timeout", "2", "k"])
            }
            #expect(refused.status == .exited(2))
        }
    }
#endif
