import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file that holds the system's trust store for libcurl (and so `URLSession`) on Debian.
private let systemTrustStore = "/etc/ssl/certs/ca-certificates.crt"

/// Whether this machine lets a test give one process a trust store of its own: a private mount namespace
/// (`unshare --mount`, root; Linux only) in which a file is bound over ``systemTrustStore``.
private let canGiveAProcessATrustStore: Bool = {
    #if os(Linux)
        guard getuid() == 0, access(systemTrustStore, R_OK) == 0, findExecutable("unshare") != nil else {
            return false
        }
        do {
            let (status, _) = try runCommandBlocking(["unshare", "--mount", "true"])
            return status == .exited(0)
        } catch {
            return false
        }
    #else
        return false
    #endif
}()

/// Why the tests of ``canGiveAProcessATrustStore`` are skipped.
private let trustStoreMessage: Comment = {
    #if os(Linux)
        return "needs root, \(systemTrustStore) and `unshare --mount` (util-linux), to give one process a trust store"
    #else
        return "needs Linux: it gives one process a trust store with `unshare --mount` over \(systemTrustStore)"
    #endif
}()

/// Starts `codable-defaults-etcd-fixture` with `arguments` in a mount namespace of its own whose system trust
/// store is `certificate` alone: the library checks etcd's certificate against the system's trust store, as in
/// production, and the test's certificate is the one authority that store holds (nothing changes outside that
/// process).
private func startTrusting(_ certificate: String, _ arguments: [String]) throws -> ChildProcess {
    let fixture = try Fixture.locate("codable-defaults-etcd-fixture")
    let unshare = try #require(findExecutable("unshare"), "this test needs unshare (util-linux)")
    let script = "mount --bind \"$1\" \(systemTrustStore) && shift && exec \"$@\""
    return try ChildProcess(unshare, ["--mount", "sh", "-c", script, "sh", certificate, fixture] + arguments)
}

/// The next line of `child` that is not a `changed` event (an answer, a `reported` error or the end).
private func nextLine(_ child: ChildProcess, skippingChanges: Bool = true) throws -> String {
    while true {
        let line = try child.readLineBlocking(timeout: 60) ?? "end of output"
        if skippingChanges && line.hasPrefix("changed ") { continue }
        return line
    }
}

@Suite(
    "Defaults on etcd over HTTPS, the certificate trusted through the system's trust store",
    .needsEtcd, .needsOpenSSL,
    .enabled(if: canGiveAProcessATrustStore, trustStoreMessage))
struct EtcdHTTPSTests {
    @Test func setsLandAndTheWatchBringsChangesToTheOtherHandle() async throws {
        let made = try await TestCertificate()
        try await EtcdServer.with(tls: made.tls) { server in
            #expect(server.clientURL.hasPrefix("https://"))
            let arguments = [server.clientURL, "myservice/"]
            let lines = try await onThread { () throws -> [String] in
                let a = try startTrusting(made.certificate, arguments)
                let b = try startTrusting(made.certificate, arguments)
                var lines = [try nextLine(a).prefix(5), try nextLine(b).prefix(5)].map(String.init)
                lines.append(try b.askBlocking("observe volume"))
                lines.append(try b.askBlocking("observe profile"))
                lines.append(try a.askBlocking("set volume 0.8"))
                lines.append(try nextLine(b, skippingChanges: false))
                lines.append(try a.askBlocking("set profile {\"name\":\"https\"}"))
                lines.append(try nextLine(b, skippingChanges: false))
                lines.append(try a.askBlocking("quit"))
                lines.append(try b.askBlocking("quit"))
                lines.append("\(try a.waitBlocking(timeout: 30)) \(try b.waitBlocking(timeout: 30))")
                return lines
            }
            #expect(
                lines == [
                    "ready", "ready", "ok", "ok", "ok", "changed volume 0.8", "ok",
                    #"changed profile {"name":"https"}"#, "bye", "bye", "exit status 0 exit status 0",
                ])
            let stored = try await server.etcdctl(["--cacert", made.certificate, "get", "myservice/volume"])
            #expect(stored == "myservice/volume\n0.8\n")
        }
    }

    @Test func etcdsErrorAnswersAreClearErrorsAndTheProcessGoesOn() async throws {
        let made = try await TestCertificate()
        try await EtcdServer.with(tls: made.tls) { server in
            let etcdctl = { (arguments: [String]) in
                _ = try await server.etcdctl(["--cacert", made.certificate] + arguments)
            }
            // A user who may read the prefix but not write it; then authentication on.
            try await etcdctl(["role", "add", "reader"])
            try await etcdctl(["role", "grant-permission", "reader", "--prefix=true", "read", "myservice/"])
            try await etcdctl(["user", "add", "reader:readerpass"])
            try await etcdctl(["user", "grant-role", "reader", "reader"])
            try await etcdctl(["user", "add", "root:rootpass"])
            try await etcdctl(["auth", "enable"])

            let url = server.clientURL
            let outcome = try await onThread { () throws -> [String: [String]] in
                var outcome: [String: [String]] = [:]
                // A wrong password: refused when the store opens; the process exits on its own terms.
                let wrong = try startTrusting(made.certificate, [url, "myservice/", "--user", "root", "wrong"])
                outcome["wrong password"] = [try nextLine(wrong), "\(try wrong.waitBlocking(timeout: 30))"]
                // No user at all, on a cluster with authentication.
                let anonymous = try startTrusting(made.certificate, [url, "myservice/"])
                outcome["no user"] = [try nextLine(anonymous), "\(try anonymous.waitBlocking(timeout: 30))"]
                // A user who may not write: the store opens, a write is refused, the process goes on.
                let reader = try startTrusting(made.certificate, [url, "myservice/", "--user", "reader", "readerpass"])
                var lines = [String(try nextLine(reader).prefix(5))]
                lines.append(try reader.askBlocking("set volume 1"))  // The report of the failed save,
                lines.append(try nextLine(reader))  // then the answer.
                lines.append(try reader.askBlocking("get volume"))
                lines.append(try reader.askBlocking("flush"))
                lines.append(try reader.askBlocking("echo still here"))
                outcome["reader"] = lines
                return outcome
            }

            let wrong = try #require(outcome["wrong password"])
            #expect(wrong.first?.hasPrefix("error ") == true, "\(wrong)")
            #expect(wrong.first?.contains("authentication failed") == true, "\(wrong)")
            #expect(wrong.last == "exit status 1")

            let anonymous = try #require(outcome["no user"])
            #expect(anonymous.first?.contains("user name is empty") == true, "\(anonymous)")
            #expect(anonymous.last == "exit status 1")

            let reader = try #require(outcome["reader"])
            #expect(reader.count == 6, "\(reader)")
            guard reader.count == 6 else { return }
            #expect(reader[0] == "ready")
            // The `.immediate` set reports its failed save before it returns.
            #expect(reader[1].hasPrefix("reported "), "\(reader[1])")
            #expect(reader[1].contains("writeFailed") && reader[1].contains("permission denied"), "\(reader[1])")
            #expect(reader[2] == "ok")
            #expect(reader[3] == "value volume 1", "the refused change stays unsaved in memory")
            #expect(reader[4].hasPrefix("error ") && reader[4].contains("permission denied"), "\(reader[4])")
            #expect(reader[5] == "echo still here")
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Skips a test that starts ``TrailerServer`` where `python3` is not installed, saying so.
    fileprivate static var needsPython: Self {
        .enabled(
            if: findExecutable("python3") != nil,
            "needs python3 to serve answers with an HTTP trailer over TLS, and it is not installed")
    }
}

/// The script (``PythonTLSServer`` runs it) of a stand-in for etcd's gateway over TLS on 127.0.0.1 (python3's `ssl` and
/// `http.server`, port chosen by the system) whose every answer is chunked and ends in an HTTP trailer, as etcd 3.4's
/// gateway answers when gRPC gave it trailing metadata. `/v3/auth/authenticate` gives a token for the password `right`
/// (HTTP 200) and refuses any other (HTTP 400, etcd's words); `/v3/kv/range` answers the user `reader` with no keys
/// (HTTP 200) and refuses anyone else with etcd's "permission denied" (HTTP 403), as every other path (`/v3/watch`
/// included) does. It prints its port, then `request PATH` for each request, on its standard output.
private enum TrailerServer {
    static let script = #"""
        import http.server, json, socketserver, ssl, sys

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                print("request %s" % self.path, flush=True)
                token = self.headers.get("Authorization")
                if self.path == "/v3/auth/authenticate":
                    request = json.loads(body)
                    if request.get("password") == "right":
                        status, answer = 200, {"header": {"revision": "1"}, "token": "token." + request.get("name")}
                    else:
                        message = "etcdserver: authentication failed, invalid user ID or password"
                        status, answer = 400, {"error": message, "code": 3, "message": message}
                elif self.path == "/v3/kv/range" and token == "token.reader":
                    status, answer = 200, {"header": {"revision": "1"}}
                else:
                    message = "etcdserver: permission denied"
                    status, answer = 403, {"error": message, "code": 7, "message": message}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Trailer", "Grpc-Trailer-Content-Type")
                self.end_headers()
                self.wfile.write(b"%x\r\n%s\r\n0\r\nGrpc-Trailer-Content-Type: application/grpc\r\n\r\n" % (len(data), data))
                self.wfile.flush()

            def log_message(self, *arguments):
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        server = Server(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        context.set_alpn_protocols(["http/1.1"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#
}

/// A python3 server over TLS on 127.0.0.1 running `script` with a test certificate (the script gets the
/// certificate's and key's paths, prints its port first, then a line per event): ``TrailerServer``'s and
/// ``RedirectingServer``'s stand-ins for etcd's gateway.
private struct PythonTLSServer {
    let process: ChildProcess
    /// `https://127.0.0.1:PORT`.
    let url: String
    /// The certificate the server presents (a client must trust it).
    let made: TestCertificate

    /// Makes a test certificate, starts `script` with it (off the cooperative pool), and waits for its port.
    static func start(_ script: String, named name: String) async throws -> PythonTLSServer {
        let made = try await TestCertificate()
        return try await onThread { try PythonTLSServer(script, named: name, made) }
    }

    /// Starts `script` (written next to `certificate`'s files as `name`) and waits for its port.
    private init(_ script: String, named name: String, _ certificate: TestCertificate) throws {
        made = certificate
        let python = try #require(findExecutable("python3"), "this test needs python3")
        let path = certificate.directory.file(name).path
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        process = try ChildProcess(python, [path, certificate.certificate, certificate.key])
        let port = try process.readLineBlocking(timeout: 30)
        guard let port, Int(port) != nil else {
            throw ChildProcessError(
                description: "the server \(name) did not start: \(port ?? "no port"); \(try process.standardError())")
        }
        url = "https://127.0.0.1:\(port)"
    }

    /// Waits until the server was asked for `path` `count` times; returns every line it printed until then.
    func waitForRequests(to path: String, count: Int) throws -> [String] {
        var lines: [String] = []
        while lines.filter({ $0 == "request " + path }).count < count {
            guard let line = try process.readLineBlocking(timeout: 60) else {
                throw ChildProcessError(description: "the server stopped; it printed \(lines)")
            }
            lines.append(line)
        }
        return lines
    }

    /// Stops the server and returns the lines it printed since the last wait.
    func stop() throws -> [String] {
        process.kill(SIGKILL)
        let lines = try process.readToEndBlocking(timeout: 30)
        _ = try process.waitBlocking(timeout: 30)
        return lines
    }
}

/// Whether the library speaks HTTPS and watches through libcurl here (Linux with glibc), not through URLSession,
/// which stops the process on an answer with a trailer (swift-corelibs-foundation issue 5285).
private let speaksThroughLibcurl: Bool = {
    #if canImport(Glibc)
        return true
    #else
        return false
    #endif
}()

@Suite(
    "Defaults over HTTPS from a server whose answers end in an HTTP trailer",
    .needsOpenSSL, .needsPython,
    .enabled(if: canGiveAProcessATrustStore, trustStoreMessage),
    .enabled(
        if: speaksThroughLibcurl,
        "here HTTPS goes through URLSession, which stops the process on a trailer (swift-corelibs-foundation 5285)"))
struct EtcdHTTPSTrailerTests {
    /// swift-corelibs-foundation's URLSession (up to Swift 6.3.x) stops the process on an answer with a trailer
    /// (issue 5285): the store's process must instead get etcd's error, as a clear error, and end on its own terms.
    @Test func answersWithATrailerAreAnswersAndTheProcessGoesOn() async throws {
        let server = try await PythonTLSServer.start(TrailerServer.script, named: "trailer-server.py")
        let (made, url) = (server.made, server.url)
        let outcome = try await onThread { () throws -> [[String]] in
            // A wrong password: refused (HTTP 400 and a trailer).
            let wrong = try startTrusting(made.certificate, [url, "myservice/", "--user", "root", "wrong"])
            let first = [try nextLine(wrong), "\(try wrong.waitBlocking(timeout: 30))"]
            // The right one: a token (HTTP 200 and a trailer), then the first read refused (HTTP 403 and a trailer).
            let right = try startTrusting(made.certificate, [url, "myservice/", "--user", "root", "right"])
            let second = [try nextLine(right), "\(try right.waitBlocking(timeout: 30))"]
            return [first, second]
        }
        let requests = try await onThread { try server.stop() }.compactMap {
            $0.hasPrefix("request ") ? String($0.dropFirst("request ".count)) : nil
        }

        let wrong = outcome[0]
        #expect(wrong[0].hasPrefix("error ") && wrong[0].contains("authentication failed"), "\(wrong)")
        #expect(wrong[1] == "exit status 1", "\(wrong)")
        let right = outcome[1]
        #expect(right[0].hasPrefix("error ") && right[0].contains("permission denied"), "\(right)")
        #expect(right[1] == "exit status 1", "\(right)")
        // Both processes were answered by the server, the second one past authentication.
        #expect(requests.filter { $0 == "/v3/auth/authenticate" }.count == 2, "\(requests)")
        #expect(requests.contains("/v3/kv/range"), "\(requests)")
    }
}

/// The script (``PythonTLSServer`` runs it) of a stand-in for etcd's gateway over TLS on 127.0.0.1 that gives the user
/// `reader` a token (password `right`) and an empty prefix, and answers every watch and put with `307 Temporary
/// Redirect` to a plain-HTTP listener of its own, on another port. It prints its TLS port, then `request PATH` for each
/// request it is asked, and `plain PATH AUTHORIZATION` for each request that reaches the plain listener (none must).
private enum RedirectingServer {
    static let script = #"""
        import http.server, json, socketserver, ssl, sys, threading

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        class Plain(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                print("plain %s %s" % (self.path, self.headers.get("Authorization")), flush=True)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        plain = Server(("127.0.0.1", 0), Plain)
        threading.Thread(target=plain.serve_forever, daemon=True).start()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                print("request %s" % self.path, flush=True)
                token = self.headers.get("Authorization")
                headers = {}
                if self.path == "/v3/auth/authenticate" and json.loads(body).get("password") == "right":
                    status, answer = 200, {"header": {"revision": "1"}, "token": "token.reader"}
                elif self.path == "/v3/kv/range" and token == "token.reader":
                    status, answer = 200, {"header": {"revision": "1"}}
                elif self.path in ("/v3/watch", "/v3/kv/put", "/v3/kv/txn"):
                    status, answer = 307, {}
                    headers["Location"] = "http://127.0.0.1:%d%s" % (plain.server_address[1], self.path)
                else:
                    message = "etcdserver: permission denied"
                    status, answer = 403, {"error": message, "code": 7, "message": message}
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def log_message(self, *arguments):
                pass

        server = Server(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        context.set_alpn_protocols(["http/1.1"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#
}

@Suite(
    "Defaults over HTTPS from a server that answers with redirects", .needsOpenSSL, .needsPython,
    .enabled(if: canGiveAProcessATrustStore, trustStoreMessage))
struct EtcdHTTPSRedirectTests {
    /// A watch or a write answered with a redirect to another port is an error naming the endpoint: no request
    /// ever reaches where the redirect points, so the token goes only to the configured endpoint.
    @Test func aRedirectIsNeverFollowedAndTheTokenGoesNowhereElse() async throws {
        let server = try await PythonTLSServer.start(RedirectingServer.script, named: "redirecting-server.py")
        let (made, url) = (server.made, server.url)
        let outcome = try await onThread { () throws -> (lines: [String], printed: [String]) in
            let store = try startTrusting(made.certificate, [url, "myservice/", "--user", "reader", "right"])
            var lines = [try nextLine(store)]
            // The watch asks twice (it retries after the refused redirect).
            var printed = try server.waitForRequests(to: "/v3/watch", count: 2)
            lines.append(try store.askBlocking("set volume 1"))
            lines.append(try nextLine(store))
            printed += try server.waitForRequests(to: "/v3/watch", count: 1)
            store.kill(SIGKILL)
            _ = try store.waitBlocking(timeout: 30)
            return (lines, printed)
        }
        let printed = outcome.printed + (try await onThread { try server.stop() })
        #expect(outcome.lines.first?.hasPrefix("ready") == true, "\(outcome.lines)")
        #expect(!printed.contains { $0.hasPrefix("plain ") }, "a redirect was followed: \(printed)")
        let report = outcome.lines.dropFirst().first { $0.hasPrefix("reported ") } ?? ""
        #expect(report.contains("redirect") && report.contains(url), "\(outcome.lines)")
    }
}
