import CodableDefaults

/// Dry runs (``DryRun``): the stored members before and after the command's changes, printed as `diff`
/// prints them, and the changes discarded.
extension Tool {
    /// Prints what the command changed in `store` since it was opened, as ``DiffText`` writes it. The changes
    /// stay in memory until the command ends (so that `write` can say what shadows its key); the tool then
    /// discards them (``CodableDefaults/Defaults/discardUnsavedChanges()``), so nothing writes them, at exit either.
    func printDryRun(_ store: OpenedStore) throws(ToolError) {
        let after = try storedOnlyMembers(store)
        let lines = DiffText.lines(
            from: store.membersAsOpened, to: after, isSecret: { store.defaults.isSecret(forKey: $0) })
        try Output.print(lines.joined())
    }

    /// Every stored key and value of `store`, with the reserved schema-version member when the file has
    /// one, sorted by UTF-8 bytes; a value set and not yet saved is read as it would be written.
    ///
    /// The stored value itself, never a layer's: with layer options (`write` takes them), an override that
    /// shadows a key would otherwise hide its change.
    func storedOnlyMembers(_ store: OpenedStore) throws(ToolError) -> [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = []
        for key in store.defaults.keys {
            if let value = try storedOnlyValue(store, key: key) { members.append((key, value)) }
        }
        if let version = store.defaults.object(forKey: Defaults.schemaVersionKey) {
            members.append((Defaults.schemaVersionKey, version))
            members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        }
        return members
    }

    /// The stored value of `key` as a dry run reads it, without the file's lock: `nil` when none is stored.
    ///
    /// - Throws: Status 4 when the value is there but cannot be read: on etcd, text that is not JSON (as the
    ///   real run's update, which reads it under the lock, refuses it).
    func currentStoredValue(_ store: OpenedStore, key: String) throws(ToolError) -> JSONValue? {
        if let value = try storedOnlyValue(store, key: key) { return value }
        if let unreadable = store.defaults.unreadableValue(named: key) {
            throw ToolError(.badFile, unreadable.description)
        }
        return nil
    }

    /// The stored value of `key` (not a layer's), or `nil` when none is stored.
    private func storedOnlyValue(_ store: OpenedStore, key: String) throws(ToolError) -> JSONValue? {
        for layered in try layeredValues(store, key: key) {
            if case .stored = layered.source { return layered.value }
        }
        return nil
    }
}
