#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The stores open in this process, one per file path, so that every ``Defaults`` on one file shares one
/// in-memory state. Holds them weakly; flushes the live ones at normal process exit.
/// A weak reference to a store.
final class WeakStore {
    weak var store: Store?
    init(_ store: Store) { self.store = store }
}

enum StoreRegistry {
    private static let lock = Lock()
    nonisolated(unsafe) private static var stores: [String: WeakStore] = [:]
    nonisolated(unsafe) private static var exitHookInstalled = false

    /// The open store for `path`, or a new one made by `open`.
    static func store(
        for path: String, open: () throws(DefaultsError) -> Store
    ) throws(DefaultsError) -> Store {
        lock.lock()
        defer { lock.unlock() }
        if let store = stores[path]?.store { return store }
        let store = try open()
        stores[path] = WeakStore(store)
        if stores.count > 64 { stores = stores.filter { $0.value.store != nil } }
        if !exitHookInstalled {
            exitHookInstalled = true
            atexit { StoreRegistry.flushAll() }
        }
        return store
    }

    /// Saves the unsaved changes of every open store, reporting failures to each store's error handler.
    static func flushAll() {
        let live = lock.withLock { stores.values.compactMap(\.store) }
        for store in live {
            do { try store.save() } catch { store.report(error) }
        }
    }
}
