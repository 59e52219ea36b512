import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The calls of the client against an etcd member that serves a private authority's certificate and requires
/// client certificates it signed (`--client-cert-auth --trusted-ca-file`), as production clusters run: the TLS
/// files (``EtcdTLS``, etcdctl's `--cacert`, `--cert`, `--key`) reach it, and each wrong or missing one is a clear
/// error naming the endpoint or the file, never a crash and never a line of a key.
extension EtcdTLS {
    /// The TLS files at these paths.
    init(paths authorities: String?, certificate: String? = nil, key: String? = nil) {
        self.init(
            certificateAuthorities: authorities.map(URL.init(fileURLWithPath:)),
            certificate: certificate.map(URL.init(fileURLWithPath:)), key: key.map(URL.init(fileURLWithPath:)))
    }
}

extension EtcdServer {
    /// The value of `key` as etcdctl reads it with the authority's client certificate (and `user`, `NAME:PASSWORD`,
    /// when given) from `endpoints` (every member's by default).
    func etcdctlValue(
        _ key: String, tls pki: TestAuthority, user: String? = nil, endpoints: [String]? = nil
    ) async throws -> String {
        let output = try await etcdctl(
            pki.etcdctlArguments + (user.map { ["--user", $0] } ?? []) + ["get", "--print-value-only", key],
            endpoints: endpoints)
        return output.trimmingCharacters(in: .newlines)
    }
}

#if canImport(Glibc)
    @Suite("EtcdClient over TLS with a private authority and client certificates", .needsEtcd, .needsOpenSSL)
    struct EtcdMutualTLSTests {
        @Test func theRightFilesReachTheClusterAndEachWrongOneIsAClearError() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let endpoint = server.clientURL
                let files = EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                let client = try EtcdClient(endpoints: [endpoint], tls: files)
                let revision = try await client.put(Array("app/volume".utf8), Array("0.8".utf8))
                let read = try #require(try await client.get(Array("app/volume".utf8)))
                #expect(read.value == Array("0.8".utf8) && read.modRevision == revision)

                // Each refusal: which endpoint, and libcurl's (OpenSSL's) words; the process goes on.
                let wrong: [(String, EtcdTLS, hint: String)] = [
                    ("no client certificate", EtcdTLS(paths: pki.authority), "--client-cert-auth"),
                    (
                        "the system's authorities",
                        EtcdTLS(paths: nil, certificate: pki.client.certificate, key: pki.client.key), "--cacert names"
                    ),
                    (
                        "another authority's client",
                        EtcdTLS(
                            paths: pki.authority, certificate: pki.foreignClient.certificate,
                            key: pki.foreignClient.key), "--client-cert-auth"
                    ),
                    (
                        "another authority trusted",
                        EtcdTLS(
                            paths: pki.foreignAuthority, certificate: pki.client.certificate,
                            key: pki.client.key), "--cacert names"
                    ),
                    (
                        "a key that is not the certificate's",
                        EtcdTLS(
                            paths: pki.authority, certificate: pki.client.certificate,
                            key: pki.foreignClient.key), "a key that is not the certificate's"
                    ),
                ]
                let keyText = try String(contentsOfFile: pki.foreignClient.key, encoding: .utf8)
                for (name, tls, hint) in wrong {
                    let refused = try EtcdClient(endpoints: [endpoint], tls: tls, requestTimeout: 10)
                    let error = try await #require(throws: EtcdError.self, "\(name)") {
                        try await refused.get(Array("app/volume".utf8))
                    }
                    #expect(error.code == .unreachable, "\(name): \(error)")
                    #expect(error.description.contains(endpoint), "\(name): \(error)")
                    #expect(error.description.contains(hint), "\(name): \(error)")
                    #expect(!error.description.contains("PRIVATE KEY"), "\(name): \(error)")
                    #expect(!keyText.split(separator: "\n").dropFirst().contains { error.description.contains($0) })
                }
                // The right client still reaches it.
                #expect(try await client.get(Array("app/volume".utf8))?.value == Array("0.8".utf8))
            }
        }

        @Test func filesThatCannotBeUsedAreRefusedWhenTheClientIsMadeNamingTheOption() async throws {
            let pki = try await TestAuthority()
            let endpoint = "https://127.0.0.1:2379"
            let cases: [(EtcdTLS, String)] = [
                (EtcdTLS(paths: nil, certificate: pki.client.certificate), "without its pair"),
                (EtcdTLS(paths: nil, key: pki.client.key), "without its pair"),
                (EtcdTLS(paths: pki.path("absent.pem")), "--cacert \(pki.path("absent.pem"))"),
                (EtcdTLS(paths: pki.path("server.ext")), "not a PEM file"),
                (EtcdTLS(paths: pki.directory.url.path), "--cacert \(pki.directory.url.path): the file cannot be read"),
            ]
            for (tls, expected) in cases {
                let error = try #require(throws: EtcdError.self) { try EtcdClient(endpoints: [endpoint], tls: tls) }
                #expect(error.code == .invalidEndpoint)
                #expect(error.description.contains(expected), "\(error)")
            }
        }

        @Test func aWatchTakesTheSameFilesAndAWrongOneEndsItWithAClearError() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let files = EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                let client = try EtcdClient(endpoints: [server.clientURL], tls: files)
                let start = try await client.put(Array("app/a".utf8), Array("1".utf8))
                var changes = client.watch(prefix: Array("app/".utf8), startRevision: start).makeAsyncIterator()
                try await client.put(Array("app/b".utf8), Array("2".utf8))
                var seen: [String] = []
                while seen.count < 2, let response = try await changes.next() {
                    seen += response.events.map { String(decoding: $0.key, as: UTF8.self) }
                }
                #expect(seen == ["app/a", "app/b"])

                let foreign = try EtcdClient(
                    endpoints: [server.clientURL],
                    tls: EtcdTLS(
                        paths: pki.authority, certificate: pki.foreignClient.certificate,
                        key: pki.foreignClient.key))
                let error = try await #require(throws: EtcdError.self) {
                    for try await _ in foreign.watch(prefix: [], startRevision: 0) {}
                }
                #expect(error.code == .unreachable, "\(error)")
                #expect(
                    error.description.contains(server.clientURL) && error.description.contains("--client-cert-auth"))
            }
        }

        @Test func aStoreWithTheFilesWritesReadsWatchesAndKeepsHistoryAndWithoutThemCannotOpen() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let endpoint = try #require(URL(string: server.clientURL))
                let tls = EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                let level = Defaults.Key<Int>("level", default: 0)
                let writer = try await Defaults(
                    etcd: [endpoint], prefix: "svc/", saveMode: .immediate, tls: tls,
                    localCopy: pki.directory.file("copy.json"))
                let reader = try await Defaults(etcd: [endpoint], prefix: "svc/", tls: tls)
                var levels = reader.updates(for: level).makeAsyncIterator()
                #expect(await levels.next() == 0)
                writer[level] = 7
                #expect(await levels.next() == 7)
                #expect(try await writer.history(for: level).first?.changes.first?.newValue == .json(7))

                // Without a client certificate, or trusting the system's authorities: opening says why.
                for (tls, hint) in [
                    (EtcdTLS(paths: pki.authority), "--client-cert-auth"),
                    (EtcdTLS(paths: nil, certificate: pki.client.certificate, key: pki.client.key), "--cacert"),
                ] {
                    let error = await #expect(throws: DefaultsError.self) {
                        _ = try await Defaults(etcd: [endpoint], prefix: "svc/", tls: tls)
                    }
                    #expect(error?.code == .readFailed)
                    #expect(error?.description.contains(hint) == true, "\(String(describing: error))")
                }
            }
        }

        /// cert-manager and the kubelet rotate certificates by replacing the files in place: a running store takes
        /// the files anew for each new connection (here, after the member restarted and closed the kept one).
        @Test func aStoreTakesCertificateFilesReplacedInPlaceForItsNextConnection() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let endpoint = try #require(URL(string: server.clientURL))
                // The files the store is given, replaced by renaming a new file over each (as a rotation does).
                let certificate = pki.path("mounted.pem")
                let key = pki.path("mounted.key")
                func install(_ pair: (certificate: String, key: String)) throws {
                    for (from, to) in [(pair.certificate, certificate), (pair.key, key)] {
                        try FileManager.default.copyItem(atPath: from, toPath: to + ".new")
                        #expect(rename(to + ".new", to) == 0)
                    }
                }
                try install(pki.client)
                let level = Defaults.Key<Int>("level", default: 0)
                let store = try await Defaults(
                    etcd: [endpoint], prefix: "svc/", saveMode: .manual,
                    tls: EtcdTLS(paths: pki.authority, certificate: certificate, key: key))
                store[level] = 1
                try await store.save()

                try install(pki.renewedClient)
                try await server.kill(server.members[0])
                try await server.restart(server.members[0])
                store[level] = 2
                try await store.save()
                #expect(try await server.etcdctlValue("svc/level", tls: pki) == "2")

                // A certificate the cluster does not take, installed in place, is taken too: the save fails, its
                // change stays unsaved, and the next rotation lets it through.
                try install(pki.foreignClient)
                try await server.kill(server.members[0])
                try await server.restart(server.members[0])
                store[level] = 3
                let error = await #expect(throws: DefaultsError.self) { try await store.save() }
                #expect(error?.code == .writeFailed)
                try install(pki.renewedClient)
                try await store.save()
                #expect(try await server.etcdctlValue("svc/level", tls: pki) == "3")
            }
        }

        /// The built tool with `arguments` and `environment` added to the test's: its status, output lines and
        /// standard error.
        private func tool(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
            status: CodableDefaultsTestSupport.ExitStatus, output: [String], errors: String
        ) {
            let path = try Fixture.locate("codable-defaults")
            return try await onThread {
                let child = try ChildProcess(path, arguments, environment: environment)
                child.closeInput()
                let output = try child.readToEndBlocking(timeout: 30)
                return (try child.waitBlocking(timeout: 30), output, try child.standardError())
            }
        }

        @Test func theToolTakesEtcdctlsOptionsAndEnvironmentAndSaysWhatIsWrong() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let store = ["--etcd", server.clientURL, "--prefix", "svc/"]
                let files = ["--cacert", pki.authority, "--cert", pki.client.certificate, "--key", pki.client.key]
                let written = try await tool(["write"] + store + files + ["volume", "0.8"])
                #expect(written.status == .exited(0), "\(written.errors)")
                #expect(try await tool(["read"] + store + files + ["volume"]).output == ["0.8"])
                #expect(try await tool(["history"] + store + files + ["--json"]).output.count == 1)
                #expect(try await server.etcdctlValue("svc/volume", tls: pki) == "0.8")

                // etcdctl's variables where the options are not given; an option wins over its variable.
                let environment = [
                    "ETCDCTL_CACERT": pki.authority, "ETCDCTL_CERT": pki.foreignClient.certificate,
                    "ETCDCTL_KEY": pki.foreignClient.key,
                ]
                let fromEnvironment = try await tool(
                    ["read"] + store + ["--cert", pki.client.certificate, "--key", pki.client.key, "volume"],
                    environment: environment)
                #expect(fromEnvironment.output == ["0.8"], "\(fromEnvironment.errors)")
                let foreign = try await tool(["read"] + store + ["volume"], environment: environment)
                #expect(foreign.status == .exited(4))
                #expect(foreign.errors.contains(server.clientURL) && foreign.errors.contains("--client-cert-auth"))

                // A local copy over TLS, then the failures: each says what is wrong, and no key's text.
                let copy = pki.path("copy.json")
                #expect(
                    try await tool(["write"] + store + files + ["--etcd-cache", copy, "level", "2"]).status
                        == .exited(0))
                #expect(FileManager.default.fileExists(atPath: copy))
                let noClient = try await tool(["read"] + store + ["--cacert", pki.authority, "volume"])
                #expect(noClient.status == .exited(4))
                #expect(noClient.errors.contains("--client-cert-auth"), "\(noClient.errors)")
                let unpaired = try await tool(["read"] + store + ["--cert", pki.client.certificate, "volume"])
                #expect(unpaired.status == .exited(2))
                #expect(unpaired.errors.contains("--cert gives a client certificate without its key"))
                let missing = try await tool(["read"] + store + ["--cacert", pki.path("absent.pem"), "volume"])
                #expect(missing.status == .exited(4))
                #expect(missing.errors.contains("--cacert") && missing.errors.contains(pki.path("absent.pem")))
                let keyText = try String(contentsOfFile: pki.client.key, encoding: .utf8)
                let wrongKey = try await tool(
                    ["read"] + store + ["--cacert", pki.authority, "--cert", pki.client.certificate, "--key"]
                        + [pki.foreignClient.key, "volume"])
                #expect(wrongKey.status == .exited(4))
                #expect(wrongKey.errors.contains("a key that is not the certificate's"), "\(wrongKey.errors)")
                #expect(!keyText.split(separator: "\n").dropFirst().contains { wrongKey.errors.contains($0) })
                #expect(!wrongKey.errors.contains("PRIVATE KEY"))
            }
        }

        @Test func aThreeMemberClusterLosingTheMemberItSpeaksToGoesOnOverTLS() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(members: 3, arguments: pki.requiringClientCertificates, tls: pki.server) {
                server in
                let endpoints = server.clientURLs.compactMap(URL.init(string:))
                let tls = EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                let level = Defaults.Key<Int>("level", default: 0)
                let writer = try await Defaults(etcd: endpoints, prefix: "svc/", saveMode: .manual, tls: tls)
                let reader = try await Defaults(etcd: endpoints, prefix: "svc/", tls: tls)
                var levels = reader.updates(for: level).makeAsyncIterator()
                #expect(await levels.next() == 0)
                writer[level] = 1
                try await writer.save()
                #expect(await levels.next() == 1)

                // Both handles speak to the first member (the watch too): it goes away.
                try await server.kill(server.members[0])
                writer[level] = 2
                try await writer.save()
                #expect(await levels.next() == 2)
                let alive = Array(server.clientURLs.dropFirst())
                #expect(try await server.etcdctlValue("svc/level", tls: pki, endpoints: alive) == "2")
            }
        }

        /// A token etcd no longer takes (its time to live passed, and a restarted member forgot it) is renewed by the
        /// calls and by the watch that reconnects with it.
        @Test func aTokenThatExpiresWhileAWatchRunsIsRenewed() async throws {
            let pki = try await TestAuthority()
            let arguments = pki.requiringClientCertificates + ["--auth-token", "simple", "--auth-token-ttl", "1"]
            try await EtcdServer.with(arguments: arguments, tls: pki.server) { server in
                try await server.etcdctl(pki.etcdctlArguments + ["user", "add", "root:pass"])
                try await server.etcdctl(pki.etcdctlArguments + ["auth", "enable"])
                let endpoint = try #require(URL(string: server.clientURL))
                let tls = EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                let level = Defaults.Key<Int>("level", default: 0)
                func open(_ mode: Defaults.SaveMode) async throws -> Defaults {
                    try await Defaults(
                        etcd: [endpoint], prefix: "svc/", saveMode: mode, username: "root", password: "pass", tls: tls)
                }
                let writer = try await open(.manual)
                let reader = try await open(.default)
                var levels = reader.updates(for: level).makeAsyncIterator()
                #expect(await levels.next() == 0)
                writer[level] = 1
                try await writer.save()
                #expect(await levels.next() == 1)

                // The time to live is a second: past it, and with the member restarted (the watch reconnects), every
                // token the stores hold is refused.
                try await Task.sleep(for: .seconds(2))
                try await server.kill(server.members[0])
                try await server.restart(server.members[0])
                writer[level] = 2
                try await writer.save()
                #expect(await levels.next() == 2)
                #expect(try await server.etcdctlValue("svc/level", tls: pki, user: "root:pass") == "2")

                // A client certificate with a CommonName: etcd's gateway refuses it while authentication is on.
                let named = EtcdTLS(
                    paths: pki.authority, certificate: pki.namedClient.certificate, key: pki.namedClient.key)
                let error = await #expect(throws: DefaultsError.self) {
                    _ = try await Defaults(
                        etcd: [endpoint], prefix: "svc/", username: "root", password: "pass", tls: named)
                }
                #expect(error?.description.contains("without a CommonName") == true, "\(String(describing: error))")
            }
        }

        @Test func callsKeepTheirConnectionAliveAndOpenANewOneAfterAFailure() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let client = try EtcdClient(
                    endpoints: [server.clientURL],
                    tls: EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key))
                for index in 0..<20 { try await client.put(Array("app/\(index)".utf8), Array("\(index)".utf8)) }
                #expect(client.httpsConnections == (opened: 1, idle: 1))

                // Concurrent calls each take a handle; at most four wait idle after.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<8 {
                        group.addTask { try await client.put(Array("app/c\(index)".utf8), Array("1".utf8)) }
                    }
                    try await group.waitForAll()
                }
                #expect(client.httpsConnections.opened <= 8 && client.httpsConnections.idle <= 4)
                #expect(try await client.range(prefix: Array("app/".utf8)).keyValues.count == 28)

                // The member restarts: the kept connections are dead, and the next call opens a new one.
                let before = client.httpsConnections.opened
                try await server.kill(server.members[0])
                try await server.restart(server.members[0])
                #expect(try await client.get(Array("app/3".utf8))?.value == Array("3".utf8))
                #expect(client.httpsConnections.opened > before)
            }
        }

        @Test func theToolWatchesOverTLSAndItsLocalCopyAnswersWhileTheMemberIsDown() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let copy = pki.path("copy.json")
                // The local copy is one store's at a time: the watch goes without it.
                let watched = ["--etcd", server.clientURL, "--prefix", "svc/"] + pki.etcdctlArguments
                let store = watched + ["--etcd-cache", copy]
                #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))
                let path = try Fixture.locate("codable-defaults")
                let lines = try await onThread { () throws -> [String] in
                    let watch = try ChildProcess(path, ["watch"] + watched + ["volume", "--initial"])
                    var lines = [try watch.readLineBlocking(timeout: 30) ?? "end"]
                    let writer = try ChildProcess(path, ["write"] + store + ["volume", "0.25"])
                    lines.append("\(try writer.waitBlocking(timeout: 30))")
                    lines.append(try watch.readLineBlocking(timeout: 30) ?? "end")
                    watch.kill(SIGTERM)
                    lines.append("\(try watch.waitBlocking(timeout: 30))")
                    return lines
                }
                #expect(lines == ["volume\t0.8", "exit status 0", "volume\t0.25", "exit status 0"])

                // The member down: the copy answers, a write is kept in it, and lands when the member is back.
                try await server.kill(server.members[0])
                let offline = try await tool(["read"] + store + ["volume"])
                #expect(offline.output == ["0.25"], "\(offline.errors)")
                #expect(offline.errors.contains("stale"), "\(offline.errors)")
                #expect(try await tool(["write"] + store + ["volume", "0.5"]).status == .exited(0))
                try await server.restart(server.members[0])
                #expect(try await tool(["read"] + store + ["volume"]).output == ["0.5"])
                #expect(try await server.etcdctlValue("svc/volume", tls: pki) == "0.5")
            }
        }

        /// A member reached by address whose certificate names a host: the server name says which name to check.
        @Test func aServerNameChecksTheCertificateAgainstTheNameItHas() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.namedServer) { server in
                func client(_ name: String?) throws -> EtcdClient {
                    var tls = EtcdTLS(paths: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                    tls.serverName = name
                    return try EtcdClient(endpoints: [server.clientURL], tls: tls)
                }
                let named = try client("etcd.test")
                let revision = try await named.put(Array("app/a".utf8), Array("1".utf8))
                let recorder = WatchRecorder(named.watch(prefix: Array("app/".utf8), startRevision: revision))
                #expect(try await recorder.waitForEvents(1).map(\.value) == [Array("1".utf8)])

                for name in [nil, "other.test"] {
                    let error = await #expect(throws: EtcdError.self) {
                        try await client(name).get(Array("app/a".utf8))
                    }
                    #expect(
                        error?.description.contains("does not name the endpoint's host") == true,
                        "\(String(describing: name)): \(String(describing: error))")
                }
                let empty = #expect(throws: EtcdError.self) { try client("") }
                #expect(empty?.message.contains("the server name is empty") == true)
            }
        }

        /// A process that ends (`exit`) while its watches' TLS handshakes and streams run ends with its own status:
        /// libcurl's TLS state is never freed under a running transfer. Many exits, at moments spread over the
        /// handshakes and the first messages.
        @Test func aProcessThatExitsWhileItsWatchesRunEndsWithItsOwnStatus() async throws {
            let pki = try await TestAuthority()
            let fixture = try Fixture.locate("codable-defaults-etcd-fixture")
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                var outcomes: [String] = []
                for run in 0..<100 {
                    let stderr = pki.path("fixture-\(run).err")
                    let process = try EtcdProcess(
                        fixture,
                        [
                            "--exit-while-watching", server.clientURL, pki.authority, pki.client.certificate,
                            pki.client.key, "6", String((run % 15) * 1_000),
                        ], stdout: "/dev/null", stderr: stderr)
                    let status = try await process.wait(timeout: 60)
                    if status != .exited(0) {
                        // The crash's own line, not the whole backtrace.
                        let said = fileText(stderr).split(separator: "\n").first { $0.contains("crashed") } ?? ""
                        outcomes.append("run \(run): \(status) \(said)")
                    }
                }
                #expect(outcomes.isEmpty, "\(outcomes.joined(separator: "\n"))")
            }
        }
    }
#endif
