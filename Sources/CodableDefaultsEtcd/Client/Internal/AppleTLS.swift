#if canImport(Security)
    import Foundation
    import Security

    /// How URLSession's TLS challenges are answered with an ``EtcdTLS`` on Apple platforms: the members'
    /// certificates checked against the authorities' PEM file alone (read again at every challenge, that is every
    /// full handshake: a resumed TLS session asks nothing, so a rotated file is taken by the next full one) and the
    /// name to check; the client identity, with its intermediates, presented when a member asks for one.
    ///
    /// Written against Apple's documentation of the Security framework and URLSession; this project's CI builds on
    /// Linux only, where none of it compiles.
    enum AppleTLS {
        /// How to answer a challenge, and, when the answer refuses the server, why (for the error of the call).
        struct Answer {
            var disposition: URLSession.AuthChallengeDisposition
            var credential: URLCredential?
            var refusal: String?
        }

        /// The answer to `challenge`, with the files of `tls` (`nil`: URLSession's
        /// default handling, the system's trust store and no client certificate).
        static func answer(_ challenge: URLAuthenticationChallenge, tls: EtcdTLS?) -> Answer {
            let space = challenge.protectionSpace
            guard let tls else { return Answer(disposition: .performDefaultHandling) }
            switch space.authenticationMethod {
            case NSURLAuthenticationMethodServerTrust:
                guard tls.certificateAuthorities != nil || tls.serverName != nil, let trust = space.serverTrust else {
                    return Answer(disposition: .performDefaultHandling)
                }
                if let refusal = evaluate(trust, tls: tls, host: space.host) {
                    return Answer(disposition: .cancelAuthenticationChallenge, refusal: refusal)
                }
                return Answer(disposition: .useCredential, credential: URLCredential(trust: trust))
            case NSURLAuthenticationMethodClientCertificate:
                guard let client = tls.clientIdentity else { return Answer(disposition: .performDefaultHandling) }
                // The intermediates go along, for a cluster that trusts only the root of the client's chain.
                return Answer(
                    disposition: .useCredential,
                    credential: URLCredential(
                        identity: client.identity, certificates: client.chain.isEmpty ? nil : client.chain,
                        persistence: .forSession))
            default:
                return Answer(disposition: .performDefaultHandling)
            }
        }

        /// Why `trust` is refused, or `nil` when its chain leads to one of the authorities of `tls` (the system's
        /// when it names none) and its leaf names `tls.serverName`, else `host`.
        private static func evaluate(_ trust: SecTrust, tls: EtcdTLS, host: String) -> String? {
            let name = tls.serverName ?? host
            var status = SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, name as CFString))
            guard status == errSecSuccess else { return "the TLS policy cannot be set: \(describe(status))" }
            if let file = tls.certificateAuthorities {
                let anchors: [SecCertificate]
                switch certificates(file) {
                case .success(let found): anchors = found
                case .failure(let reason): return "--cacert \(file.path): \(reason)"
                }
                status = SecTrustSetAnchorCertificates(trust, anchors as CFArray)
                if status == errSecSuccess { status = SecTrustSetAnchorCertificatesOnly(trust, true) }
                guard status == errSecSuccess else {
                    return "--cacert \(file.path): the authorities cannot be set: \(describe(status))"
                }
            }
            var error: CFError?
            guard SecTrustEvaluateWithError(trust, &error) else {
                let reason = error.map { ($0 as any Error).localizedDescription } ?? "no reason given"
                let authority = tls.certificateAuthorities.map { "--cacert \($0.path)" } ?? "the system's trust store"
                return "the server's certificate for \(name) is not trusted with \(authority): \(reason)"
            }
            return nil
        }

        /// The certificates of a PEM file, or why there are none.
        private static func certificates(_ file: URL) -> Result<[SecCertificate], Failure> {
            let bytes: Data
            do {
                bytes = try Data(contentsOf: file)
            } catch {
                return .failure(Failure("the file cannot be read: \(error.localizedDescription)"))
            }
            let blocks: [Data]
            do {
                blocks = try PEM.blocks(labelled: "CERTIFICATE", in: bytes)
            } catch {
                return .failure(Failure("the certificate that begins on line \(error.line) \(error.reason)"))
            }
            var found: [SecCertificate] = []
            for (index, der) in blocks.enumerated() {
                guard let certificate = SecCertificateCreateWithData(nil, der as CFData) else {
                    return .failure(Failure("certificate \(index + 1) of the file is not an X.509 certificate"))
                }
                found.append(certificate)
            }
            if found.isEmpty { return .failure(Failure("the file holds no certificate")) }
            return .success(found)
        }

        /// A reason, as an error.
        struct Failure: Error, CustomStringConvertible {
            var description: String
            init(_ description: String) { self.description = description }
        }

        /// The Security framework's sentence for `status`, with the number.
        static func describe(_ status: OSStatus) -> String {
            let text = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "error"
            return "\(text) (OSStatus \(status))"
        }
    }
#endif
