import CodableDefaults

/// A store's history (``Defaults/history()``), as `history` and `undo` read it.
extension Tool {
    /// The saves the history of `store` kept, newest first; with `key`, those that changed it, each with only
    /// that key's change.
    ///
    /// - Throws: The library's error, with its exit status (4 for a history file that cannot be read).
    func history(_ store: OpenedStore, forKey key: String? = nil) throws(ToolError) -> [Defaults.HistoryEntry] {
        do throws(DefaultsError) {
            if let key { return try store.defaults.history(forKey: key) }
            return try store.defaults.history()
        } catch {
            throw ToolError(error)
        }
    }

    /// Makes `keys` secret keys of `store` for the rest of the run, as a program's `Key(_:secret:)` does: a
    /// change the tool makes to one (a revert that removes it) is recorded, returned and printed without its
    /// values. The tool declares no keys, so it takes them from the history: the keys it shows as secret
    /// (``HistoryText/secretKeys(in:)``).
    ///
    /// - Throws: The library's error, with its exit status.
    func treatAsSecret(_ keys: [String], in store: OpenedStore) throws(ToolError) {
        for key in keys {
            // Reading a key's history through a secret key marks it secret in the store.
            do {
                _ = try store.defaults.history(for: Defaults.Key<JSONValue?>(key, secret: true))
            } catch {
                throw ToolError(error)
            }
        }
    }
}
