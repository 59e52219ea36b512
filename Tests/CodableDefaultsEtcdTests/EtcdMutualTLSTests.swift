import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The calls of the client against an etcd member that serves a private authority's certificate and requires
/// client certificates it signed (`--client-cert-auth --trusted-ca-file`), as production clusters run: the TLS
/// files (``EtcdTLS``, etcdctl's `--cacert`, `--cert`, `--key`) reach it, and each wrong or missing one is a clear
/// error naming the endpoint or the file, never a crash and never a line of a key.
#if canImport(Glibc)
    @Suite("EtcdClient over TLS with a private authority and client certificates", .needsEtcd, .needsOpenSSL)
    struct EtcdMutualTLSTests {
        @Test func theRightFilesReachTheClusterAndEachWrongOneIsAClearError() async throws {
            let pki = try await TestAuthority()
            try await EtcdServer.with(arguments: pki.requiringClientCertificates, tls: pki.server) { server in
                let endpoint = server.clientURL
                let files = EtcdTLS(
                    certificateAuthorities: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
                let client = try EtcdClient(endpoints: [endpoint], tls: files)
                let revision = try await client.put(Array("app/volume".utf8), Array("0.8".utf8))
                let read = try #require(try await client.get(Array("app/volume".utf8)))
                #expect(read.value == Array("0.8".utf8) && read.modRevision == revision)

                // Each refusal: which endpoint, and libcurl's (OpenSSL's) words; the process goes on.
                let wrong: [(String, EtcdTLS, hint: String)] = [
                    ("no client certificate", EtcdTLS(certificateAuthorities: pki.authority), "--client-cert-auth"),
                    (
                        "the system's authorities",
                        EtcdTLS(certificate: pki.client.certificate, key: pki.client.key), "--cacert names"
                    ),
                    (
                        "another authority's client",
                        EtcdTLS(
                            certificateAuthorities: pki.authority, certificate: pki.foreignClient.certificate,
                            key: pki.foreignClient.key), "--client-cert-auth"
                    ),
                    (
                        "another authority trusted",
                        EtcdTLS(
                            certificateAuthorities: pki.foreignAuthority, certificate: pki.client.certificate,
                            key: pki.client.key), "--cacert names"
                    ),
                    (
                        "a key that is not the certificate's",
                        EtcdTLS(
                            certificateAuthorities: pki.authority, certificate: pki.client.certificate,
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
                (EtcdTLS(certificate: pki.client.certificate), "without its pair"),
                (EtcdTLS(key: pki.client.key), "without its pair"),
                (EtcdTLS(certificateAuthorities: pki.path("absent.pem")), "--cacert \(pki.path("absent.pem"))"),
                (EtcdTLS(certificateAuthorities: pki.path("server.ext")), "not a PEM file"),
                (EtcdTLS(certificateAuthorities: ""), "--cacert: the path is empty"),
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
                let files = EtcdTLS(
                    certificateAuthorities: pki.authority, certificate: pki.client.certificate, key: pki.client.key)
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
                        certificateAuthorities: pki.authority, certificate: pki.foreignClient.certificate,
                        key: pki.foreignClient.key))
                let error = try await #require(throws: EtcdError.self) {
                    for try await _ in foreign.watch(prefix: [], startRevision: 0) {}
                }
                #expect(error.code == .unreachable, "\(error)")
                #expect(
                    error.description.contains(server.clientURL) && error.description.contains("--client-cert-auth"))
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
