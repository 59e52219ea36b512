import Foundation

/// The TLS files a store reaches an `https://` cluster with, as etcdctl's `--cacert`, `--cert` and `--key` name
/// them: the authority that signs the members' certificates (in place of the system's trust store), and the client
/// certificate with its private key that a cluster started with `--client-cert-auth` requires. Each a PEM file.
///
/// ```swift
/// let tls = EtcdTLS(
///     certificateAuthorities: URL(fileURLWithPath: "/etc/etcd/pki/ca.crt"),
///     certificate: URL(fileURLWithPath: "/etc/etcd/pki/client.crt"),
///     key: URL(fileURLWithPath: "/etc/etcd/pki/client.key"))
/// ```
///
/// The files are checked when the store opens (each readable, PEM; a certificate with its key), and read again
/// for every new connection, so a store that runs for months takes the files cert-manager or the kubelet rotate in
/// place. No text of the library quotes them. On Linux with glibc calls and watches take them (through libcurl);
/// elsewhere (Apple platforms, musl) opening a store with them throws
/// ``CodableDefaults/DefaultsError/Code-swift.struct/invalidArgument``, so far.
public struct EtcdTLS: Sendable, Hashable {
    /// The PEM file of the authorities that sign the members' certificates (etcdctl's `--cacert`); `nil`: the
    /// system's trust store.
    public var certificateAuthorities: URL?
    /// The PEM file of the client certificate (etcdctl's `--cert`); `nil`: none is presented.
    public var certificate: URL?
    /// The PEM file of the client certificate's private key (etcdctl's `--key`); given with ``certificate``.
    public var key: URL?

    /// TLS files; each `nil` by default. A certificate needs its key, and a key its certificate (checked when the
    /// store opens).
    public init(certificateAuthorities: URL? = nil, certificate: URL? = nil, key: URL? = nil) {
        self.certificateAuthorities = certificateAuthorities
        self.certificate = certificate
        self.key = key
    }

    /// Refuses a certificate without its key (or a key without its certificate), and a file this process cannot
    /// read or that holds no PEM block, naming the option and the file (never a line of it).
    ///
    /// - Throws: ``EtcdError`` with ``EtcdError/Code/invalidEndpoint``.
    func check() throws(EtcdError) {
        if (certificate == nil) != (key == nil) {
            let given = certificate == nil ? "a key (--key)" : "a client certificate (--cert)"
            throw EtcdError(.invalidEndpoint, message: "\(given) is given without its pair: give --cert and --key")
        }
        let files = [("--cacert", certificateAuthorities), ("--cert", certificate), ("--key", key)]
        for case (let option, let url?) in files {
            let path = url.path
            let bytes: Data
            do {
                bytes = try Data(contentsOf: url)
            } catch {
                throw EtcdError(
                    .invalidEndpoint,
                    message: "\(option) \(path): the file cannot be read: \(error.localizedDescription)")
            }
            guard bytes.range(of: Data("-----BEGIN ".utf8)) != nil else {
                throw EtcdError(.invalidEndpoint, message: "\(option) \(path): not a PEM file (no -----BEGIN line)")
            }
        }
    }
}
