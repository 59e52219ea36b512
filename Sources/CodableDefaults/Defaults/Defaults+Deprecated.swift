// The spellings replaced when the API took one spelling per act (a typed key is the object of a verb, unlabeled:
// `modify(_:)`, `reset(_:)`, `observe(_:)`; and follows `for:` after a noun: `value(for:)`, `source(for:)`,
// `hasStoredValue(for:)`, `updates(for:)`, as the string API follows `forKey:`; one act, one name: `save()`).
// They keep existing code compiling, with a warning that names the replacement.

extension Defaults {

    ///
    /// - Throws: What `save()` throws.
    @available(*, deprecated, renamed: "save()")
    public func flush() throws(DefaultsError) {
        try save()
    }

    /// Saves every store open in this process: the former name of ``saveAll()``.
    @available(*, deprecated, renamed: "saveAll()")
    public static func flushAll() {
        saveAll()
    }

    /// Which domain or layer supplies `key`'s effective value: the former spelling of ``source(for:)``.
    @available(*, deprecated, renamed: "source(for:)")
    public func source<Value>(of key: Key<Value>) -> Source {
        source(for: key)
    }

    /// Every value `key` has, in lookup order: the former spelling of ``layeredValues(for:)``.
    ///
    /// - Throws: What ``layeredValues(for:)`` throws.
    @available(*, deprecated, renamed: "layeredValues(for:)")
    public func layeredValues<Value>(of key: Key<Value>) throws(DefaultsError) -> [LayeredValue] {
        try layeredValues(for: key)
    }

    /// Whether the store holds a value for `key`: the former spelling of ``hasStoredValue(for:)``.
    @available(*, deprecated, renamed: "hasStoredValue(for:)")
    public func hasStoredValue(_ key: AnyKey) -> Bool {
        hasStoredValue(for: key)
    }

    /// A key's values as an asynchronous sequence: the former spelling of ``updates(for:options:)``.
    @available(*, deprecated, renamed: "updates(for:options:)")
    public func updates<Value>(_ key: Key<Value>, options: ObservationOptions = [.initial]) -> AsyncStream<Value> {
        updates(for: key, options: options)
    }

    /// Changes to any of several keys: the former spelling of ``updates(forAnyOf:options:)-(AnyKey...,_)``.
    @available(*, deprecated, renamed: "updates(forAnyOf:options:)")
    public func updates(of keys: AnyKey..., options: ObservationOptions = [.initial]) -> AsyncStream<Set<String>> {
        updates(forAnyOf: keys, options: options)
    }

    /// Changes to any of several keys: the former spelling of ``updates(forAnyOf:options:)-([AnyKey],_)``.
    @available(*, deprecated, renamed: "updates(forAnyOf:options:)")
    public func updates(of keys: [AnyKey], options: ObservationOptions = [.initial]) -> AsyncStream<Set<String>> {
        updates(forAnyOf: keys, options: options)
    }
}
