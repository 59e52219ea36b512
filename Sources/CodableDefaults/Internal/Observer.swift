#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An observation registered with a store: told after changes, it works out whether the value it watches
/// really changed and calls its handler.
///
/// Delivery holds the observer's own recursive lock (never the store's) around the comparison and the
/// handler call, so calls of one handler never overlap, a handler may read and write the store (and so run
/// itself again on the same thread), and once ``cancel()`` returns the handler is never called again.
class Observer: @unchecked Sendable {
    let deliveryLock = RecursiveLock()
    /// Set by ``cancel()``; read and written under ``deliveryLock``.
    private(set) var isCancelled = false
    /// The store, weakly: the store holds its observers.
    weak var store: Store?

    init(store: Store) {
        self.store = store
    }

    /// Compares the current value with the last one delivered and calls the handler if it changed.
    /// `names` are the names whose stored state changed. Call without holding the store's lock.
    func deliver(names: Set<String>) {}

    /// Stops deliveries and unregisters from the store. Waits for a handler call running on another thread;
    /// may be called from inside the handler.
    func cancel() {
        let first: Bool = deliveryLock.withLock {
            defer { isCancelled = true }
            return !isCancelled
        }
        if first { unregister() }
    }

    /// Removes the observer from the store.
    func unregister() {}
}

/// Observes one typed key.
final class KeyObserver<Value: Codable & Sendable>: Observer, @unchecked Sendable {
    let key: Defaults.Key<Value>
    private let handler: @Sendable (Defaults.Change<Value>) -> Void
    /// The value last delivered (or read when registering); guarded by `deliveryLock`.
    private var last: Value

    init(
        store: Store, key: Defaults.Key<Value>, initial: Value,
        handler: @escaping @Sendable (Defaults.Change<Value>) -> Void
    ) {
        self.key = key
        self.handler = handler
        self.last = initial
        super.init(store: store)
    }

    override func deliver(names: Set<String>) {
        deliveryLock.withLock {
            guard !isCancelled, let store else { return }
            let current = store.value(for: key)
            guard !Self.same(last, current, key: key) else { return }
            let change = Defaults.Change(key: key.name, oldValue: last, newValue: current)
            last = current
            handler(change)
        }
    }

    /// Calls the handler once with the current value as both old and new (the `.initial` option).
    func deliverInitial() {
        deliveryLock.withLock {
            guard !isCancelled else { return }
            handler(Defaults.Change(key: key.name, oldValue: last, newValue: last))
        }
    }

    override func unregister() {
        store?.removeObserver(self, name: key.name)
    }

    /// Whether two values are the same: `==` for `Equatable` values, equal JSON otherwise.
    static func same(_ lhs: Value, _ rhs: Value, key: Defaults.Key<Value>) -> Bool {
        if let isEqual = key.isEqual { return isEqual(lhs, rhs) }
        let encoder = Codec.makeEncoder()
        do {
            return try encoder.encode(lhs) == encoder.encode(rhs)
        } catch {
            // A value that cannot be encoded cannot be compared: count it as a change rather than hide it.
            return false
        }
    }
}

/// Observes the set of names that changed, for ``Defaults/observeAll(_:)``.
final class AllObserver: Observer, @unchecked Sendable {
    private let handler: @Sendable (Set<String>) -> Void

    init(store: Store, handler: @escaping @Sendable (Set<String>) -> Void) {
        self.handler = handler
        super.init(store: store)
    }

    override func deliver(names: Set<String>) {
        deliveryLock.withLock {
            guard !isCancelled, !names.isEmpty else { return }
            handler(names)
        }
    }

    override func unregister() {
        store?.removeAllObserver(self)
    }
}
