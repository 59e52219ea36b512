extension Store {
    /// The value for `key`: cached, decoded, or the default.
    @inline(__always)
    func value<Value>(for key: Defaults.Key<Value>) -> Value {
        // The closure returns a `Value` (the default on a miss), not a `Value?`: unspecialized (called through
        // the public generic subscript), an optional of a generic type costs a metadata lookup on every read.
        trackRead(of: key.name)
        var isMiss = false
        let cached = state.withLock { state in
            if let any = state.caches[key.id] {
                let slot = unsafeDowncast(any, to: Slot<Value>.self)
                if slot.version == slot.cell.version { return slot.value }
            }
            isMiss = true
            return key.defaultValue
        }
        return isMiss ? resolve(key).value : cached
    }

    /// The value for `key`, or the error that made it fall back to the default.
    func checkedValue<Value>(for key: Defaults.Key<Value>) throws(DefaultsError) -> Value {
        trackRead(of: key.name)
        let (value, error) = resolve(key)
        if let error { throw error }
        return value
    }

    /// Finds the value for `key` through the cache, decoding the stored fragment (outside the lock) when the
    /// cache is stale. Reports a decoding error once per stored version.
    private func resolve<Value>(_ key: Defaults.Key<Value>) -> (value: Value, error: DefaultsError?) {
        while true {
            let lookup: CacheLookup<Value> = state.withLock { state in
                let cell = state.cell(named: key.name)
                if let any = state.caches[key.id] {
                    let slot = unsafeDowncast(any, to: Slot<Value>.self)
                    if slot.version == cell.version,
                        slot.error == nil || slot.isSecret || !(key.isSecret || cell.isSecret)
                    {
                        return .cached(slot.value, slot.error)
                    }
                }
                // A name marked secret (by the history, or a tool) is secret whatever the key says.
                return .decode(
                    cell, cell.version, cell.effective, cell.origin, secret: key.isSecret || cell.isSecret,
                    cipher: state.cipher)
            }
            let cell: Cell
            let version: UInt64
            let source: StoredValue
            let origin: Origin
            let secret: Bool
            let cipher: SecretCipher
            switch lookup {
            case .cached(let value, let error): return (value, error)
            case .decode(let found, let current, let effective, let from, let isSecret, let key):
                (cell, version, source, origin, secret, cipher) = (found, current, effective, from, isSecret, key)
            }
            var value = key.defaultValue
            var error: DefaultsError?
            do throws(DefaultsError) {
                if let decoded = try decode(
                    source, as: Value.self, name: key.name, origin: origin, secret: secret, cipher: cipher)
                {
                    // A value another writer stored (or a layer holds) that breaks a rule of the key reads as the
                    // default, as one that does not decode does.
                    if key.hasConstraints, let violation = violation(of: decoded, key: key, origin: origin) {
                        throw violation
                    }
                    value = decoded
                }
            } catch let failure {
                error = failure
            }
            // Nothing stored may be a stored value the engine could not take (text that is not JSON): it fails as a
            // value that does not decode. Asked only when the decoded value came from below the stored domain.
            if error == nil, origin.isBelowStored,
                let unreadable = remote?.unreadableValue(named: key.name, secret: secret)
            {
                (value, error) = (key.defaultValue, unreadable)
            }
            let installed: Bool = state.withLock { state in
                // Changed while decoding: decode the newer value.
                guard cell.version == version else { return false }
                state.caches.install(
                    Slot(cell: cell, version: version, value: value, error: error, isSecret: secret), for: key)
                return true
            }
            guard installed else { continue }
            if let error { report(error) }
            return (value, error)
        }
    }

    /// A stored value as `type`: the pending value itself when it has that type, else through JSON; `nil`
    /// for `.absent`. This is where a stored value is decoded. Runs user decoding code: call without the lock.
    /// A failure names where the value came from (`origin`: a layer's variable or file), and leaves out the
    /// decoder's words for a secret value.
    private func decode<Value: Decodable>(
        _ source: StoredValue, as type: Value.Type, name: String, origin: Origin = .stored, secret: Bool = false,
        cipher: SecretCipher
    ) throws(DefaultsError) -> Value? {
        switch source {
        case .absent:
            return nil
        case .pending(let box):
            if let typed = box.value as? Value { return typed }
            let fragment = try Codec.encode(box.value, key: name, encoder: Codec.makeEncoder(), maxDepth: maxDepth)
            return try Codec.decode(type, from: fragment, key: name, path: path, secret: secret)
        case .raw(let stored):
            var fragment = stored
            var secret = secret
            if SecretCipher.isEnvelope(stored) {
                // Opened once per stored version: the decoded value is cached.
                fragment = try cipher.open(stored, name: name, path: path)
                secret = true
            }
            guard case .layer(let layer) = origin, let (what, file) = place(of: layer) else {
                return try Codec.decode(type, from: fragment, key: name, path: path, secret: secret)
            }
            return try Codec.decode(
                type, from: fragment, key: name, path: file, what: what, secret: secret || layer.isSecret)
        }
    }

    /// Where a layer's value comes from, as errors about it say it: the words for the value and the file (`nil`:
    /// no file); `nil` for a layer whose values are the store's own.
    private func place(of layer: LayerValue) -> (what: String, path: String?)? {
        switch layer.source {
        case .environment(let variable): ("the value of the environment variable \(variable)", nil)
        case .file(let file): ("the value in the layer file", file)
        case .values(let label): ("the value of the layer \(KeyDescription.quoted(label))", nil)
        default: nil
        }
    }

    /// The first rule of `key` a value read from `origin` breaks, as the error naming where that value came
    /// from (a layer's variable or file, not the store file); `nil` when it breaks none.
    private func violation<Value>(of value: Value, key: Defaults.Key<Value>, origin: Origin) -> DefaultsError? {
        if case .layer(let layer) = origin, let (what, file) = place(of: layer) {
            return key.violation(of: value, stored: true, path: file, source: what)
        }
        return key.violation(of: value, stored: true, path: path)
    }

    /// What a read of `key` would give if `stored` were its stored value (a batch's change), outside any
    /// cache: the lookup order of every read (argument domain, overrides, stored, fallbacks, registered, default). A failure is
    /// reported and gives the key's default.
    func decodeDetached<Value>(_ stored: StoredValue, as key: Defaults.Key<Value>) -> Value {
        let (source, origin, secret, cipher): (StoredValue, Origin, Bool, SecretCipher) = state.withLock { state in
            let cell = state.existingCell(named: key.name)
            let secret = key.isSecret || cell?.isSecret == true
            if let argument = cell?.argument { return (.raw(argument), .argument, secret, state.cipher) }
            if let overridden = cell?.overridden {
                return (.raw(overridden.bytes), .layer(overridden), secret, state.cipher)
            }
            if stored.isPresent { return (stored, .stored, secret, state.cipher) }
            if let fallback = cell?.fallback { return (.raw(fallback.bytes), .layer(fallback), secret, state.cipher) }
            return (cell?.registered.map { .raw($0) } ?? .absent, .registered, secret, state.cipher)
        }
        do throws(DefaultsError) {
            guard
                let decoded = try decode(
                    source, as: Value.self, name: key.name, origin: origin, secret: secret, cipher: cipher)
            else { return key.defaultValue }
            if key.hasConstraints, let violation = violation(of: decoded, key: key, origin: origin) {
                throw violation
            }
            return decoded
        } catch {
            report(error)
            return key.defaultValue
        }
    }

    /// The effective value of `name` decoded as `type`, without a cache; `nil` when no domain has a value or
    /// it does not decode (the error is reported).
    func effectiveValue<Value: Decodable>(_ type: Value.Type, name: String) -> Value? {
        trackRead(of: name)
        let (source, origin, cipher) = state.withLock { state -> (StoredValue, Origin, SecretCipher) in
            guard let cell = state.existingCell(named: name) else {
                return (.absent, .none, state.cipher)
            }
            return (cell.effective, cell.origin, state.cipher)
        }
        do {
            return try decode(source, as: type, name: name, origin: origin, cipher: cipher)
        } catch {
            report(error)
            return nil
        }
    }

    /// Whether any domain (argument, stored, registered) has a value for `name`.
    func hasEffectiveValue(_ name: String) -> Bool {
        state.withLock { $0.existingCell(named: name)?.effective.isPresent ?? false }
    }

    /// Whether a value is stored under `name` (set and not yet saved counts).
    func hasStoredValue(_ name: String) -> Bool {
        trackRead(of: name)
        return state.withLock { $0.existingCell(named: name).map { $0.stored.isPresent && !$0.isReserved } ?? false }
    }

    /// The names with a stored value, sorted as in the file. Makes no cell.
    var keys: [String] {
        trackMembershipRead()
        let names: [String] = state.withLock { state in
            var names: [String] = []
            state.forEachStoredName { name, cell in
                if !(cell?.isReserved ?? (name == Defaults.schemaVersionKey)) { names.append(name) }
            }
            return names
        }
        return names.sorted(by: precedesInFile)
    }

    /// The names that have a value in any domain (argument, layers, stored, registered); the environment names
    /// none of its own. Makes no cell.
    var effectiveNames: [String] {
        trackMembershipRead()
        let names: [String] = state.withLock { state in
            var names = state.members.cells.values.filter { $0.effective.isPresent && !$0.isReserved }.map(\.name)
            state.forEachStoredName { name, cell in
                if cell == nil && name != Defaults.schemaVersionKey { names.append(name) }
            }
            guard !state.layers.stack.isEmpty else { return names }
            var listed = Set<MemberName>()
            state.layers.stack.forEachListedName { name in
                let key = MemberName(name)
                if state.members.cells[key] == nil && !state.members.base.contains(name)
                    && name != Defaults.schemaVersionKey
                {
                    listed.insert(key)
                }
            }
            names.append(contentsOf: listed.map(\.string))
            return names
        }
        return names.sorted(by: precedesInFile)
    }

    /// The key through which the untyped API reads `name`, one per name so its cache is reused.
    func untypedKey(_ name: String) -> Defaults.Key<JSONValue?> {
        state.withLock { state in
            let cell = state.cell(named: name)
            if let key = cell.untypedKey { return key }
            let key = Defaults.Key<JSONValue?>(name)
            cell.untypedKey = key
            return key
        }
    }
}

/// What a read found under the lock: the cached value, or what to decode outside it.
private enum CacheLookup<Value> {
    case cached(Value, DefaultsError?)
    case decode(Cell, UInt64, StoredValue, Origin, secret: Bool, cipher: SecretCipher)
}
