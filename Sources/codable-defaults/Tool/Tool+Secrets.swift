import CodableDefaults

/// One notion of a secret key for every store of the run, known to every command that prints or records a value.
///
/// A key is secret when the store's schema marks it (`"x-secret"`: the schema beside the store file or under the
/// etcd prefix, and the one `--schema` names), or a record of its history marks it (a program that declared it
/// so). The tool declares no keys of its own, so it learns them when it opens the store, and makes them secret
/// for the store (``Defaults/markSecret(_:)``): the library then records their changes without values (a
/// `rename`'s under the new name too) and marks their values secret in ``Defaults/layeredValues(forKey:)``. The
/// commands print such a value as `<secret>` (`read`, `diff`, a dry run, `history`, `undo`), refuse to print or
/// export it without `--show-secrets`, and never quote it in an error.
extension Tool {
    /// Learns which keys of `store` are secret (see the extension's comment) and makes them secret for it.
    ///
    /// - Throws: Status 4 when the store's schema exists but cannot be read (it says which keys are secret),
    ///   unless the command was given `--no-schema` (then a note says so, and the history's marks still hold).
    func learnSecrets(of store: OpenedStore, schema options: SchemaOptions?) throws(ToolError) {
        var names = Set(store.schema?.schema.secretKeyNames ?? [])
        // The store's own schema marks secrets whatever the command checks against (`--schema FILE`, or none).
        if options == nil || options?.file != nil || options?.isOff == true {
            do {
                names.formUnion(try store.defaults.publishedSchema()?.secretKeyNames ?? [])
            } catch {
                guard options?.isOff == true else {
                    throw ToolError(
                        .badFile,
                        "\(error.description) (the store's schema says which keys are secret: it must be readable)")
                }
                Output.printError(
                    "codable-defaults: note: \(error.description) (with --no-schema, only the history says which "
                        + "keys are secret)\n")
            }
        }
        store.defaults.markSecret(names.sorted())
        // The history's marks: reading it makes the keys its records mark secret for the store. A store file's
        // only: an etcd prefix's history is walked record by record, read by `history` and `undo` alone.
        guard !store.location.isEtcd else { return }
        do throws(DefaultsError) {
            _ = try store.defaults.history()
        } catch {
            Output.printError(
                "codable-defaults: note: \(error.description) (the history cannot say which keys its records mark "
                    + "secret)\n")
        }
    }

    /// The error (status 4) of an encrypted value of `key` a command needs decrypted, with no key given.
    static func noEncryptionKey(_ store: OpenedStore, key: String) -> ToolError {
        ToolError(
            .badFile,
            "\(store.path): key \(KeyText.message(key)): the value is encrypted and no encryption key is given "
                + "(--encryption-key FILE, or $\(StoreArguments.encryptionKeyVariable))")
    }

    /// Whether `store` holds a stored value of a secret key (``learnSecrets(of:schema:)``) in clear: an encrypted
    /// one may be printed and exported as its encrypted text.
    func holdsSecrets(_ store: OpenedStore) -> Bool {
        store.defaults.keys.contains {
            store.defaults.isSecret(forKey: $0) && store.defaults.encryptedText(forKey: $0) == nil
        }
    }
}
