extension Defaults {
    /// One change of a key's value, as delivered to an observer.
    ///
    /// Its `description` (and `dump`) show the values, except a secret key's (``AnyKey/isSecret``): `<secret>`.
    public struct Change<Value: Sendable>: Sendable, CustomStringConvertible, CustomReflectable {
        /// The name of the key that changed.
        public let key: String
        /// The value before the change (for the `.initial` call: the current value).
        public let oldValue: Value
        /// The value after the change.
        public let newValue: Value
        /// Whether the key is secret, so that the description leaves its values out.
        let isSecret: Bool

        init(key: String, oldValue: Value, newValue: Value, isSecret: Bool = false) {
            self.key = key
            self.oldValue = oldValue
            self.newValue = newValue
            self.isSecret = isSecret
        }

        /// `key: old -> new`, or `key: <secret> -> <secret>` for a secret key.
        public var description: String {
            isSecret ? "\(key): <secret> -> <secret>" : "\(key): \(oldValue) -> \(newValue)"
        }

        /// The key and the values, a secret key's left out.
        public var customMirror: Mirror {
            isSecret
                ? Mirror(self, children: ["key": key, "oldValue": "<secret>", "newValue": "<secret>"])
                : Mirror(self, children: ["key": key, "oldValue": oldValue, "newValue": newValue])
        }
    }

    /// Options for ``Defaults/observe(_:options:_:)``.
    public struct ObservationOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: Int

        /// Creates options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Call the handler once, at once, with the current value as both old and new value.
        public static let initial = ObservationOptions(rawValue: 1)
    }

    /// Observes the value of `key`: `handler` is called after each change of the key's effective value.
    ///
    /// The effective value is what the subscript returns, in the lookup order of a read (argument domain,
    /// override layers, stored value, fallback layers, registered value, the key's default; see ``Layer``). The
    /// handler runs only when it really changed (compared with `==` for `Equatable` values, as JSON
    /// otherwise): setting an equal value again calls nothing. It runs for sets, removals, resets,
    /// ``removeAll()``, ``batch(_:)``s and ``reload()-4e93u``s made in this process, and for changes other
    /// processes saved to the file: observing starts ``startWatching()``.
    ///
    /// **Delivery.** A change made in this process is delivered synchronously on the thread that made it,
    /// after the store's lock is released, before the change's call returns; so are the changes a
    /// ``reload()-4e93u`` finds. Changes other processes made that the file watcher notices are delivered on the
    /// store's own serial queue. Calls of one handler never overlap: while one runs on a thread, a change
    /// made on another thread is left for that running delivery to pick up when the handler returns (so
    /// the other thread does not wait for it), and the handler may see two such changes merged into one
    /// (`oldValue` is always the `newValue` of the call before). A handler may read and write the store,
    /// including its own key: it is then called again after it returns, only if the value really changed
    /// again. It may cancel its own token. Every kind of handler and where it runs:
    /// <doc:ObservingChanges#Where-handlers-run>.
    ///
    /// ```swift
    /// let token = defaults.observe(.volume) { change in
    ///     player.volume = change.newValue
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key to observe.
    ///   - options: `.initial` to be called once at once with the current value.
    ///   - handler: Called with the old and new value.
    /// - Returns: A token that ends the observation on ``ObservationToken/cancel()`` or when released: keep
    ///   it as long as you want changes.
    public func observe<Value>(
        _ key: Key<Value>, options: ObservationOptions = [],
        _ handler: @escaping @Sendable (Change<Value>) -> Void
    ) -> ObservationToken {
        let observer = KeyObserver(
            store: store, key: key, initial: store.value(for: key), callsAtOnce: options.contains(.initial),
            handler: handler)
        store.addObserver(observer, name: key.name)
        // Also catches up with a change made between reading the initial value and registering.
        observer.deliver(names: [])
        return ObservationToken(observer)
    }

    /// Observes the value stored under a string key, untyped, as a ``JSONValue`` (`nil` when nothing is
    /// stored).
    ///
    /// Same delivery rules as ``observe(_:options:_:)`` (see <doc:ObservingChanges#Where-handlers-run>); values are
    /// compared as JSON.
    ///
    /// - Parameters:
    ///   - name: The key's name.
    ///   - options: `.initial` to be called once at once with the current value.
    ///   - handler: Called with the old and new value.
    /// - Returns: A token that ends the observation on ``ObservationToken/cancel()`` or when released.
    public func observe(
        forKey name: String, options: ObservationOptions = [],
        _ handler: @escaping @Sendable (Change<JSONValue?>) -> Void
    ) -> ObservationToken {
        observe(Key<JSONValue?>(name), options: options, handler)
    }

    /// Observes every change: `handler` receives the names of the keys whose stored value changed.
    ///
    /// Called once per change (once per ``batch(_:)``), on the thread that made it, after the store's lock
    /// is released; for other processes' changes that the watcher notices, on the store's queue. A set of an
    /// `Equatable` value equal to the value cached for its key object is not a change; any other set, removal
    /// or reset of a stored value counts, even if the value ends up equal. See
    /// <doc:ObservingChanges#Where-handlers-run>.
    ///
    /// Key names are bytes, but a `Set<String>` compares by Unicode canonical equivalence: if two keys
    /// whose names differ only in normalization (`"\u{E9}"` and `"e\u{301}"`) change together, the set
    /// holds one of the two names.
    ///
    /// - Parameter handler: Called with the names of the keys that changed.
    /// - Returns: A token that ends the observation on ``ObservationToken/cancel()`` or when released.
    public func observeAll(_ handler: @escaping @Sendable (Set<String>) -> Void) -> ObservationToken {
        let observer = AllObserver(store: store, handler: handler)
        store.addAllObserver(observer)
        return ObservationToken(observer)
    }

    /// Starts noticing changes other processes make to the file, so that reads and observers follow them without a
    /// ``reload()-4e93u``.
    ///
    /// Observing anything starts it too. It watches the file's directory (inotify on Linux, a dispatch
    /// source on Apple platforms; where that is impossible, a `stat` of the file once a second) and
    /// re-reads the file only when it is not the version this store last read or wrote, so the store's own
    /// saves cost nothing. Observers of keys whose values changed are called on the store's own serial
    /// queue (see <doc:ObservingChanges#Where-handlers-run>). A file that no longer parses is reported to
    /// ``onError`` once per version; the store keeps its
    /// last good state and never writes over the broken file. Watching stops when the last `Defaults` on
    /// the file goes away. Does nothing for an in-memory store.
    public func startWatching() {
        store.startWatching()
    }

}

/// A registered observation: it lasts until ``cancel()`` is called or the token is released.
///
/// `Sendable`: cancel from any thread. Once ``cancel()`` returns, the handler is never called again: a call
/// running on another thread is waited for, except when ``cancel()`` is itself called from inside a handler
/// (this observer's or any other's, of any store), which never waits, so handlers that cancel each other cannot
/// deadlock; the cancelled handler may then finish the call it is in, and is not called after it.
///
/// A token keeps its store open (and its file watched): observing a store you no longer hold any other
/// reference to still works.
public final class ObservationToken: Sendable {
    private let observer: Observer
    /// Keeps the store, and so the observation, alive as long as the token.
    private let store: Store?

    init(_ observer: Observer) {
        self.observer = observer
        self.store = observer.store
    }

    deinit {
        observer.cancel()
    }

    /// Ends the observation. Calling it again does nothing.
    public func cancel() {
        observer.cancel()
    }
}
