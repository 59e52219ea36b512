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
