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

            /// The identity `identity`, as is.
            public init(_ identity: SecIdentity) {
                self.identity = identity
            }

            /// The first identity of a PKCS#12 file's bytes, imported in memory only: nothing is added to a
            /// keychain. Neither the bytes nor the password appear in any text.
            ///
            /// - Throws: ``CodableDefaults/DefaultsError`` with
            ///   ``CodableDefaults/DefaultsError/Code-swift.struct/invalidArgument`` when the bytes are not PKCS#12,
            ///   the password is not theirs, or they hold no certificate with its key (the Security framework's
            ///   reason in the message).
            @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
            public init(pkcs12 data: Data, password: String) throws(DefaultsError) {
                let options: [String: Any] = [
                    kSecImportExportPassphrase as String: password,
                    // Without it macOS adds the identity to the default keychain.
                    kSecImportToMemoryOnly as String: true,
                ]
                var items: CFArray?
                let status = SecPKCS12Import(data as CFData, options as CFDictionary, &items)
                guard status == errSecSuccess else {
                    throw DefaultsError(.invalidArgument, "the PKCS#12 data: \(AppleTLS.describe(status))")
                }
                let list = (items as? [[String: Any]]) ?? []
                guard let item = list.lazy.compactMap({ $0[kSecImportItemIdentity as String] }).first,
                    CFGetTypeID(item as CFTypeRef) == SecIdentityGetTypeID()
                else {
                    throw DefaultsError(.invalidArgument, "the PKCS#12 data holds no certificate with its private key")
                }
                // The type was checked just above: the cast cannot fail.
                self.identity = item as! SecIdentity
            }

            /// Whether the two identities are the same (`CFEqual`).
            public static func == (lhs: ClientIdentity, rhs: ClientIdentity) -> Bool {
                CFEqual(lhs.identity, rhs.identity)
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
