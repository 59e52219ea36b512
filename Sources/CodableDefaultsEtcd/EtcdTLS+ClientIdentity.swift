#if canImport(Security)
    import CodableDefaults
    import Foundation
    import Security

    extension EtcdTLS {
        /// On Apple platforms, the client certificate with its private key that a cluster started with
        /// `--client-cert-auth` requires, as the Security framework holds them: a `SecIdentity` from the Keychain
        /// (`SecItemCopyMatching` with `kSecClassIdentity`, or one a configuration profile installed), or one read
        /// from a PKCS#12 file (``init(pkcs12:password:)``). URLSession presents it when a member asks for a client
        /// certificate. (URLSession takes an identity, not PEM files: a PEM certificate and key become a PKCS#12
        /// file with `openssl pkcs12 -export -in tls.crt -inkey tls.key -out tls.p12`.)
        ///
        /// A `SecIdentity` is immutable and may be used from any thread, hence `@unchecked Sendable`. Two values
        /// are equal when `CFEqual` says their identities are.
        public struct ClientIdentity: @unchecked Sendable, Hashable {
            /// The certificate and its private key.
            public let identity: SecIdentity
            /// The certificates between the identity's and the root its cluster trusts (intermediate authorities),
            /// presented with it; empty when the cluster's authority signed it directly.
            public let chain: [SecCertificate]

            /// The identity `identity`, with the intermediate certificates `chain` (none by default).
            public init(_ identity: SecIdentity, chain: [SecCertificate] = []) {
                self.identity = identity
                self.chain = chain
            }

            /// The first identity of a PKCS#12 file's bytes, with the intermediate certificates the file holds,
            /// imported in memory only: nothing is added to a keychain (which is why macOS needs version 15: before
            /// it, the import adds the identity to the default keychain). Neither the bytes nor the password appear in
            /// any text.
            ///
            /// - Throws: ``CodableDefaults/DefaultsError`` with
            ///   ``CodableDefaults/DefaultsError/Code-swift.struct/invalidArgument`` when the password is empty (the
            ///   Security framework imports no PKCS#12 data without one: give one to `openssl pkcs12 -export`), the
            ///   bytes are not PKCS#12, the password is not theirs, or they hold no certificate with its key (the
            ///   Security framework's reason in the message).
            @available(macOS 15, *)
            public init(pkcs12 data: Data, password: String) throws(DefaultsError) {
                guard !password.isEmpty else {
                    throw DefaultsError(
                        .invalidArgument,
                        "the PKCS#12 data needs a password: the Security framework imports none without one")
                }
                var options: [String: Any] = [kSecImportExportPassphrase as String: password]
                #if os(macOS)
                    // Without it macOS adds the identity to the default keychain (other systems import in memory).
                    options[kSecImportToMemoryOnly as String] = true
                #endif
                var items: CFArray?
                let status = SecPKCS12Import(data as CFData, options as CFDictionary, &items)
                guard status == errSecSuccess else {
                    throw DefaultsError(.invalidArgument, "the PKCS#12 data: \(AppleTLS.describe(status))")
                }
                let list = (items as? [[String: Any]]) ?? []
                guard let found = list.first(where: { $0[kSecImportItemIdentity as String] != nil }),
                    let item = found[kSecImportItemIdentity as String],
                    CFGetTypeID(item as CFTypeRef) == SecIdentityGetTypeID()
                else {
                    throw DefaultsError(.invalidArgument, "the PKCS#12 data holds no certificate with its private key")
                }
                // The type was checked just above: the cast cannot fail.
                self.identity = item as! SecIdentity
                // The chain the import gives starts with the identity's own certificate: the rest are intermediates.
                let certificates = (found[kSecImportItemCertChain as String] as? [SecCertificate]) ?? []
                self.chain = Array(certificates.dropFirst())
            }

            /// Whether the two identities and their chains are the same (`CFEqual`).
            public static func == (lhs: ClientIdentity, rhs: ClientIdentity) -> Bool {
                CFEqual(lhs.identity, rhs.identity) && lhs.chain.count == rhs.chain.count
                    && zip(lhs.chain, rhs.chain).allSatisfy { CFEqual($0, $1) }
            }

            /// Feeds the identity's `CFHash` to `hasher`.
            public func hash(into hasher: inout Hasher) {
                hasher.combine(CFHash(identity))
            }
        }

        /// A store's TLS on Apple platforms: the authorities' PEM file (`nil`: the system's trust store), the client
        /// identity, and the name the members' certificates are checked against (`nil`: each endpoint's host;
        /// URLSession still sends the endpoint's host as the TLS server name).
        public init(certificateAuthorities: URL? = nil, clientIdentity: ClientIdentity?, serverName: String? = nil) {
            self.init(certificateAuthorities: certificateAuthorities, serverName: serverName)
            self.clientIdentity = clientIdentity
        }
    }
#endif
