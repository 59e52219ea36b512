extension Defaults {
    /// Writes the unsaved changes of every store open in this process, durably, before returning.
    ///
    /// The stores are saved one after another on the calling thread, as `save()` saves one; each store's
    /// failure goes to its ``onError`` handler (called on this thread, outside every lock) rather than being
    /// thrown, so one failing store does not keep the others from being saved. When it returns, every change
    /// made before the call is on disk or reported, and no lock file is held.
    ///
    /// The library calls it itself at normal process exit, and on iOS, iPadOS, tvOS, visionOS and watchOS when
    /// the app moves to the background or is about to terminate (see <doc:ApplePlatforms>). Call it where the
    /// process may end without either: an app extension (a widget, a share extension) before it finishes, a
    /// Mac app that enables sudden termination, a daemon before it is killed with `SIGKILL`. Each save may
    /// wait up to its store's ``Options/lockTimeout`` for another process's lock.
    public static func saveAll() {
        StoreRegistry.saveAll()
    }
}
