extension Store {
    /// What a change of one key did, and whether anyone observes it.
    enum Outcome {
        case unchanged
        case changed
        case changedObserved
    }

    // MARK: The one way out of a change

    /// After a change of one key: applies the save mode, then tells the key's observers (outside the lock,
    /// whether or not the save worked). With ``finish(_:mode:)``, the only place a local change notifies.
    ///
    /// - Throws: The error of an `.immediate` save.
    @inline(__always)
    private func finish(_ outcome: Outcome, name: String, mode: Defaults.SaveMode) throws(DefaultsError) {
        switch outcome {
        case .unchanged:
            return
        case .changed:
            try applySaveMode(mode)
        case .changedObserved:
            defer { publish([MemberName(name)]) }
            try applySaveMode(mode)
        }
    }

    /// After a change of several names: applies the save mode, then tells their observers.
    ///
    /// - Throws: The error of an `.immediate` save.
    private func finish(_ names: Set<MemberName>, mode: Defaults.SaveMode) throws(DefaultsError) {
        guard !names.isEmpty else { return }
        defer { publish(names) }
        try applySaveMode(mode)
    }

    /// Saves now, schedules a save or does nothing, as `mode` says.
    ///
    /// - Throws: The error of an `.immediate` save.
    private func applySaveMode(_ mode: Defaults.SaveMode) throws(DefaultsError) {
        guard facts.isPersistent else { return }
        switch mode {
        case .immediate: try save()
        case .afterIdle(let delay): scheduleSave(after: delay)
        case .manual: break
        }
    }

    // MARK: Changes

    /// Stores `value` for `key`; `nil` of an optional removes.
    ///
    /// - Throws: The error of an `.immediate` save (the value stays stored and pending).
    func set<Value>(_ value: Value, for key: Defaults.Key<Value>, mode: Defaults.SaveMode) throws(DefaultsError) {
        if key.isNil(value) {
            if key.isSecret { markSecret([key.name]) }
            return try remove(key.name, mode: mode)
        }
        if key.hasConstraints, let violation = key.violation(of: value, stored: false, path: path) {
            throw violation
        }
        if key.isSecret { try checkSealable(key.name) }
        try finish(store(value, for: key), name: key.name, mode: mode)
    }

    /// Refuses a new value of the secret `name` that could only be stored in clear over an encrypted one: the store
    /// has no key, and what it holds for `name` is sealed.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/encryptionKeyMissing`` naming the key.
    func checkSealable(_ name: String) throws(DefaultsError) {
        let refused = state.withLock { state in
            state.cipher.key == nil && state.existingCell(named: name)?.holdsSealedValue == true
        }
        guard refused else { return }
        throw DefaultsError(
            .encryptionKeyMissing,
            "the stored value is encrypted and the store was opened without an encryption key "
                + "(Options.encryptionKey; the tool's --encryption-key): a new value would be stored in clear, and is refused",
            path: path, key: name
        )
    }

    /// The in-memory part of ``set(_:for:mode:)`` for a value that is not `nil`.
    private func store<Value>(_ value: Value, for key: Defaults.Key<Value>) -> Outcome {
        // An Equatable value equal to the cached one is no change. `==` is user code, so it runs outside the
        // lock, against the cached value of a known version; the answer counts only if that version is
        // still current when the lock is taken again.
        var unchangedAtVersion: UInt64?
        if let isEqual = key.isEqual, !key.hasLibraryEquality {
            let cached: (UInt64, Value)? = state.withLock { state in
                guard let any = state.caches[key.id] else { return nil }
                let slot = unsafeDowncast(any, to: Slot<Value>.self)
                let cell = slot.cell
                guard !cell.isShadowed, cell.stored.isPresent, slot.version == cell.version, slot.error == nil
                else { return nil }
                return (slot.version, slot.value)
            }
            if let (version, current) = cached, isEqual(current, value) { unchangedAtVersion = version }
        }
        return state.withLock { state in
            // A key that has a cache slot reaches its cell through it, without hashing the name.
            let slot = state.caches[key.id].map { unsafeDowncast($0, to: Slot<Value>.self) }
            let cell = slot?.cell ?? state.cell(named: key.name)
            if let unchangedAtVersion, cell.version == unchangedAtVersion { return .unchanged }
            // Library `==` runs no user code, so it may run under the lock: one lock for the common keys.
            if key.hasLibraryEquality, let slot, let isEqual = key.isEqual, !cell.isShadowed,
                cell.stored.isPresent, slot.version == cell.version, slot.error == nil, isEqual(slot.value, value)
            {
                return .unchanged
            }
            state.store(.pending(Pending(value)), in: cell)
            if !cell.isShadowed {
                if let slot {
                    slot.value = value
                    slot.error = nil
                    slot.version = cell.version
                } else {
                    state.caches.install(Slot(cell: cell, version: cell.version, value: value, error: nil), for: key)
                }
            }
            return state.isObserved(cell) ? .changedObserved : .changed
        }
    }

    /// Stores an already encoded fragment for `key` (the loud path, which encodes before storing).
    ///
    /// - Throws: The error of an `.immediate` save (the value stays stored and pending).
    func set<Value>(
        fragment: [UInt8], value: Value, for key: Defaults.Key<Value>, mode: Defaults.SaveMode
    ) throws(DefaultsError) {
        let outcome: Outcome = state.withLock { state in
            let cell = state.cell(named: key.name)
            if case .raw(let old) = cell.stored, old == fragment { return .unchanged }
            state.store(.raw(fragment), in: cell)
            if !cell.isShadowed {
                state.caches.install(Slot(cell: cell, version: cell.version, value: value, error: nil), for: key)
            }
            return state.isObserved(cell) ? .changedObserved : .changed
        }
        try finish(outcome, name: key.name, mode: mode)
    }

    /// Stores a value under a name, without a typed key (the string-key API); `nil` removes.
    ///
    /// - Throws: The error of an `.immediate` save.
    func set(untyped value: (any Encodable & Sendable)?, name: String, mode: Defaults.SaveMode) throws(DefaultsError) {
        guard let value else { return try remove(name, mode: mode) }
        let outcome: Outcome = state.withLock { state in
            let cell = state.cell(named: name)
            state.store(.pending(Pending(value)), in: cell)
            return state.isObserved(cell) ? .changedObserved : .changed
        }
        try finish(outcome, name: name, mode: mode)
    }

    /// Removes the stored value for `name`.
    ///
    /// - Throws: The error of an `.immediate` save.
    func remove(_ name: String, mode: Defaults.SaveMode) throws(DefaultsError) {
        let outcome: Outcome = state.withLock { state in
            guard let cell = state.existingCell(named: name), cell.stored.isPresent else { return .unchanged }
            state.store(.absent, in: cell)
            return state.isObserved(cell) ? .changedObserved : .changed
        }
        try finish(outcome, name: name, mode: mode)
    }

    /// Removes the stored values for `names`.
    ///
    /// - Throws: The error of an `.immediate` save.
    func remove(_ names: [String], mode: Defaults.SaveMode) throws(DefaultsError) {
        let removed: Set<MemberName> = state.withLock { state in
            var removed = Set<MemberName>()
            for name in names {
                guard let cell = state.existingCell(named: name), cell.stored.isPresent else { continue }
                state.store(.absent, in: cell)
                removed.insert(MemberName(name))
            }
            return removed
        }
        try finish(removed, mode: mode)
    }

    /// Removes every stored value.
    ///
    /// - Throws: The error of an `.immediate` save.
    func removeAll(mode: Defaults.SaveMode) throws(DefaultsError) {
        let removed: Set<MemberName> = state.withLock { state in
            var removed = Set<MemberName>()
            state.makeAllCells()
            for cell in state.members.cells.values where cell.stored.isPresent && !cell.isReserved {
                state.store(.absent, in: cell)
                removed.insert(MemberName(cell.name))
            }
            return removed
        }
        try finish(removed, mode: mode)
    }

    /// Applies a batch of changes at once: one save, one notification per changed name.
    ///
    /// - Throws: The error of an `.immediate` save.
    func commit(_ changes: [MemberName: StoredValue], mode: Defaults.SaveMode) throws(DefaultsError) {
        let changed: Set<MemberName> = state.withLock { state in
            var changed = Set<MemberName>()
            for (name, value) in changes {
                let cell = state.cell(named: name.string)
                if !value.isPresent && !cell.stored.isPresent { continue }
                state.store(value, in: cell)
                changed.insert(name)
            }
            return changed
        }
        try finish(changed, mode: mode)
    }

    /// Reverts every unsaved change to what the storage held, and notifies the names that changed.
    func discardUnsavedChanges() {
        // Under the save lock, so no save is between taking its changes and recording what it wrote.
        let discarded: Set<MemberName>
        do throws(DefaultsError) {
            discarded = try saveLock.withLock("discardUnsavedChanges") { discardHoldingSaveLock() }
        } catch {
            return report(error)
        }
        publish(discarded)
    }

    /// The body of ``discardUnsavedChanges()``, with the save lock held.
    private func discardHoldingSaveLock() -> Set<MemberName> {
        state.withLock { state in
            var discarded = Set<MemberName>()
            for cell in state.members.dirty where cell.isDirty {
                cell.isDirty = false
                cell.stored = cell.saved.map { .raw($0) } ?? .absent
                cell.version &+= 1
                if !cell.isReserved { discarded.insert(MemberName(cell.name)) }
            }
            state.members.pruneDirty()
            return discarded
        }
    }

    // MARK: Domains

    /// Sets the registration domain's value for each name (a later registration replaces an earlier one),
    /// and notifies the names whose registered value changed.
    func register(_ fragments: [MemberName: [UInt8]]) {
        publish(set(\.registered, to: fragments, clearingOthers: false))
    }

    /// Replaces the argument domain, and notifies the names whose argument value changed. Returns them.
    @discardableResult
    func setArguments(_ fragments: [MemberName: [UInt8]]) -> Set<MemberName> {
        let changed = set(\.argument, to: fragments, clearingOthers: true)
        publish(changed)
        return changed
    }

    /// Sets a domain's value for each name in `fragments` (and, with `clearingOthers`, removes it from every
    /// other name). Returns the names whose value in that domain changed.
    private func set(
        _ domain: ReferenceWritableKeyPath<Cell, [UInt8]?>, to fragments: [MemberName: [UInt8]], clearingOthers: Bool
    ) -> Set<MemberName> {
        state.withLock { state in
            var names = Set<MemberName>()
            if clearingOthers {
                for (name, cell) in state.members.cells where cell[keyPath: domain] != nil && fragments[name] == nil {
                    cell[keyPath: domain] = nil
                    cell.version &+= 1
                    names.insert(name)
                }
            }
            for (name, fragment) in fragments {
                let cell = state.cell(named: name.string)
                guard cell[keyPath: domain] != fragment else { continue }
                cell[keyPath: domain] = fragment
                cell.version &+= 1
                names.insert(name)
            }
            return names
        }
    }

}

extension Store {
    /// Marks `names` as secret keys' (see ``Cell/isSecret``): their history records keep no values.
    func markSecret(_ names: some Sequence<String>) {
        state.withLock { state in
            for name in names { state.cell(named: name).isSecret = true }
        }
    }

    /// Whether `name` is secret for this store: a key declared so, a name marked so (``markSecret(_:)``, the
    /// history), or one whose stored value is sealed (``SecretCipher``).
    func isSecret(_ name: String) -> Bool {
        state.withLock { $0.existingCell(named: name)?.isSecretOrSealed ?? false }
    }

    /// The stored value of `name` as it rests when it is sealed (the envelope's JSON string), else `nil`.
    func sealedValue(_ name: String) -> [UInt8]? {
        state.withLock { state in
            guard let cell = state.existingCell(named: name), case .raw(let fragment) = cell.stored,
                SecretCipher.isEnvelope(fragment)
            else { return nil }
            return fragment
        }
    }
}
