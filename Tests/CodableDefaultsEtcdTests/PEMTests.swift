import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The PEM reader that gives Apple's Security framework the authorities' certificates (``PEM``) reads what openssl
/// writes, byte for byte as openssl's own DER output, and refuses a block it cannot read with its line.
@Suite(.needsOpenSSL)
struct PEMTests {
    @Test func aBundleGivesEachCertificateAsOpenSSLWritesItsDER() async throws {
        let authority = try await TestAuthority()
        let openssl = try #require(findExecutable("openssl"))
        var bundle = Data("# the cluster's authorities\r\n".utf8)
        var expected: [Data] = []
        for name in ["ca", "other-ca"] {
            bundle += try Data(contentsOf: authority.directory.file("\(name).pem"))
            bundle += Data("some text openssl's -text output puts between blocks\n".utf8)
            let der = authority.path("\(name).der")
            let converted = try EtcdProcess(
                openssl, ["x509", "-in", authority.path("\(name).pem"), "-outform", "DER", "-out", der],
                stdout: "/dev/null", stderr: "/dev/null")
            #expect(try await converted.wait(timeout: 30) == .exited(0))
            expected.append(try Data(contentsOf: URL(fileURLWithPath: der)))
        }
        // A key in the same file is not a certificate.
        bundle += try Data(contentsOf: authority.directory.file("client.key"))
        let blocks = try PEM.blocks(labelled: "CERTIFICATE", in: bundle)
        #expect(blocks == expected)
        #expect(try PEM.blocks(labelled: "CERTIFICATE", in: Data("no PEM here\n".utf8)).isEmpty)
    }

    @Test func aBlockThatIsNotBase64OrDoesNotEndIsRefusedWithItsLine() throws {
        let notBase64 = "first line\n-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n"
        #expect(throws: PEM.Malformed.self) { try PEM.blocks(labelled: "CERTIFICATE", in: Data(notBase64.utf8)) }
        do {
            _ = try PEM.blocks(labelled: "CERTIFICATE", in: Data(notBase64.utf8))
        } catch {
            #expect(error.line == 2 && error.reason == "is not base64")
        }
        let unended = "-----BEGIN CERTIFICATE-----\nAAAA\n"
        do {
            _ = try PEM.blocks(labelled: "CERTIFICATE", in: Data(unended.utf8))
            Issue.record("a block without its end line was read")
        } catch {
            #expect(error.line == 1 && error.label == "CERTIFICATE" && error.reason == "has no -----END line")
        }
    }
}
