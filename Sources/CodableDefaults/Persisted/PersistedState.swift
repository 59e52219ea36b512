#if canImport(SwiftUI)
    import SwiftUI

    /// A setting in a SwiftUI view, as `@AppStorage` is a `UserDefaults` value: the view reads the key's
    /// value, binds it to controls with `$`, and is redrawn when the value changes, from anywhere.
    ///
    /// ```swift
    /// struct ProfileView: View {
    ///     @PersistedState(.profileName) var name          // a typed key, in Defaults.standard
    ///     @PersistedState(key: "volume", store: settings) var volume = 0.5
    ///
    ///     var body: some View {
    ///         TextField("Name", text: $name)               // $name is a Binding<String>
    ///         Slider(value: $volume, in: 0...1)
    ///     }
    /// }
    /// ```
    ///
    /// **Reading and writing.** `wrappedValue` reads and writes the key in the store as ``Persisted`` does:
    /// a read serves the stored value, else the default (a value that does not decode reads as the default
    /// and goes to the store's ``Defaults/onError``); a write is in memory at once, for every reader, and
    /// saved by the store's ``Defaults/SaveMode`` (500 ms after the last change by default). Declaring the
    /// property never writes the default. `projectedValue` is a `Binding<Value>` whose `get` and `set` do
    /// the same.
    ///
    /// **Updates.** ``Defaults`` takes part in Observation, and SwiftUI tracks what a view's `body` reads:
    /// reading the property, or taking its binding (`$name`, which reads the value too), makes the view
    /// depend on the key, so a change of the key by any path — this view, another view or thread, a
    /// `@Persisted` property, another process's save (the tracked read starts the store's file watcher) —
    /// redraws it. A change made on another thread or by another process reaches SwiftUI on that thread or
    /// on the store's queue; SwiftUI schedules the redraw on the main thread itself.
    ///
    /// **Threads.** The wrapper holds only its key and its store; reads and writes are safe from any thread.
    /// It declares no SwiftUI state of its own and keeps `DynamicProperty`'s default (main-actor) `update()`.
    ///
    /// Compiled only where SwiftUI exists. Written against Apple's documentation of `DynamicProperty` and
    /// `Binding` (`init(get:set:)` takes `@Sendable` closures); not compiled or run by this project's CI,
    /// which builds on Linux.
    @propertyWrapper
    public struct PersistedState<Value: Codable & Sendable>: DynamicProperty {
        /// The key the property reads and writes.
        public let key: Defaults.Key<Value>
        /// The store the property reads and writes.
        public let store: Defaults

        /// A property for a typed key in `store`.
        ///
        /// - Parameters:
        ///   - key: The typed key, with its default.
        ///   - store: The store; ``Defaults/standard`` when omitted.
        public init(_ key: Defaults.Key<Value>, store: Defaults = .standard) {
            self.key = key
            self.store = store
        }

        /// A property for `key` in `store`, whose default is the property's inline value
        /// (`@PersistedState(key: "volume") var volume = 0.5`). Declaring it never writes the default. For an
        /// `Equatable` value, setting an equal value is not a change (no redraw, no save).
        ///
        /// - Parameters:
        ///   - wrappedValue: The value read while nothing is stored.
        ///   - key: The key's name.
        ///   - store: The store; ``Defaults/standard`` when omitted.
        public init(wrappedValue: Value, key: String, store: Defaults = .standard) {
            self.init(Defaults.Key(key, default: wrappedValue), store: store)
        }

        /// The key's current value; setting stores it (saved according to the store's save mode). Setting
        /// `nil` for an optional value removes the stored value.
        public var wrappedValue: Value {
            get { store[key] }
            nonmutating set { store[key] = newValue }
        }

        /// A binding to the key's value, for controls (`TextField("Name", text: $name)`). Taking it reads the
        /// value, so the view that takes it is redrawn when the value changes.
        public var projectedValue: Binding<Value> {
            let key = key
            let store = store
            // The tracked read that makes the view depend on the key, even when only a control reads the
            // binding (and reads it outside the view's `body`).
            _ = store[key]
            return Binding(get: { store[key] }, set: { store[key] = $0 })
        }
    }

    extension PersistedState where Value: ExpressibleByNilLiteral {
        /// A property for an optional value whose default is `nil`
        /// (`@PersistedState(key: "nickname") var nickname: String?`). For an `Equatable` wrapped type, setting an
        /// equal value is not a change.
        ///
        /// - Parameters:
        ///   - key: The key's name.
        ///   - store: The store; ``Defaults/standard`` when omitted.
        public init(key: String, store: Defaults = .standard) {
            self.init(Defaults.Key(key, default: nil), store: store)
        }
    }

    extension PersistedState: Sendable {}
#endif
