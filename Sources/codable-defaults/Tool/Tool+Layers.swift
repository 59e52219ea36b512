import CodableDefaults

/// What a command does with a secret value it would print.
enum SecretHandling: Sendable {
    /// Print it (`--show-secrets`).
    case shown
    /// Print `"<secret>"` in its place, and say so on standard error.
    case masked
    /// Fail, naming the key and where the value is, never the value.
    case refused
}

/// The stores as the commands read them with layers: every layer's value, the effective values, and the note
/// of a `write` whose key an override shadows.
extension Tool {
    /// What `explain` prints for a secret value, and `read` (whole store) in its place.
    static let secretPlaceholder = "<secret>"

    /// Every domain's and layer's value of `key`, in lookup order.
    func layeredValues(_ store: OpenedStore, key: String) throws(ToolError) -> [Defaults.LayeredValue] {
        do {
            return try store.defaults.layeredValues(forKey: key)
        } catch {
            throw ToolError(error)
        }
    }

    /// The value reads of `key` give (the first in lookup order).
    ///
    /// - Throws: `keyNotFound` when no domain or layer has one; a failure naming the key and where the value
    ///   is, when it is secret and `secrets` is ``SecretHandling/refused``.
    func effectiveValue(_ store: OpenedStore, key: String, secrets: SecretHandling) throws(ToolError) -> JSONValue {
        guard let effective = try layeredValues(store, key: key).first else {
            throw ToolError(
                .keyNotFound, "\(store.path): key \(KeyText.message(key)): no value stored or in a layer")
        }
        guard effective.isSecret else { return effective.value }
        switch secrets {
        case .shown:
            // A stored value that is encrypted: the library gives its text when the store has no key, and showing
            // it is what was asked, not its text.
            if case .stored = effective.source, !store.defaults.hasEncryptionKey,
                store.defaults.encryptedText(forKey: key) != nil
            {
                throw Self.noEncryptionKey(store, key: key)
            }
            return effective.value
        case .masked: return .string(Self.secretPlaceholder)
        case .refused: throw secretRefusal(store, key: key, source: effective.source)
        }
    }

    /// Every listed key's effective value (the stored keys and those of the layers' files and directories; the
    /// environment lists none), sorted by UTF-8 bytes, with the stored schema version when the file has one;
    /// and the keys whose secret value was masked.
    func effectiveMembers(_ store: OpenedStore, secrets: SecretHandling) throws(ToolError)
        -> (members: [(key: String, value: JSONValue)], masked: [String])
    {
        var members: [(key: String, value: JSONValue)] = []
        var masked: [String] = []
        for key in store.defaults.effectiveKeys {
            guard let effective = try layeredValues(store, key: key).first else { continue }
            if effective.isSecret && secrets == .masked { masked.append(key) }
            members.append((key, try effectiveValue(store, key: key, secrets: secrets)))
        }
        if let version = store.defaults.object(forKey: Defaults.schemaVersionKey) {
            members.append((Defaults.schemaVersionKey, version))
            members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        }
        return (members, masked)
    }

    /// Runs `body`, a write of `key`, then says on standard error what shadows `key` when an override (or the
    /// argument domain) does: the store holds the new value, but reads give the override's. Also after a write
    /// that is not confirmed durable (status 5): the file holds the value.
    func notingShadowing(
        of key: String, in store: OpenedStore, _ body: () throws(ToolError) -> Void
    ) throws(ToolError) {
        do throws(ToolError) {
            try body()
        } catch  where error.status == .notDurable {
            noteShadowing(of: key, in: store)
            throw error
        }
        noteShadowing(of: key, in: store)
    }

    /// Prints the note of a written `key` whose effective value comes from elsewhere.
    private func noteShadowing(of key: String, in store: OpenedStore) {
        let source = store.defaults.source(forKey: key)
        if case .stored = source { return }
        Output.printError(
            "codable-defaults: note: \(KeyText.message(key)) is shadowed by \(Self.sourceText(source)); "
                + "reads give that value\n")
    }

    /// The error of a secret value a command was asked to print without `--show-secrets`.
    private func secretRefusal(_ store: OpenedStore, key: String, source: Defaults.Source) -> ToolError {
        ToolError(
            .failure,
            "\(store.path): key \(KeyText.message(key)): the value (\(Self.sourceText(source))) is secret; "
                + "give --show-secrets to print it")
    }

    /// Where a value is, as `explain` prints it: `environment NAME`, `file PATH`, `stored PATH`, `registered`,
    /// `argument` or `default`. A variable or path that would be ambiguous in a line (it holds a tab or a line
    /// break...) is a JSON string, as `keys` prints such a key.
    static func sourceText(_ source: Defaults.Source) -> String {
        switch source {
        case .argument: return "argument"
        case .environment(let variable): return "environment " + KeyText.line(variable)
        case .file(let path): return "file " + KeyText.line(path)
        case .values(let label): return "values " + KeyText.message(label)
        case .stored(let path): return "stored " + (path.map(KeyText.line) ?? "(in memory)")
        case .registered: return "registered"
        case .default: return "default"
        }
    }
}
