extension Defaults {
    /// Keeps the schema of `keys` (``schema(for:title:)``) with this store, where every other writer finds it:
    /// for a file store, the file beside it that ``schemaURL(forStoreAt:)`` names (written atomically and
    /// durably); for an etcd store, a reserved key under its prefix (so every instance of a fleet, and the
    /// `codable-defaults` tool, check against the same schema); for an in-memory store, in memory. Replaces the
    /// schema kept before. Call it when the program starts, after its keys are declared; it blocks on the write.
    ///
    /// The schema is pretty-printed JSON with sorted members, so an unchanged set of keys writes the same bytes.
    ///
    /// - Throws: What ``schema(for:title:)`` throws; ``DefaultsError/Code-swift.struct/writeFailed`` when it
    ///   cannot be written (the schema kept before stays); ``DefaultsError/Code-swift.struct/notDurable`` when a
    ///   file's directory could not be flushed after it.
    public func publishSchema(for keys: [AnyKey], title: String? = nil) throws(DefaultsError) {
        let schema = try Defaults.schema(for: keys, title: title)
        var bytes = Array(Defaults.pretty(schema, indent: "").utf8)
        bytes.append(0x0A)
        try store.storage.storeSchema(bytes)
    }

    /// The schema kept with this store (``publishSchema(for:title:)``, or a schema an operator put there), read
    /// and checked; `nil` when none is kept. Blocks on the read.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/readFailed`` when it cannot be read;
    ///   ``DefaultsError/Code-swift.struct/invalidJSON`` (line and column) or
    ///   ``DefaultsError/Code-swift.struct/invalidArgument`` (an unsupported keyword) when it is not a schema
    ///   ``Schema`` can check; each error's `path` says where the schema lives.
    public func publishedSchema() throws(DefaultsError) -> Schema? {
        let storage = store.storage
        guard let bytes = try storage.storedSchema() else { return nil }
        return try Schema(bytes: bytes, location: store.facts.schemaLocation)
    }

    /// Where this store's schema is kept, for messages: the schema file's path, the etcd key (its last byte
    /// written `\xFF`), or `memory`.
    public var schemaLocation: String { store.facts.schemaLocation }
}
