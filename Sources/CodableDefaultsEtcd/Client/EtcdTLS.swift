import Foundation

/// The TLS files an `https://` cluster is reached with, as etcdctl's `--cacert`, `--cert` and `--key` name them:
/// the authorities that sign the members' certificates (instead of the system's trust store), and the client
/// certificate with its private key that a cluster started with `--client-cert-auth` requires. Each a PEM file's
/// path; the files are read by libcurl (OpenSSL) at each connection, never by this library, and no text of the
/// client quotes them.
///
/// The unary calls on Linux take them (``CurlHTTP``). Not yet the watches, nor Apple platforms: a client given
/// any refuses to watch, and is refused on Apple platforms when it is made (``EtcdClient/init(endpoints:user:password:tls:requestTimeout:watchIdleTimeout:maximumAnswerSize:)``).
package struct EtcdTLS: Sendable, Equatable {
    /// The PEM file of the authorities that sign the members' certificates (etcdctl's `--cacert`); `nil`: the
    /// system's trust store.
    package var certificateAuthorities: String?
    /// The PEM file of the client certificate (etcdctl's `--cert`); `nil`: none is presented.
    package var certificate: String?
    /// The PEM file of the client certificate's private key (etcdctl's `--key`).
    package var key: String?

    /// TLS files; each path may be relative to the current directory. A certificate needs its key, and a key its
    /// certificate.
    package init(certificateAuthorities: String? = nil, certificate: String? = nil, key: String? = nil) {
        self.certificateAuthorities = certificateAuthorities
        self.certificate = certificate
        self.key = key
    }

    /// Refuses a certificate without its key (or a key without its certificate), an empty path, and a file this
    /// process cannot read, naming the option and the file (never a line of it).
    func check() throws(EtcdError) {
        if (certificate == nil) != (key == nil) {
            let given = certificate == nil ? "a key (--key)" : "a client certificate (--cert)"
            throw EtcdError(.invalidEndpoint, message: "\(given) is given without its pair: give --cert and --key")
        }
        let files = [("--cacert", certificateAuthorities), ("--cert", certificate), ("--key", key)]
        for case (let option, let path?) in files {
            guard !path.isEmpty else { throw EtcdError(.invalidEndpoint, message: "\(option): the path is empty") }
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw EtcdError(
                    .invalidEndpoint,
                    message: "\(option) \(path): the file cannot be read: \(error.localizedDescription)")
            }
            guard text.contains("-----BEGIN ") else {
                throw EtcdError(.invalidEndpoint, message: "\(option) \(path): not a PEM file (no -----BEGIN line)")
            }
        }
    }
}
