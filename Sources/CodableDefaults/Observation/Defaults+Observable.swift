import Observation

/// `Defaults` takes part in Observation: a read inside `withObservationTracking` (or a SwiftUI view's
/// `body`) registers what it read, and the tracking's `onChange` runs when that changes.
///
/// Reads that register: the subscript, ``value(for:)``, the string-key getters (``object(forKey:)``,
/// ``integer(forKey:)`` and the others, ``value(_:forKey:)``), ``hasStoredValue(for:)`` and
/// ``hasStoredValue(forKey:)`` register the key they read; ``keys`` and ``dictionaryRepresentation()``
/// register the set of names (and the latter each value it holds). A `@Persisted` property reads through its
/// store, so it registers the same way.
///
/// ```swift
/// let defaults = Defaults.inMemory()
/// let volume = Defaults.Key<Double>("volume", default: 0.5)
/// let current = withObservationTracking {
///     defaults[volume]
/// } onChange: {
///     print("volume changed")
/// }
/// defaults[volume] = 0.8  // prints "volume changed"
/// ```
///
/// `onChange` runs when the effective value of a read key changes by any path: a set, a reset or
/// ``removeAll()``, ``register(defaults:)``, a batch (once), ``reload()``, ``discardUnsavedChanges()``, the
/// argument domain, or another process's save. For the set of names it runs when a name gains or loses a
/// stored value or a value in any domain. A change of a key that was not read does not run it.
///
/// **Threads.** As with observers (see <doc:ObservingChanges>), `onChange` runs on the thread that made a
/// local change, after the change and outside the store's lock, before ``observe(_:options:_:)`` handlers are
/// called; for another process's save it runs on the store's own serial queue. It may read and write the
/// store.
///
/// **Watching.** A tracked read of a file-backed store starts its file watcher, as adding an observer does,
/// so that another process's save reaches the tracking.
///
/// **Cost.** A read outside any tracking pays Observation's thread-local check and nothing else: no lock and
/// no allocation more than before. A key's first tracked read makes its tracking identity once.
extension Defaults: Observable {}
