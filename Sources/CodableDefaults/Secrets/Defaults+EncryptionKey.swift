import Foundation

#if canImport(Security)
    import Security
#endif

extension Defaults {
    /// Where the key comes from that a store encrypts its secret keys' values with at rest (``Options/encryptionKey``):
    /// 32 random bytes, as a file only its owner can read, an environment variable, the output of a command, the
    /// Keychain on Apple platforms, or the bytes themselves (from a secret manager).
    ///
    /// ```swift
    /// let options = Defaults.Options(encryptionKey: .file(URL(fileURLWithPath: "/etc/myservice/settings.key")))
    /// ```
    ///
    /// The text of a file, a variable or a command's output is the key as 64 hexadecimal digits (`openssl rand -hex
    /// 32` makes one) or their base64; a file may also hold the 32 bytes themselves. The key is read once, when the
    /// store opens; no text of the library (errors, descriptions) quotes it.
    public struct EncryptionKey: Sendable, CustomStringConvertible {
        private enum Source: Sendable {
            case file(String)
            case environmentVariable(String)
            case command([String])
            case bytes([UInt8])
            #if canImport(Security)
                case keychain(service: String, account: String)
            #endif
        }

        private let source: Source

        /// The key in the file at `url`, which only its owner may read or write (opening the store fails otherwise,
        /// saying how to fix the file's mode).
        public static func file(_ url: URL) -> EncryptionKey { EncryptionKey(source: .file(url.path)) }

        /// The key in the environment variable `name`, read when the store opens.
        public static func environmentVariable(_ name: String) -> EncryptionKey {
            EncryptionKey(source: .environmentVariable(name))
        }

        /// The key a command prints on its standard output, as SOPS's key commands: `arguments` is the program
        /// (found in `PATH`) and its arguments, run without a shell when the store opens, on the opening thread.
        /// On macOS and Linux; elsewhere opening the store throws `invalidArgument`.
        public static func command(_ arguments: [String]) -> EncryptionKey {
            EncryptionKey(source: .command(arguments))
        }

        /// The key's 32 bytes themselves (for example read from the Keychain); opening the store fails with
        /// `invalidArgument` unless there are 32.
        public static func bytes(_ bytes: [UInt8]) -> EncryptionKey { EncryptionKey(source: .bytes(bytes)) }

        #if canImport(Security)
            /// On Apple platforms, the key kept in the Keychain as the generic password of `service` and `account`
            /// (`kSecClassGenericPassword`, read with `SecItemCopyMatching` in the keychains the process may read),
            /// whose data is the key's text or its 32 bytes. Read when the store opens, on the opening thread (the
            /// system may ask the user to allow it). Written against Apple's documentation; this project's CI builds on
            /// Linux only.
            public static func keychain(service: String, account: String) -> EncryptionKey {
                EncryptionKey(source: .keychain(service: service, account: account))
            }
        #endif

        /// Where the key comes from, without any of it: `file /path`, `environment variable NAME`, `command
        /// program`, `32 bytes`, or `keychain service/account`.
        public var description: String {
            switch source {
            case .file(let path): return "file \(path)"
            case .environmentVariable(let name): return "environment variable \(name)"
            case .command(let arguments): return "command \(arguments.first ?? "")"
            case .bytes(let bytes): return "\(bytes.count) bytes"
            #if canImport(Security)
                case .keychain(let service, let account): return "keychain \(service)/\(account)"
            #endif
            }
        }

        /// Reads the key.
        ///
        /// - Throws: ``DefaultsError``: `readFailed` for a file that cannot be read or that others may read,
        ///   `invalidArgument` for a source that holds no key (naming the source, quoting none of it).
        func load() throws(DefaultsError) -> SecretKey {
            switch source {
            case .file(let path): return try SecretKey(contentsOf: path)
            case .environmentVariable(let name): return try SecretKey(environmentVariable: name)
            case .command(let arguments):
                #if os(macOS) || os(Linux)
                    return try SecretKey(command: arguments)
                #else
                    _ = arguments
                    throw DefaultsError(.invalidArgument, "a key command runs on macOS and Linux only", key: nil)
                #endif
            case .bytes(let bytes): return try SecretKey(bytes: bytes)
            #if canImport(Security)
                case .keychain(let service, let account):
                    return try Self.keychainKey(service: service, account: account)
            #endif
            }
        }

        #if canImport(Security)
            /// The key in the Keychain's generic password of `service` and `account`.
            ///
            /// - Throws: `readFailed` naming the item when it cannot be read (the Security framework's reason);
            ///   `invalidArgument` when its data holds no key.
            private static func keychainKey(service: String, account: String) throws(DefaultsError) -> SecretKey {
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: account,
                    kSecReturnData as String: true,
                    kSecMatchLimit as String: kSecMatchLimitOne,
                ]
                var item: CFTypeRef?
                let status = SecItemCopyMatching(query as CFDictionary, &item)
                let name = "the Keychain item of service \(service), account \(account)"
                guard status == errSecSuccess, let data = item as? Data else {
                    let reason = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "error"
                    throw DefaultsError(.readFailed, "\(name) cannot be read: \(reason) (OSStatus \(status))", key: nil)
                }
                return try SecretKey(text: Array(data), source: name, rawBytesAllowed: true)
            }
        #endif
    }
}

extension Defaults {
    /// Encrypts every secret value of the store again with `key`, and makes `key` the store's, in one atomic
    /// read-modify-write: the file is replaced once (an etcd store's values change in one transaction), so a crash at
    /// any point leaves every value readable with the old key or with the new one, never a mix within a value, and
    /// the old key opens every value until the write is durable. Secret values stored in clear (a store that had
    /// no key) are encrypted too. Other values, and the names, are untouched.
    ///
    /// Blocks the calling thread for the write; thread-safe. Other processes that share the file read the values
    /// sealed with the new key only once they are given it too.
    ///
    /// - Returns: The names of the secret values, all now sealed with `key` (those it found sealed with `key`
    ///   already are kept as they are), sorted by their UTF-8 bytes.
    /// - Throws: ``DefaultsError``: what reading `key` throws; `encryptionKeyMissing`, `encryptionKeyMismatch` or
    ///   `decodingFailed` for a value the store's current key does not open, and what a save throws (`lockTimeout`,
    ///   `writeFailed`): then nothing is written and the key stays. `notDurable`: written, and the new key is the
    ///   store's.
    @discardableResult
    public func reencryptSecrets(with key: EncryptionKey) throws(DefaultsError) -> [String] {
        try store.reencryptSecrets(with: key.load())
    }
}

extension Store {
    /// See ``Defaults/reencryptSecrets(with:)``.
    func reencryptSecrets(with key: SecretKey) throws(DefaultsError) -> [String] {
        guard rotationNames().count <= facts.maximumKeysPerUpdate else {
            throw DefaultsError(
                .invalidArgument,
                "the secret values are more than one update here takes (\(facts.maximumKeysPerUpdate)); "
                    + "nothing was written", path: path)
        }
        var names: [String] = []
        do {
            // The names are taken under the save lock, so that a secret saved meanwhile (sealed with the old key)
            // is among them; a secret removed and not saved is too (its saved value is sealed): the rotation
            // writes its removal, as any update writes the unsaved changes of its names.
            try modify(
                [], resealing: SecretCipher(key: key),
                namesUnderLock: { [self] in
                    names = rotationNames()
                    return names
                }
            ) { _ in }
        } catch let error as DefaultsError {
            throw error
        } catch {
            throw DefaultsError(.writeFailed, "the re-encryption failed: \(error)", path: path)
        }
        return names
    }

    /// The names a rotation writes: every secret that has a value, stored or saved (declared secret, or sealed),
    /// sorted by UTF-8 bytes.
    private func rotationNames() -> [String] {
        state.withLock { state in
            state.makeAllCells()
            return state.members.cells.values.filter { cell in
                !cell.isReserved && cell.isSecretOrSealed
                    && (cell.stored.isPresent || cell.saved.map(SecretCipher.isEnvelope) == true)
            }.map(\.name).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }
}

extension Store {
    /// Gives the store, opened before in this process, the key a later opening of its file names
    /// (``Defaults/Options/encryptionKey``) when it has none (a library opened the file first without one). A store
    /// with a key keeps it, as it keeps its other options: the first opening's, or its last rotation's; the later
    /// opening's key is then not read.
    ///
    /// - Throws: What reading the key throws.
    func adoptEncryptionKey(_ source: Defaults.EncryptionKey) throws(DefaultsError) {
        guard cipher.key == nil else { return }
        let key = try source.load()
        state.withLock { state in
            if state.cipher.key == nil { state.setCipher(SecretCipher(key: key)) }
        }
    }
}
