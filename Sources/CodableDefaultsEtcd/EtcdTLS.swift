import Foundation

/// The TLS files a store reaches an `https://` cluster with, as etcdctl's `--cacert`, `--cert` and `--key` name
/// them: the authority that signs the members' certificates (in place of the system's trust store), and the client
/// certificate with its private key that a cluster started with `--client-cert-auth` requires, each a PEM file; and,
/// for a cluster reached by an address its certificates do not name, the name they do (``serverName``).
///
/// ```swift
/// let tls = EtcdTLS(
///     certificateAuthorities: URL(fileURLWithPath: "/etc/etcd/pki/ca.crt"),
///     certificate: URL(fileURLWithPath: "/etc/etcd/pki/client.crt"),
///     key: URL(fileURLWithPath: "/etc/etcd/pki/client.key"))
/// ```
///
/// The files are checked when the store opens (each readable and PEM, else
/// ``CodableDefaults/DefaultsError/Code-swift.struct/readFailed`` naming it; a certificate with its key, else
/// ``CodableDefaults/DefaultsError/Code-swift.struct/invalidArgument``), and read again
/// for every new connection, so a store that runs for months takes the files cert-manager or the kubelet rotate in
/// place. No text of the library quotes them. On Linux with glibc calls and watches take them (through libcurl).
/// On Apple platforms URLSession takes the authorities' file and ``serverName`` (the name checked; the name sent
/// in the handshake stays the endpoint's host, none for an address), and a client certificate as a `SecIdentity`
/// (`clientIdentity`, from the Keychain or a PKCS#12 file) rather than PEM files: a store opened with
/// ``certificate`` and ``key`` there throws ``CodableDefaults/DefaultsError/Code-swift.struct/invalidArgument``
/// saying so. With musl any TLS file is refused so. The Apple path is written against Apple's documentation and is
/// not run by this project's CI, which builds on Linux.
public struct EtcdTLS: Sendable, Hashable {
    /// The PEM file of the authorities that sign the members' certificates (etcdctl's `--cacert`); `nil`: the
    /// system's trust store.
    public var certificateAuthorities: URL?
    /// The PEM file of the client certificate (etcdctl's `--cert`); `nil`: none is presented.
    public var certificate: URL?
    /// The PEM file of the client certificate's private key (etcdctl's `--key`); given with ``certificate``.
    public var key: URL?
    /// The name the members' certificates are checked against (and TLS's server name indication), instead of
    /// each endpoint's host: for a cluster reached by address whose certificates name a host. `nil`: the host.
    public var serverName: String?
    #if canImport(Security)
        /// On Apple platforms, the client certificate with its private key (``ClientIdentity``), in place of
        /// ``certificate`` and ``key``, which URLSession cannot take; `nil`: none is presented.
        public var clientIdentity: ClientIdentity?
    #endif

    /// TLS files and the server name; each `nil` by default. A certificate needs its key, and a key its
    /// certificate (checked when the store opens).
    public init(certificateAuthorities: URL? = nil, certificate: URL? = nil, key: URL? = nil, serverName: String? = nil)
    {
        self.certificateAuthorities = certificateAuthorities
        self.certificate = certificate
        self.key = key
        self.serverName = serverName
    }

    /// What makes the files unusable, if anything: a certificate without its key (or a key without its
    /// certificate), an empty server name, or a file this process cannot read or that holds no PEM block (its option, its path, and why;
    /// never a line of it).
    enum Problem: Error {
        /// A certificate or key given without its pair, or an empty server name.
        case invalid(String)
        /// A file that cannot be read, or is not PEM.
        case unusable(option: String, path: String, reason: String)

        /// The problem as a sentence.
        var message: String {
            switch self {
            case .invalid(let message): message
            case .unusable(let option, let path, let reason): "\(option) \(path): \(reason)"
            }
        }
    }

    /// The first problem of the files, or `nil` when they can be used.
    func problem() -> Problem? {
        if (certificate == nil) != (key == nil) {
            let given = certificate == nil ? "a key (--key)" : "a client certificate (--cert)"
            return .invalid("\(given) is given without its pair: give --cert and --key")
        }
        if serverName?.isEmpty == true { return .invalid("the server name is empty") }
        #if canImport(Security)
            if certificate != nil {
                return .invalid(
                    "on Apple platforms a client certificate is taken as a ClientIdentity (from the Keychain or a "
                        + "PKCS#12 file), not as PEM files (--cert, --key)")
            }
        #endif
        let files = [("--cacert", certificateAuthorities), ("--cert", certificate), ("--key", key)]
        for case (let option, let url?) in files {
            let bytes: Data
            do {
                bytes = try Data(contentsOf: url)
            } catch {
                return .unusable(
                    option: option, path: url.path, reason: "the file cannot be read: \(error.localizedDescription)")
            }
            guard bytes.range(of: Data("-----BEGIN ".utf8)) != nil else {
                return .unusable(option: option, path: url.path, reason: "not a PEM file (no -----BEGIN line)")
            }
        }
        return nil
    }

    /// Refuses files with a ``problem()``.
    ///
    /// - Throws: ``EtcdError`` with ``EtcdError/Code/invalidEndpoint``, saying the problem.
    func check() throws(EtcdError) {
        if let problem = problem() { throw EtcdError(.invalidEndpoint, message: problem.message) }
    }
}
