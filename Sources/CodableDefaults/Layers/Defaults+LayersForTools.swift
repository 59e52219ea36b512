extension Defaults {
    /// The names that have an effective value: stored, registered, in the argument domain, or in a layer's file,
    /// directory or values (the environment names no keys of its own, so a name found only there is listed once
    /// it has been read), sorted as in the file (by UTF-8 bytes). The reserved schema-version member is not
    /// listed.
    ///
    /// What a tool lists to show every effective value, as ``keys`` lists the stored ones. Unlike the keys of
    /// ``dictionaryRepresentation()``, two names that differ only in Unicode normalization are both listed.
    /// Thread-safe; reads no value.
    public var effectiveKeys: [String] { store.effectiveNames }
}

extension Defaults {
    /// Makes `names` secret for this store, as a key made with `secret: true` is: their values are withheld from
    /// every history record this store writes (a rename's under its new name too), from its errors, and from
    /// ``layeredValues(forKey:)``. For a program that declares no keys (the command-line tool), which learns
    /// which keys are secret from the store's schema and history. Thread-safe; lasts for the store's life.
    package func markSecret(_ names: [String]) {
        store.markSecret(names)
    }

    /// Whether `name` is secret for this store: a key declared so, marked by ``markSecret(_:)``, marked secret
    /// by a history record this store has read, or whose stored value is encrypted. Thread-safe.
    package func isSecret(forKey name: String) -> Bool {
        store.isSecret(name)
    }

    /// The stored value of `name` as it rests when it is encrypted (``Options/encryptionKey``): the text of its
    /// envelope, which reads back as the same value when stored again under the same name; `nil` when the
    /// stored value is not encrypted (or nothing is stored). Needs no key. Thread-safe.
    package func encryptedText(forKey name: String) -> String? {
        store.sealedValue(name).flatMap(SecretCipher.envelopeText)
    }

    /// ``modify(forKeys:_:)-l5vt`` whose `body` gets an encrypted value as its encrypted text (a string) and may
    /// give it back so, which needs no key (the command-line tool's `edit`, which shows that text). A value `body`
    /// changes is encrypted as any. Thread-safe; blocks as `modify` does.
    package func modifyShowingEncryptedText<Result>(
        forKeys names: [String], _ body: (inout [JSONValue?]) throws -> Result
    ) throws -> Result {
        try modify(forKeys: names, secretNames: [], opensSealed: false, body)
    }

    /// The stored value of `name` decrypted, when it is encrypted and opens with the store's key; `nil` otherwise
    /// (not encrypted, nothing stored, no key, another key, changed): nothing is reported. Thread-safe.
    package func decryptedValue(forKey name: String) -> JSONValue? {
        guard let fragment = store.sealedValue(name) else { return nil }
        let cipher = store.cipher
        do {
            let plain = try cipher.open(fragment, name: name, path: store.path)
            return try JSONValue(parsing: String(decoding: plain, as: UTF8.self))
        } catch {
            return nil  // Not decryptable: the caller keeps the encrypted text, which is what rests.
        }
    }

    /// Whether the store was opened with an encryption key (``Options/encryptionKey``). Thread-safe.
    package var hasEncryptionKey: Bool {
        store.cipher.key != nil
    }

    /// The error of `name`'s value when it is there but cannot be read (on etcd, text another tool stored that is
    /// not JSON), quoting none of it when the name is secret (``isSecret(forKey:)``); `nil` otherwise, and always
    /// for a file or memory store. Thread-safe.
    package func unreadableValue(named name: String) -> DefaultsError? {
        store.remote?.unreadableValue(named: name, secret: isSecret(forKey: name))
    }

    /// The errors of every value that is there but cannot be read (`unreadableValue(named:)`), in the order of
    /// their keys' UTF-8 bytes, keeping those `including` takes. Thread-safe.
    package func unreadableValues(including: (String) -> Bool = { _ in true }) -> [DefaultsError] {
        (store.remote?.unreadableNames() ?? []).filter(including).compactMap { unreadableValue(named: $0) }
    }
}
