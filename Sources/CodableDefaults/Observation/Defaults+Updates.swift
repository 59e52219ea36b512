extension Defaults {
    /// The values of `key` as an asynchronous sequence: the current value first, then each new value.
    ///
    /// With `options: []` the current value is skipped: the first element is the first change. Values are
    /// delivered as ``observe(_:options:_:)`` delivers them (see <doc:ObservingChanges#Where-handlers-run>).
    /// The sequence never ends by itself. It ends, and releases its observer, when the task iterating it is
    /// cancelled or the sequence is released. Values are buffered without limit, so every change reaches a
    /// slow consumer in order. To follow several keys in one sequence, use
    /// ``updates(forAnyOf:options:)-(AnyKey...,_)``.
    ///
    /// ```swift
    /// for await volume in defaults.updates(for: .volume) {
    ///     player.volume = volume
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key to follow.
    ///   - options: `.initial` (the default) to start with the current value; `[]` to get changes only.
    /// - Returns: A sequence of the key's effective values.
    public func updates<Value>(for key: Key<Value>, options: ObservationOptions = [.initial]) -> AsyncStream<Value> {
        AsyncStream { continuation in
            let token = observe(key, options: options) { change in continuation.yield(change.newValue) }
            continuation.onTermination = { _ in token.cancel() }
        }
    }

    /// Changes to any of several keys as an asynchronous sequence: each element is the set of the names of the
    /// keys whose effective value changed.
    ///
    /// The keys may be of different value types. Each key's value is compared as ``observe(_:options:_:)``
    /// compares it (`==` for `Equatable` values, as JSON otherwise), so setting an equal value yields nothing.
    /// One change yields one element, in the order the changes were made: a ``batch(_:)`` that changes three of
    /// the keys yields one element with three names. Read the values you need when an element arrives; they may
    /// already hold a later change (whose element follows). With `.initial` (the default) the first element
    /// holds every key's name, so a loop that reads what an element names starts from the current values;
    /// with `[]` the first element is the first change.
    ///
    /// Elements are delivered as observers' calls are (see <doc:ObservingChanges#Where-handlers-run>), and
    /// buffered without limit, so a slow consumer sees every change. The sequence never ends by itself; it
    /// ends, and releases its observer, when the task iterating it is cancelled or the sequence is released.
    ///
    /// ```swift
    /// for await names in defaults.updates(forAnyOf: .volume, .theme) {
    ///     if names.contains("volume") { player.volume = defaults[.volume] }
    ///     if names.contains("theme") { applyTheme(defaults[.theme]) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keys: The keys to follow. A name given twice counts once.
    ///   - options: `.initial` (the default) to start with an element naming every key; `[]` to get changes only.
    /// - Returns: A sequence of sets of key names.
    public func updates(forAnyOf keys: AnyKey..., options: ObservationOptions = [.initial]) -> AsyncStream<Set<String>>
    {
        updates(forAnyOf: keys, options: options)
    }

    /// Changes to any of several keys as an asynchronous sequence of the sets of names that changed: the array
    /// form of ``updates(forAnyOf:options:)-(AnyKey...,_)``.
    ///
    /// - Parameters:
    ///   - keys: The keys to follow. A name given twice counts once.
    ///   - options: `.initial` (the default) to start with an element naming every key; `[]` to get changes only.
    /// - Returns: A sequence of sets of key names.
    public func updates(forAnyOf keys: [AnyKey], options: ObservationOptions = [.initial]) -> AsyncStream<Set<String>> {
        AsyncStream { continuation in
            guard !keys.isEmpty else { return }
            let observer = KeysObserver(store: store, keys: keys) { names in continuation.yield(names) }
            if options.contains(.initial) { continuation.yield(Set(observer.names)) }
            for name in observer.names { store.addObserver(observer, name: name) }
            // Also catches up with a change made between reading the values and registering.
            observer.deliver(names: [])
            let token = ObservationToken(observer)
            continuation.onTermination = { _ in token.cancel() }
        }
    }
}
