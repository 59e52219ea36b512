extension Defaults {
    /// Changes gathered by ``Defaults/batch(_:)``, applied together when the batch's closure returns.
    ///
    /// Reads through a batch see the batch's own changes. A batch is used only inside its closure, on the
    /// thread running it; it is not `Sendable`.
    public final class Batch {
        private let defaults: Defaults
        /// By name, byte-exact (see ``MemberName``).
        private(set) var changes: [MemberName: StoredValue] = [:]
        /// The names of the secret keys changed (their history keeps no values).
        private(set) var secretNames: Set<String> = []
        /// The sets refused because their value breaks a rule of the key, reported when the batch is applied.
        private(set) var refused: [DefaultsError] = []

        init(defaults: Defaults) {
            self.defaults = defaults
        }

        /// The value of `key` as this batch leaves it; setting records a change (`nil` of an optional
        /// removes the stored value).
        public subscript<Value>(key: Key<Value>) -> Value {
            get {
                guard let change = changes[MemberName(key.name)] else { return defaults[key] }
                return defaults.store.decodeDetached(change, as: key)
            }
            set {
                if key.hasConstraints, !key.isNil(newValue),
                    let violation = key.violation(of: newValue, stored: false, path: defaults.store.path)
                {
                    refused.append(violation)
                    return
                }
                if key.isSecret { secretNames.insert(key.name) }
                changes[MemberName(key.name)] = key.isNil(newValue) ? .absent : .pending(Pending(newValue))
            }
        }

        /// Removes the stored values of `keys` when the batch is applied.
        ///
        /// - Parameter keys: The keys to reset.
        public func reset(_ keys: AnyKey...) {
            for key in keys {
                if key.isSecret { secretNames.insert(key.name) }
                changes[MemberName(key.name)] = .absent
            }
        }
    }

    /// Makes several changes as one: one save, and one notification per changed key, after `body` returns.
    ///
    /// ```swift
    /// defaults.batch {
    ///     $0[.volume] = 0.2
    ///     $0[.profile].name = "B"
    /// }
    /// ```
    ///
    /// Observers of a key see one change, from the value before the batch to the value after it; keys that
    /// end where they started notify nothing. ``observeAll(_:)`` observers get, once, the names of every key
    /// the batch set or removed. Other threads do not see the batch's changes until it is
    /// applied, and then see them all at once.
    ///
    /// - Parameter body: Makes the changes through the ``Batch`` it is given.
    /// - Throws: What `body` throws; then none of its changes are applied, nothing is written and no
    ///   observer is called.
    public func batch<E: Error>(_ body: (Batch) throws(E) -> Void) throws(E) {
        let batch = Batch(defaults: self)
        try body(batch)
        for refusal in batch.refused { store.report(refusal) }
        var changes = batch.changes
        for name in changes.keys {
            guard let refusal = refusalIfAny(name.string) else { continue }
            changes[name] = nil
            store.report(refusal)
        }
        guard !changes.isEmpty else { return }
        if !batch.secretNames.isEmpty { store.markSecret(batch.secretNames) }
        do { try store.commit(changes, mode: saveMode) } catch { store.report(error) }
    }
}
