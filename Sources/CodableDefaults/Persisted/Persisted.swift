/// A property that reads and writes one key of a store.
///
/// ```swift
/// struct PlayerSettings: Sendable {
///     @Persisted(key: "volume") var volume = 0.5                                  // Defaults.standard
///     @Persisted(key: "launches", store: settingsStore) var launches = 0          // inline value = default
///     @Persisted(key: "token", store: settingsStore) var token: String?           // default nil
///     @Persisted(.profile, store: settingsStore) var profile                      // from a typed key
/// }
///
/// let settings = PlayerSettings()
/// settings.volume = 0.9                       // nonmutating: works on a `let`
/// let token = settings.$volume.observe { change in print(change.newValue) }
/// ```
///
/// **The default value rule.** The inline value is the key's *default*: what is read while
/// nothing is stored. Declaring the property never writes it, so a value already stored always wins and is
/// never overwritten by a newly created property.
///
/// **Sharing.** The wrapper holds only its key and its store, so copies are cheap and all read and write the
/// same value: two wrappers on one key and store — in different objects, threads or types — see each
/// other's writes at once and each other's changes through their observers. Reads go through the store's
/// cache: an unchanged value is not decoded again. A stored value that does not decode as `Value` reads as
/// the default, goes to the store's ``Defaults/onError`` handler, and stays stored untouched.
///
/// **Concurrency.** `Persisted` is `Sendable`, and its setter is `nonmutating`, so it works in `Sendable`
/// structs, on `let` constants and from any thread. In a `final class` the compiler cannot check a stored
/// wrapper property as `Sendable` (its storage is a `var`); declare the class `@unchecked Sendable` when it
/// holds only `@Persisted` properties and other `Sendable` `let`s, or hold the settings in a `Sendable`
/// struct. In an actor, `@Persisted` properties are isolated like any other; their values are shared
/// through the store all the same. For settings at global scope, put a `Sendable` settings struct in a
/// `static let` (`enum App { static let settings = PlayerSettings() }`): Swift allows no property wrappers at
/// top level, and a wrapped `static var` counts as global mutable state.
@propertyWrapper
public struct Persisted<Value: Codable & Sendable> {
    /// The key the property reads and writes.
    public let key: Defaults.Key<Value>
    /// The store the property reads and writes.
    public let store: Defaults

    /// A property for `key` in `store`, whose default is the property's inline value
    /// (`@Persisted(key: "launches") var launches = 0`). For an `Equatable` value, setting an equal value is not a
    /// change.
    ///
    /// - Parameters:
    ///   - wrappedValue: The value read while nothing is stored. It is never written by declaring the property.
    ///   - key: The key's name.
    ///   - store: The store; ``Defaults/standard`` when omitted.
    public init(wrappedValue: Value, key: String, store: Defaults = .standard) {
        self.init(Defaults.Key(key, default: wrappedValue), store: store)
    }

    /// A property for a typed key in `store`.
    ///
    /// - Parameters:
    ///   - key: The typed key, with its default.
    ///   - store: The store; ``Defaults/standard`` when omitted.
    public init(_ key: Defaults.Key<Value>, store: Defaults = .standard) {
        self.key = key
        self.store = store
    }

    /// The key's current value; setting stores it (written according to the store's save mode). Setting
    /// `nil` for an optional value removes the stored value.
    public var wrappedValue: Value {
        get { store[key] }
        nonmutating set { store[key] = newValue }
    }

    /// The wrapper itself, for `$property.observe { … }`, `$property.modify { … }`, `$property.reset()` and the
    /// like.
    public var projectedValue: Persisted<Value> { self }

    /// Observes the property's value; see ``Defaults/observe(_:options:_:)`` for the delivery rules.
    ///
    /// - Parameters:
    ///   - options: `.initial` to be called once at once with the current value.
    ///   - handler: Called with the old and new value after each real change.
    /// - Returns: A token that ends the observation on ``ObservationToken/cancel()`` or when released.
    public func observe(
        options: Defaults.ObservationOptions = [], _ handler: @escaping @Sendable (Defaults.Change<Value>) -> Void
    ) -> ObservationToken {
        store.observe(key, options: options, handler)
    }

    /// The property's values as an asynchronous sequence: the current value first, then each new value. See
    /// ``Defaults/updates(for:options:)``.
    public var updates: AsyncStream<Value> { store.updates(for: key) }

    /// Removes the stored value: the property reads its default again.
    public func reset() {
        store.reset(key)
    }

    /// Whether the store holds a value for the property's key (rather than serving the default).
    public var hasStoredValue: Bool { store.hasStoredValue(for: key) }
}

extension Persisted where Value: ExpressibleByNilLiteral {
    /// A property for an optional value whose default is `nil` (`@Persisted(key: "token") var token: String?`). For
    /// an `Equatable` wrapped type, setting an equal value is not a change.
    ///
    /// - Parameters:
    ///   - key: The key's name.
    ///   - store: The store; ``Defaults/standard`` when omitted.
    public init(key: String, store: Defaults = .standard) {
        self.init(Defaults.Key(key, default: nil), store: store)
    }
}

extension Persisted: Sendable {}
