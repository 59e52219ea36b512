/// Observes several typed keys, for ``Defaults/updates(forAnyOf:options:)-(AnyKey...,_)``: each delivery hands its
/// handler the names of the keys whose effective value really changed, so a batch that changes several of them
/// is one call.
///
/// It is registered under each of its names. A change to two of them reaches it twice (once per name); the
/// second delivery finds nothing new and calls nothing.
///
/// `@unchecked Sendable`: the watched keys' last values are touched only by the delivering thread (see
/// ``Observer``); everything else is immutable and `Sendable`.
final class KeysObserver: Observer, @unchecked Sendable {
    /// The distinct names it is registered under.
    let names: [String]
    // Touched only by the delivering thread (see `Observer`).
    private let watched: [any WatchedKey]
    private let handler: @Sendable (Set<String>) -> Void

    /// Reads the keys' current values (the ones later changes are compared with).
    init(store: Store, keys: [Defaults.AnyKey], handler: @escaping @Sendable (Set<String>) -> Void) {
        var names: [String] = []
        var seen = Set<MemberName>()
        for key in keys where seen.insert(MemberName(key.name)).inserted { names.append(key.name) }
        self.names = names
        self.watched = keys.map { key in
            (key as? any WatchableKey)?.watch(in: store)
                ?? TypedWatch(key: Defaults.Key<JSONValue?>(key.name), in: store)
        }
        self.handler = handler
        super.init(store: store)
    }

    override func run(names: Set<MemberName>) {
        guard let store else { return }
        // Every key is looked at, whatever `names` holds: the catch-up call after registering has no names.
        var changed = Set<String>()
        for key in watched where key.changed(in: store) { changed.insert(key.name) }
        guard !changed.isEmpty else { return }
        callHandler { handler(changed) }
    }

    override func unregister() {
        for name in names { store?.removeObserver(self, name: name) }
    }
}

/// One key a ``KeysObserver`` watches, with the value it last saw. Touched only by the delivering thread.
protocol WatchedKey: AnyObject {
    var name: String { get }
    /// Reads the key's value: whether it differs from the last one seen (which it then becomes).
    func changed(in store: Store) -> Bool
}

/// A typed key's ``WatchedKey``: values compared as ``KeyObserver`` compares them.
final class TypedWatch<Value: Codable & Sendable>: WatchedKey {
    let key: Defaults.Key<Value>
    private var last: Value

    init(key: Defaults.Key<Value>, in store: Store) {
        self.key = key
        self.last = store.value(for: key)
    }

    var name: String { key.name }

    func changed(in store: Store) -> Bool {
        let current = store.value(for: key)
        if KeyObserver.same(last, current, key: key) { return false }
        last = current
        return true
    }
}

/// A key whose value type is known, so it can be watched typed (every ``Defaults/Key`` is one).
protocol WatchableKey {
    func watch(in store: Store) -> any WatchedKey
}

extension Defaults.Key: WatchableKey {
    func watch(in store: Store) -> any WatchedKey { TypedWatch(key: self, in: store) }
}
