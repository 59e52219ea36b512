import CodableDefaultsTestSupport
import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// Skips a test or suite that makes a ``TestCertificate`` where `openssl` is not installed, saying so.
    static var needsOpenSSL: Self {
        .enabled(
            if: findExecutable("openssl") != nil,
            "needs openssl to make a test certificate, and it is not installed (apt-get install openssl)")
    }
}

/// A self-signed certificate for 127.0.0.1 and its key, made with `openssl` in a temporary directory: etcd serves
/// clients over HTTPS with it, and a test that trusts it uses it as its only certificate authority.
struct TestCertificate {
    /// The directory that holds the files (removed when the value goes away).
    let directory: TemporaryDirectory
    /// The certificate, PEM.
    let certificate: String
    /// Its private key, PEM.
    let key: String

    /// Makes the certificate (valid one day, for the IP address 127.0.0.1).
    init() async throws {
        directory = try TemporaryDirectory()
        certificate = directory.file("certificate.pem").path
        key = directory.file("key.pem").path
        let openssl = try #require(findExecutable("openssl"), "this test needs openssl (apt-get install openssl)")
        let made = try EtcdProcess(
            openssl,
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ], stdout: "/dev/null", stderr: directory.file("openssl.err").path)
        let status = try await made.wait(timeout: 30)
        try #require(status == .exited(0), "openssl: \(fileText(directory.file("openssl.err").path))")
    }

    /// The certificate and key, as ``EtcdServer/with(members:arguments:tls:_:)`` takes them.
    var tls: (certificate: String, key: String) { (certificate, key) }
}

/// A private certificate authority and what it signed, made with `openssl` in a temporary directory, as a secured
/// etcd cluster runs: a server certificate for 127.0.0.1 (etcd's `--cert-file`, `--key-file`), and a client
/// certificate and key the members require (`--client-cert-auth --trusted-ca-file`). Also a second authority,
/// with a client certificate of its own, that the cluster does not trust.
struct TestAuthority {
    /// The directory that holds the files (removed when the value goes away).
    let directory: TemporaryDirectory

    /// A file of the directory.
    func path(_ name: String) -> String { directory.file(name).path }
    /// The authority's certificate, PEM: what a client trusts (`--cacert`) and the members' `--trusted-ca-file`.
    var authority: String { path("ca.pem") }
    /// The server certificate and key of the members.
    var server: (certificate: String, key: String) { (path("server.pem"), path("server.key")) }
    /// A server certificate that names the host `etcd.test` only (no address), and its key.
    var namedServer: (certificate: String, key: String) { (path("named-server.pem"), path("named-server.key")) }
    /// A client certificate the authority signed, and its key.
    var client: (certificate: String, key: String) { (path("client.pem"), path("client.key")) }
    /// A second client certificate the authority signed, and its key: a renewal of ``client``.
    var renewedClient: (certificate: String, key: String) { (path("renewed-client.pem"), path("renewed-client.key")) }
    /// A client certificate the authority signed whose CommonName names the user `root` (etcd's gateway refuses such a
    /// certificate when authentication is on), and its key.
    var namedClient: (certificate: String, key: String) { (path("named-client.pem"), path("named-client.key")) }
    /// The other authority's certificate (it signed neither the members' certificates nor the trusted clients').
    var foreignAuthority: String { path("other-ca.pem") }
    /// A client certificate the other authority signed, and its key.
    var foreignClient: (certificate: String, key: String) { (path("other-client.pem"), path("other-client.key")) }

    /// etcdctl's arguments that trust the authority and present ``client``.
    var etcdctlArguments: [String] { ["--cacert", authority, "--cert", client.certificate, "--key", client.key] }

    /// The arguments that make an etcd member require client certificates this authority signed.
    var requiringClientCertificates: [String] { ["--client-cert-auth", "--trusted-ca-file", authority] }

    /// Makes the authorities and the certificates (valid one day).
    init() async throws {
        directory = try TemporaryDirectory()
        let openssl = try #require(findExecutable("openssl"), "this test needs openssl (apt-get install openssl)")
        // Each certificate is signed by its authority with the extensions a TLS peer checks (name, usage).
        let script = """
            set -e
            cd "$1"; openssl=$2
            authority() {
                $openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days 1 -subj "/CN=$1" \
                    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            }
            signed() {
                $openssl req -newkey rsa:2048 -nodes -keyout "$2.key" -out "$2.csr" -subj "$3"
                printf '%s\\n' "$4" > "$2.ext"
                $openssl x509 -req -in "$2.csr" -CA "$1.pem" -CAkey "$1.key" -CAcreateserial -out "$2.pem" \
                    -days 1 -extfile "$2.ext"
            }
            authority ca; authority other-ca
            signed ca server /O=etcd-member "subjectAltName=IP:127.0.0.1
            extendedKeyUsage=serverAuth,clientAuth"
            signed ca named-server /O=etcd-member "subjectAltName=DNS:etcd.test
            extendedKeyUsage=serverAuth,clientAuth"
            signed ca client /O=client "extendedKeyUsage=clientAuth"
            signed ca renewed-client /O=client "extendedKeyUsage=clientAuth"
            signed ca named-client /CN=root "extendedKeyUsage=clientAuth"
            signed other-ca other-client /CN=client "extendedKeyUsage=clientAuth"
            """
        let made = try EtcdProcess(
            "/bin/sh", ["-c", script, "sh", directory.url.path, openssl], stdout: "/dev/null",
            stderr: path("openssl.err"))
        let status = try await made.wait(timeout: 60)
        try #require(status == .exited(0), "openssl: \(fileText(path("openssl.err")))")
    }
}
