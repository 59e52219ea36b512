extension Defaults {
    /// Changes the value of `key` atomically: `body` gets the current value and changes it in place, and what
    /// it leaves is written before any other `modify` of the same store can read the key.
    ///
    /// ```swift
    /// try defaults.modify(.launches) { $0 += 1 }
    /// ```
    ///
    /// Atomic among every thread and every `Defaults` of the process on the same file, and among processes:
    /// under the store's lock and the file's lock file, the store re-reads the file if another process changed
    /// it, calls `body` with the newest value, and writes the result durably (it survives a power loss) before
    /// the locks are released. A plain set (the subscript) does not wait for these locks: only `modify` calls
    /// are atomic with each other. The write happens now, whatever ``saveMode`` says; other unsaved changes
    /// stay pending. When `body` leaves the value as it was, nothing is written.
    ///
    /// `body` gets the stored value (an unsaved change made in this process counts), else the first fallback
    /// layer's value (see ``Layer``), else the registered value, else the key's default. The argument domain
    /// (`-key value`) and override layers are not applied: `body` works on the stored value, and while they have a
    /// value reads still return theirs. Setting
    /// `nil` for an optional key removes the stored value.
    ///
    /// `body` runs once, on the calling thread, and may read this store. What needs the store's lock is
    /// refused inside it with ``DefaultsError/Code-swift.struct/reentrantCall`` (and nothing of it is done): a
    /// nested `modify` of the same store, `save()`, the save of an `.immediate` set (the set itself is
    /// kept, and saved later), ``reload()-4e93u``, ``discardUnsavedChanges()``. Keep `body` short: other writers of the
    /// file wait for it, up to their ``Options/lockTimeout``. It must not wait for another thread that uses
    /// this store's lock.
    ///
    /// Observers of `key` are told once, after the write and the locks are released; observers of keys
    /// another process changed meanwhile are told on the store's queue.
    ///
    /// - Parameters:
    ///   - key: The key to change.
    ///   - body: Changes the value in place; what it returns, `modify` returns.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a ``DefaultsError``: `decodingFailed` when the stored value does not
    ///   decode as `Value`, `encodingFailed` when the new one does not encode, `reservedKey` or `keyTooLong`
    ///   for the key, or the write's error (`writeFailed`, `lockTimeout`, a file that no longer parses). In
    ///   every case nothing is written and the store's memory is unchanged. One exception: `notDurable`
    ///   means the value is written and taken, but its durability could not be confirmed (see `save()`).
    @discardableResult
    public func modify<Value, Result>(_ key: Key<Value>, _ body: (inout Value) throws -> Result) throws -> Result {
        if let refusal = refusalIfAny(key.name) { throw refusal }
        let store = self.store
        return try store.modify([key.name], secretNames: key.isSecret ? [key.name] : []) { fragments in
            let encoder = Codec.makeEncoder()
            func encode(_ value: Value) throws(DefaultsError) -> [UInt8]? {
                key.isNil(value)
                    ? nil : try Codec.encode(value, key: key.name, encoder: encoder, maxDepth: store.maxDepth)
            }
            let stored = fragments[0]
            let below = stored == nil ? store.valueBelowStored(key.name) : nil
            var value = key.defaultValue
            if let fragment = stored ?? below?.bytes {
                value = try Codec.decode(
                    Value.self, from: fragment, key: key.name, path: store.path,
                    secret: key.isSecret || below?.isSecret == true)
            }
            // With nothing stored, a closure that leaves the fallback, the registered value or the default stores
            // nothing.
            let start = try stored == nil ? (below?.bytes ?? encode(value)) : nil
            let result = try body(&value)
            if key.hasConstraints, !key.isNil(value),
                let violation = key.violation(of: value, stored: false, path: store.path)
            {
                throw violation
            }
            let new = try encode(value)
            fragments[0] = stored == nil && new == start ? nil : new
            return result
        }
    }

    /// Changes the stored value of a string key atomically, untyped; see ``modify(_:_:)-78wz9`` for the guarantees.
    ///
    /// `body` gets the stored value, or `nil` when nothing is stored (the registered value is not given);
    /// leaving `nil` removes the stored value.
    ///
    /// ```swift
    /// try defaults.modify(forKey: "recent") { value in
    ///     guard case .array(let items)? = value else { return value = ["a.txt"] }
    ///     value = .array(items + ["a.txt"])
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name.
    ///   - body: Changes the stored value in place; what it returns, `modify` returns.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a ``DefaultsError`` as ``modify(_:_:)-78wz9`` throws; nothing is written then.
    @discardableResult
    public func modify<Result>(forKey name: String, _ body: (inout JSONValue?) throws -> Result) throws -> Result {
        try modify(forKeys: [name]) { values in try body(&values[0]) }
    }

    /// Changes the stored values of several string keys in one atomic update; see ``modify(_:_:)-78wz9`` for the
    /// guarantees. One write holds every change (a rename: remove one key, set another), and observers of
    /// each changed key are told once.
    ///
    /// `body` gets one value per name, in the order of `names` (`nil`: nothing stored), and must leave as
    /// many; `nil` removes a stored value. Names are compared byte for byte, as the file compares them.
    ///
    /// ```swift
    /// try defaults.modify(forKeys: ["volume", "soundVolume"]) { values in
    ///     if let volume = values[0] { values = [nil, volume] }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - names: The keys' names, each once.
    ///   - body: Changes the values in place; what it returns, `modify` returns.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a ``DefaultsError`` as ``modify(_:_:)-78wz9`` throws, and `invalidArgument`
    ///   when a name is given twice or `body` changes the number of values; nothing is written then.
    @discardableResult
    public func modify<Result>(
        forKeys names: [String], _ body: (inout [JSONValue?]) throws -> Result
    ) throws -> Result {
        try modify(forKeys: names, secretNames: [], body)
    }

    /// ``modify(forKeys:_:)-l5vt``, with the names whose values are secret (their history records keep no value),
    /// for a caller that knows them before their typed keys were used with the store.
    ///
    /// With `opensSealed` false, `body` gets an encrypted value as its encrypted text (a string), which it may give
    /// back as it is (see ``Options/encryptionKey``): for a caller that shows values without their key.
    func modify<Result>(
        forKeys names: [String], secretNames: Set<String>, opensSealed: Bool = true,
        _ body: (inout [JSONValue?]) throws -> Result
    ) throws -> Result {
        var unique = Set<MemberName>()
        for name in names {
            if let refusal = refusalIfAny(name) { throw refusal }
            guard unique.insert(MemberName(name)).inserted else {
                throw DefaultsError(
                    .invalidArgument, "the key is given twice to modify(forKeys:); nothing was written", key: name)
            }
        }
        let store = self.store
        return try store.modify(names, secretNames: secretNames, opensSealed: opensSealed) { fragments in
            var values: [JSONValue?] = []
            for (name, fragment) in zip(names, fragments) {
                values.append(
                    try fragment.map { try Codec.decode(JSONValue.self, from: $0, key: name, path: store.path) })
            }
            let result = try body(&values)
            guard values.count == names.count else {
                throw DefaultsError(
                    .invalidArgument,
                    "the modify closure left \(values.count) values for \(names.count) keys; nothing was written",
                    path: store.path)
            }
            let encoder = Codec.makeEncoder()
            for index in names.indices {
                guard let value = values[index] else {
                    fragments[index] = nil
                    continue
                }
                fragments[index] = try Codec.encode(
                    value, key: names[index], encoder: encoder, maxDepth: store.maxDepth)
            }
            return result
        }
    }
}

extension Persisted {
    /// Changes the property's value atomically: `$launches.modify { $0 += 1 }`. The same as
    /// ``Defaults/modify(_:_:)-78wz9`` on the property's store and key; see there for the guarantees and errors.
    ///
    /// - Parameter body: Changes the value in place; what it returns, `modify` returns.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a ``DefaultsError``; nothing is written then.
    @discardableResult
    public func modify<Result>(_ body: (inout Value) throws -> Result) throws -> Result {
        try store.modify(key, body)
    }
}
