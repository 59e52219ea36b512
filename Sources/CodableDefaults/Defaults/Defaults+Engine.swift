import Dispatch

extension Defaults {
    /// Opens a store on `storage`, an engine of another target of this package (the etcd engine): reads what it
    /// holds, and starts taking in what other writers store (the engine's watch) at once, so that reads, served
    /// from memory, follow them without an observer.
    ///
    /// The store is not shared: each call makes a new one, as a second machine would have. Calls `storage`'s
    /// blocking methods on the calling thread.
    ///
    /// - Throws: What ``Storage/open(reporting:)`` throws; nothing is written then.
    package convenience init(
        engine storage: any Storage, saveMode: SaveMode, options: Options = .default,
        onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) throws(DefaultsError) {
        if let location = storage.location { try options.check(path: location) }
        let store = Store(storage: storage, options: options)
        if let onError { store.onError = onError }
        try store.load()
        store.startWatching()
        StoreRegistry.track(store)  // Saved by `saveAll()`, at exit and when an app is suspended.
        self.init(store: store, saveMode: saveMode, url: nil)
    }

    /// The engine of this `Defaults`'s store: for the tool (which asks the etcd engine which values are not
    /// JSON) and for tests of an engine.
    package var engine: any Storage { store.storage }
}
