import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real etcd for one test: one member, or a cluster of several, each a `/usr/bin/etcd` (or `$ETCD_BINARY`)
/// process listening on 127.0.0.1 only, on free ports, with its data directory and its standard error (never the
/// test's) in a temporary directory of its own.
///
/// Use ``with(members:_:)``: it starts the members, waits until each says it is healthy (a leader is elected),
/// runs the test, then stops them (SIGTERM, then SIGKILL after 5 s) and removes the directory, whether the
/// test passed or threw.
final class EtcdServer: @unchecked Sendable {
    /// One member: its ports, directory and process.
    final class Member: @unchecked Sendable {
        /// The member's name in the cluster (`m0`, `m1`, ...).
        let name: String
        /// The URL clients use: `http://127.0.0.1:PORT`.
        let clientURL: String
        /// The URL the other members use.
        let peerURL: String
        /// The data directory.
        let dataDirectory: String
        /// The file that holds the member's standard error (all its runs, appended).
        let logPath: String
        fileprivate var process: EtcdProcess?
        fileprivate var arguments: [String] = []
        /// The length of ``logPath`` when the running process was launched: where its own lines begin.
        fileprivate var logStart = 0

        /// The client port.
        let clientPort: Int

        fileprivate init(name: String, clientPort: Int, peerPort: Int, directory: URL, scheme: String) {
            self.name = name
            self.clientPort = clientPort
            clientURL = "\(scheme)://127.0.0.1:\(clientPort)"
            peerURL = "http://127.0.0.1:\(peerPort)"
            dataDirectory = directory.appendingPathComponent("\(name).data").path
            logPath = directory.appendingPathComponent("\(name).stderr").path
        }
    }

    /// The members, in the order of their names.
    let members: [Member]
    /// Every member's client URL.
    var clientURLs: [String] { members.map(\.clientURL) }
    /// The first member's client URL (the only one of a one-member server).
    var clientURL: String { members[0].clientURL }
    /// The temporary directory that holds the members' data and logs.
    let directory: TemporaryDirectory
    private let binary: String
    private let usesTLS: Bool
    private let lock = NSLock()

    /// How long a member may take to become healthy: a guard against a member that never starts, not a time it
    /// is expected to take (in a full `swift test` on two cores, starting members wait for the CPU with
    /// everything else).
    static let startTimeout: Double = 120

    /// Where the etcd executable is looked for: `$ETCD_BINARY`, else `/usr/bin/etcd`.
    static func binaryPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["ETCD_BINARY"] ?? "/usr/bin/etcd"
    }

    /// Where `etcdctl` is looked for: beside the etcd executable.
    static func etcdctlPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        URL(fileURLWithPath: binaryPath(environment: environment)).deletingLastPathComponent()
            .appendingPathComponent("etcdctl").path
    }

    /// The programs of ``binaryPath(environment:)`` and ``etcdctlPath(environment:)`` that are not executable
    /// here.
    static func missingPrograms(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        [binaryPath(environment: environment), etcdctlPath(environment: environment)].filter { access($0, X_OK) != 0 }
    }

    /// Whether etcd and etcdctl are installed, so that the tests that start etcd can run.
    static let isAvailable = missingPrograms().isEmpty

    /// Why the tests that start etcd are skipped where ``isAvailable`` is false: which program is missing, and
    /// how to get it.
    static func unavailableReason(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        "needs etcd and etcdctl, not found at \(missingPrograms(environment: environment).joined(separator: " and ")): "
            + "run `bash Scripts/install-etcd.sh` (Debian's etcd-server and etcd-client), or set $ETCD_BINARY to an "
            + "etcd executable that has etcdctl beside it"
    }

    /// ``unavailableReason(environment:)`` for this process, as the skip's comment.
    static var unavailableMessage: Comment { Comment(rawValue: unavailableReason()) }

    /// The etcd executable: ``binaryPath(environment:)``.
    ///
    /// - Throws: An error saying how to install etcd when there is none (a test that reaches this without the
    ///   ``Testing/Trait/needsEtcd`` trait fails, not skips).
    static func binary(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let path = binaryPath(environment: environment)
        guard access(path, X_OK) == 0 else {
            throw ChildProcessError(description: "these tests need etcd at \(path) (or $ETCD_BINARY): " + installHint)
        }
        return path
    }

    /// How to install etcd, for the errors of a missing etcd or etcdctl.
    static let installHint =
        "install it with `bash Scripts/install-etcd.sh` (`apt-get install etcd-server etcd-client`)"

    /// Starts etcd with `members` members (each also given `arguments`), runs `body`, and stops etcd whatever
    /// `body` did.
    ///
    /// With `tls` (a PEM certificate and key file), the members serve clients over HTTPS with it, and are waited
    /// for only until they listen (the test's URLSession does not trust a test certificate).
    static func with<Result>(
        members: Int = 1, arguments: [String] = [], tls: (certificate: String, key: String)? = nil,
        _ body: (EtcdServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(members: members, arguments: arguments, tls: tls)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Starts a fresh cluster of `count` members on new free ports, retrying with other ports when one was taken
    /// in the meantime.
    ///
    /// `firstPorts` (client and peer port of each member, in turn) are tried first instead of free ones: a test
    /// of this retry gives a port another etcd holds.
    static func start(
        members count: Int, arguments: [String] = [], tls: (certificate: String, key: String)? = nil,
        firstPorts: [Int]? = nil
    ) async throws -> EtcdServer {
        let binary = try binary()
        var attempt = 0
        while true {
            attempt += 1
            let ports = try attempt == 1 ? firstPorts ?? freePorts(2 * count) : freePorts(2 * count)
            let server = try EtcdServer(binary: binary, ports: ports, arguments: arguments, tls: tls)
            do {
                try await server.startAll()
                return server
            } catch is PortTakenError where attempt < 5 {
                await server.stop()
            }
        }
    }

    private init(binary: String, ports: [Int], arguments: [String], tls: (certificate: String, key: String)?) throws {
        self.binary = binary
        usesTLS = tls != nil
        directory = try TemporaryDirectory()
        let root = directory.url
        members = (0..<ports.count / 2).map { index in
            Member(
                name: "m\(index)", clientPort: ports[2 * index], peerPort: ports[2 * index + 1], directory: root,
                scheme: tls == nil ? "http" : "https")
        }
        let cluster = members.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ",")
        let token = "test-\(UUID().uuidString)"
        for member in members {
            member.arguments =
                [
                    "--name", member.name, "--data-dir", member.dataDirectory,
                    "--listen-client-urls", member.clientURL, "--advertise-client-urls", member.clientURL,
                    "--listen-peer-urls", member.peerURL, "--initial-advertise-peer-urls", member.peerURL,
                    "--initial-cluster", cluster, "--initial-cluster-state", "new",
                    "--initial-cluster-token", token,
                    "--logger", "zap", "--log-outputs", "stderr",
                ] + (tls.map { ["--cert-file", $0.certificate, "--key-file", $0.key] } ?? []) + arguments
        }
    }

    private func startAll() async throws {
        for member in members { try launch(member) }
        for member in members { try await waitUntilStarted(member) }
    }

    /// Waits until `member` serves: healthy, or over TLS (whose health check needs the certificate), listening.
    private func waitUntilStarted(_ member: Member) async throws {
        if usesTLS { try await waitUntilListening(member) } else { try await waitUntilHealthy(member) }
    }

    /// Starts `member`'s process (its output appended to its log file).
    private func launch(_ member: Member) throws {
        let start = try logBytes(of: member).count
        let process = try EtcdProcess(binary, member.arguments, stdout: member.logPath, stderr: member.logPath)
        lock.withLock {
            member.process = process
            member.logStart = start
        }
    }

    /// The line etcd logs once it has bound every port it was given (before it serves any).
    private static let servingLine = Data("now serving peer/client/metrics".utf8)

    /// Whether `member`'s running process has bound its ports. A port found free and released
    /// (``freePorts(_:)``) may be taken by another test's etcd before this member binds it; that etcd then
    /// answers on the member's port while the member fails to start, so an answer alone is not the member's.
    private func bindsItsPorts(_ member: Member) throws -> Bool {
        let start = lock.withLock { member.logStart }
        let bytes = try logBytes(of: member)
        return bytes.count > start && bytes[start...].range(of: Self.servingLine) != nil
    }

    /// `member`'s log file's bytes (empty before it exists).
    private func logBytes(of member: Member) throws -> Data {
        guard FileManager.default.fileExists(atPath: member.logPath) else { return Data() }
        return try Data(contentsOf: URL(fileURLWithPath: member.logPath))
    }

    /// Waits until `member` answers `/health` with `"true"`: a positive answer, polled, bounded by
    /// ``startTimeout``.
    ///
    /// - Throws: ``PortTakenError`` when the member exited because a port was taken; an error quoting its log
    ///   when it exited otherwise or was not healthy in time.
    func waitUntilHealthy(_ member: Member) async throws {
        let deadline = Date().addingTimeInterval(Self.startTimeout)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 2
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let url = URL(string: member.clientURL + "/health")!
        var last = "no answer yet"
        while Date() < deadline {
            if let exit = exited(member) {
                let log = log(of: member)
                if log.contains("address already in use") { throw PortTakenError() }
                throw ChildProcessError(
                    description: "etcd member \(member.name) ended (\(exit)) while starting: \(log)")
            }
            let own = try bindsItsPorts(member)
            do {
                let (data, _) = try await session.data(from: url)
                let text = String(decoding: data, as: UTF8.self)
                if text.contains("\"health\":\"true\"") && own { return }
                last = own ? text : "an answer from a process other than this member: \(text)"
            } catch {
                last = "\(error)"
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw ChildProcessError(
            description:
                "etcd member \(member.name) at \(member.clientURL) not healthy within \(Self.startTimeout) s "
                + "(last: \(last)); its log: \(log(of: member).suffix(2000))")
    }

    /// Waits until `member` accepts TCP connections on its client port, bounded by ``startTimeout``.
    func waitUntilListening(_ member: Member) async throws {
        let deadline = Date().addingTimeInterval(Self.startTimeout)
        while Date() < deadline {
            if let exit = exited(member) {
                if log(of: member).contains("address already in use") { throw PortTakenError() }
                throw ChildProcessError(description: "etcd member \(member.name) ended (\(exit)): \(log(of: member))")
            }
            if try acceptsConnections(port: member.clientPort) && bindsItsPorts(member) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw ChildProcessError(description: "etcd member \(member.name) not listening within \(Self.startTimeout) s")
    }

    /// How `member`'s process ended, or `nil` while it runs.
    private func exited(_ member: Member) -> ProcessExit? {
        lock.withLock {
            guard let process = member.process else { return .exited(-1) }
            return process.exitStatus()
        }
    }

    /// `member`'s standard error so far (every run).
    func log(of member: Member) -> String { fileText(member.logPath) }

    /// Kills `member` with SIGKILL (as a crash would) and waits until it is gone.
    func kill(_ member: Member) async throws {
        guard let process = lock.withLock({ member.process }) else { return }
        process.signal(SIGKILL)
        try await process.wait(timeout: 10)
        lock.withLock { member.process = nil }
    }

    /// Kills every member (SIGKILL) and removes its data: started again, the cluster is a new, empty one on the
    /// same ports (as one restored from a backup older than anything its clients saw).
    func killAndWipe() async throws {
        for member in members {
            try await kill(member)
            try FileManager.default.removeItem(atPath: member.dataDirectory)
        }
    }

    /// Starts `member` again on its ports and data, and waits until it is healthy.
    func restart(_ member: Member) async throws {
        try launch(member)
        try await waitUntilStarted(member)
    }

    /// Starts every member that is not running again on its ports and data (together: a member alone has no
    /// quorum), and waits until each is healthy.
    func restartStopped() async throws {
        let stopped = lock.withLock { members.filter { $0.process == nil } }
        for member in stopped { try launch(member) }
        for member in stopped { try await waitUntilStarted(member) }
    }

    /// Stops every member (SIGTERM, then SIGKILL after 5 s). The directory goes with the value.
    func stop() async {
        let processes = lock.withLock { members.compactMap(\.process) }
        for process in processes { process.signal(SIGTERM) }
        for process in processes {
            do {
                try await process.wait(timeout: 5)
            } catch {
                // `wait` killed it with SIGKILL after the timeout: it is gone, which is what stopping asks.
            }
        }
        lock.withLock { for member in members { member.process = nil } }
    }

    /// Runs `etcdctl` (API 3, beside the etcd binary or `/usr/bin/etcdctl`) with `arguments` against
    /// `endpoints` (every member by default), and returns its standard output.
    ///
    /// - Throws: An error quoting its standard error when it exits with a non-zero status or takes over 30 s.
    @discardableResult
    func etcdctl(_ arguments: [String], endpoints: [String]? = nil) async throws -> String {
        let executable = URL(fileURLWithPath: binary).deletingLastPathComponent().appendingPathComponent("etcdctl").path
        guard access(executable, X_OK) == 0 else {
            throw ChildProcessError(description: "these tests need etcdctl at \(executable): " + Self.installHint)
        }
        let run = UUID().uuidString
        let stdout = directory.url.appendingPathComponent("etcdctl-\(run).out").path
        let stderr = directory.url.appendingPathComponent("etcdctl-\(run).err").path
        // etcdctl's own timeouts (5 s to connect, 5 s per command) are shorter than a loaded test machine may need
        // (etcdctl gave up so with two cores at load 12); this call's own 30 s bound stays the one that counts.
        let endpointList = (endpoints ?? clientURLs).joined(separator: ",")
        let all = ["--endpoints", endpointList, "--dial-timeout=25s", "--command-timeout=25s"] + arguments
        let process = try EtcdProcess(
            executable, all, environment: ["ETCDCTL_API": "3"], stdout: stdout, stderr: stderr)
        let status = try await process.wait(timeout: 30)
        guard status == .exited(0) else {
            throw ChildProcessError(
                description: "etcdctl \(all.joined(separator: " ")) ended with \(status): \(fileText(stderr))")
        }
        return fileText(stdout)
    }
}

extension Trait where Self == ConditionTrait {
    /// Skips a test or suite that starts etcd where etcd or etcdctl is not installed, saying which and how to
    /// install it (`.ci/run` installs them, and fails when a test was skipped).
    static var needsEtcd: Self { .enabled(if: EtcdServer.isAvailable, EtcdServer.unavailableMessage) }
}

/// An etcd member exited because one of its ports was taken after it was picked.
struct PortTakenError: Error {}

/// `count` distinct TCP ports of 127.0.0.1 free right now: bound to port 0 together (so the kernel gives
/// different ones), then released.
func freePorts(_ count: Int) throws -> [Int] {
    var sockets: [Int32] = []
    defer { for socket in sockets { close(socket) } }
    var ports: [Int] = []
    for _ in 0..<count {
        let descriptor = tcpSocket()
        guard descriptor >= 0 else { throw ChildProcessError(description: "socket failed: errno \(errno)") }
        sockets.append(descriptor)
        guard bindLoopback(descriptor, port: 0) == 0 else {
            throw ChildProcessError(description: "bind failed: errno \(errno)")
        }
        guard let port = boundPort(descriptor) else {
            throw ChildProcessError(description: "getsockname failed: errno \(errno)")
        }
        ports.append(port)
    }
    return ports
}

/// A TCP port of 127.0.0.1 that refuses connections for as long as the value lives: bound, never listening. A
/// port found free and released (``freePorts(_:)``) may be taken meanwhile by an etcd another test starts,
/// which then answers where a test expects "connection refused"; a port held bound cannot be.
final class RefusingPort: Sendable {
    /// The port.
    let port: Int
    private let descriptor: Int32

    /// Binds a port the kernel picks.
    init() throws {
        descriptor = tcpSocket()
        guard descriptor >= 0 else { throw ChildProcessError(description: "socket failed: errno \(errno)") }
        guard bindLoopback(descriptor, port: 0) == 0, let port = boundPort(descriptor) else {
            close(descriptor)
            throw ChildProcessError(description: "bind failed: errno \(errno)")
        }
        self.port = port
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:PORT`.
    var url: String { "http://127.0.0.1:\(port)" }
}

/// Whether something accepts a TCP connection on 127.0.0.1:`port` right now.
func acceptsConnections(port: Int) -> Bool {
    let descriptor = tcpSocket()
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return connectLoopback(descriptor, port: port) == 0
}

/// A new TCP socket (IPv4), or -1. A write to it after the peer closed is an error (`EPIPE`), never a `SIGPIPE`
/// that would end the tests: see ``withoutSigpipe(_:)``.
func tcpSocket() -> Int32 {
    #if canImport(Glibc)
        withoutSigpipe(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0))
    #else
        withoutSigpipe(socket(AF_INET, SOCK_STREAM, 0))
    #endif
}

/// Returns `descriptor`, a socket (or -1), after making a write to it after the peer closed an error rather than a
/// `SIGPIPE`: on Apple platforms with the socket option `SO_NOSIGPIPE` (sys/socket.h), as the library's client
/// does; on Linux, where no such option exists, every `send` of the tests passes `MSG_NOSIGNAL` instead.
func withoutSigpipe(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
        if descriptor >= 0 {
            var on: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    #endif
    return descriptor
}

/// Binds `descriptor` to 127.0.0.1:`port` (0: a free port the kernel picks); `bind`'s result.
func bindLoopback(_ descriptor: Int32, port: Int) -> Int32 {
    withLoopbackAddress(port: port) { bind(descriptor, $0, $1) }
}

/// Connects `descriptor` to 127.0.0.1:`port`; `connect`'s result.
func connectLoopback(_ descriptor: Int32, port: Int) -> Int32 {
    withLoopbackAddress(port: port) { connect(descriptor, $0, $1) }
}

/// The port `descriptor` is bound to, or `nil` when `getsockname` fails.
func boundPort(_ descriptor: Int32) -> Int? {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return named == 0 ? Int(UInt16(bigEndian: address.sin_port)) : nil
}

/// Calls `body` with the address 127.0.0.1:`port` and its length.
private func withLoopbackAddress(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var address = sockaddr_in()
    #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)  // BSD's sockaddr has a length field
    #endif
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}
