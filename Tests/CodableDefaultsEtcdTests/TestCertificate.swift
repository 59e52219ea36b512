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
