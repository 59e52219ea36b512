import Dispatch

extension Store {
    // MARK: Modify

    /// One atomic read-modify-write of `names` (of which `secretNames` are secret: errors quote none of their
    /// values), among every thread and handle of the process and (for a
    /// file) every process: under the save lock and the storage's lock, the store takes in what other writers
    /// stored, gives `body` each name's stored value (compact JSON, `nil` when nothing is stored; an unsaved
    /// local value counts, as it wins every merge), and writes the values `body` leaves that differ, durably,
    /// before either lock is released. Observers of the names that changed are told once, after the locks
    /// are released; those of names another writer changed are told on the store's queue, as after a save.
    ///
    /// `body` runs on the calling thread without the state's lock: it may read the store. What needs the save
    /// lock (a save, a reload, a nested modify) is refused inside it with
    /// ``DefaultsError/Code-swift.struct/reentrantCall``.
    ///
    /// - Throws: What `body` throws, or ``DefaultsError``: a value the storage holds but cannot read (its
    ///   `decodingFailed`, before `body` runs), a stored value that does not encode, `body`
    ///   changing the array's length, or the write's failure. Then nothing is written and the store's memory is
    ///   as before (except what other writers stored, taken in); `notDurable` alone means the values are
    ///   written and taken.
    ///
    /// With `resealing`, every value of `names` that is sealed or secret is written sealed with that cipher (even
    /// unchanged), and the store takes it as its own in the same critical section that takes the written values
    /// (``reencryptSecrets(with:)``).
    ///
    /// With `opensSealed` false, the closure gets a sealed value as it rests (its envelope's JSON string) and may
    /// give it back so: what the command-line tool's `edit` needs, which shows the encrypted text.
    ///
    /// With `namesUnderLock`, the names are the ones it gives once the save lock is held (a rotation's, which must
    /// see every value saved before it), not `names`.
    func modify<Result>(
        _ names: [String], secretNames: Set<String> = [], as kind: Defaults.HistoryEntry.Kind = .save,
        resealing: SecretCipher? = nil, opensSealed: Bool = true, namesUnderLock: (() -> [String])? = nil,
        _ body: (inout [[UInt8]?]) throws -> Result
    ) throws -> Result {
        var changed = Set<MemberName>()
        var merged = Set<MemberName>()
        var historyFailure: DefaultsError?
        if !secretNames.isEmpty { markSecret(secretNames) }
        let outcome = try saveLock.whileModifying {
            modifyHoldingLock(
                namesUnderLock?() ?? names, secretNames, kind, resealing, opensSealed, body, changed: &changed,
                merged: &merged, historyFailure: &historyFailure)
        }
        if let historyFailure { report(historyFailure) }
        merged.subtract(changed)
        if !merged.isEmpty {
            let told = merged
            queue.async { [weak self] in self?.publish(told) }
        }
        publish(changed)
        return try outcome.get()
    }

    /// The body of ``modify(_:secretNames:as:resealing:opensSealed:namesUnderLock:_:)``, with the save lock held.
    private func modifyHoldingLock<Result>(
        _ names: [String], _ secretNames: Set<String>, _ kind: Defaults.HistoryEntry.Kind,
        _ resealing: SecretCipher?, _ opensSealed: Bool, _ body: (inout [[UInt8]?]) throws -> Result,
        changed: inout Set<MemberName>,
        merged: inout Set<MemberName>,
        historyFailure: inout DefaultsError?
    ) -> Swift.Result<Result, any Error> {
        if names.isEmpty {
            // Nothing to read or write: the closure runs on no values, and a rotation's key becomes the store's.
            var none: [[UInt8]?] = []
            let result = Swift.Result { try body(&none) }
            if let resealing { state.withLock { $0.setCipher(resealing) } }
            return result
        }
        var result: Swift.Result<Result, any Error>?
        var seen: [(cell: Cell, version: UInt64, old: [UInt8]?)] = []
        var new: [[UInt8]?] = []
        // What is written of `new`: a secret's value sealed (``SecretCipher``).
        var stored: [[UInt8]?] = []
        // Which of `names` are written: changed, or resealed.
        var isWritten: [Bool] = []
        var takenIn = Set<MemberName>()
        // The key of this update: a rotation changes it only under the save lock, which this update holds.
        let cipher = self.cipher
        var secret: [Bool] = []
        // Which values were sealed before the update (a secret whatever declared it), and which a rotation finds
        // sealed with its new key already (kept as they are).
        var sealedBefore: [Bool] = []
        var resealedAlready: [Bool] = []
        let write = storage.update(reading: names, as: kind) { outside in
            let current: [(Cell, UInt64, StoredValue, isUnsaved: Bool)] = state.withLock { state in
                if let outside {
                    state.errors.loadFailure = nil
                    takenIn = state.takeIn(outside)
                }
                // Read anew in each attempt: a retried transform must not add to the last attempt's.
                sealedBefore = names.map { state.cell(named: $0).holdsSealedValue }
                secret = names.map { state.cell(named: $0).isSecretOrSealed }
                return names.map { name in
                    let cell = state.cell(named: name)
                    return (cell, cell.version, cell.stored, cell.isDirty)
                }
            }
            do {
                var fragments = try zip(current, secret).map { member, secret throws(DefaultsError) in
                    let (cell, _, stored, isUnsaved) = member
                    // A value the storage holds but could not read (an etcd key's text that is not JSON) is not
                    // an absent value: the closure would write over it. It is refused, as a wrong-typed value is
                    // (unless this process removed it meanwhile: its removal, unsaved, wins over it anyway).
                    if case .absent = stored, !isUnsaved,
                        let unreadable = remote?.unreadableValue(named: cell.name, secret: secret)
                    {
                        throw unreadable
                    }
                    return try fragment(of: stored, name: cell.name)
                }
                // The closure sees a secret's value, not its envelope; a value that does not open fails the call
                // before it runs, and nothing is written. A rotation keeps what its new key sealed already (a store
                // some of whose values a rotation cut short, or a writer with the new key, sealed so).
                resealedAlready = names.map { _ in false }
                let asStored = fragments
                for index in fragments.indices {
                    guard let value = fragments[index], SecretCipher.isEnvelope(value) else { continue }
                    secret[index] = true
                    if let resealing, let newID = resealing.key?.id, SecretCipher.keyID(ofEnvelope: value) == newID {
                        // Kept only if it opens, under its name, with the new key.
                        _ = try resealing.open(value, name: names[index], path: path)
                        resealedAlready[index] = true
                        continue
                    }
                    if !opensSealed { continue }
                    fragments[index] = try cipher.open(value, name: names[index], path: path)
                }
                let old = fragments
                result = .success(try body(&fragments))
                guard fragments.count == names.count else {
                    throw DefaultsError(
                        .invalidArgument,
                        "the modify closure left \(fragments.count) values for \(names.count) keys; nothing was written",
                        path: path)
                }
                seen = zip(current, old).map { (cell: $0.0, version: $0.1, old: $1) }
                new = fragments
                stored = fragments
                isWritten = names.indices.map {
                    new[$0] != old[$0] || (resealing != nil && secret[$0] && !resealedAlready[$0])
                }
                for index in names.indices where isWritten[index] {
                    guard let value = new[index] else { continue }
                    let sealing = resealing ?? cipher
                    if SecretCipher.isEnvelope(value) {
                        // An envelope the closure gave (a backup's text): kept as it is when it is the stored one,
                        // else only if it opens under this name (when the key is at hand to tell).
                        if value != asStored[index], sealing.key != nil {
                            _ = try sealing.open(value, name: names[index], path: path)
                        }
                        secret[index] = true
                        continue
                    }
                    // A secret is sealed with the key; without one, in clear unless the value was sealed (refused).
                    guard secret[index], sealing.key != nil || sealedBefore[index] else { continue }
                    stored[index] = try sealing.seal(value, name: names[index], path: path)
                }
            } catch {
                result = .failure(error)
                return nil
            }
            let changes = names.indices.compactMap { index in
                isWritten[index] ? MemberChange(name: names[index], value: stored[index], secret: secret[index]) : nil
            }
            return changes.isEmpty ? nil : changes
        }
        merged = takenIn
        historyFailure = write.historyFailure
        if let outside = write.outside { merged.formUnion(state.withLock { $0.takeIn(outside) }) }
        let written: (stamped: [MemberChange], notDurable: DefaultsError?)
        switch write.outcome {
        case .failure(let error): return .failure(error)
        case .success(let value): written = value
        }
        guard let result, case .success = result, !seen.isEmpty else { return result ?? .failure(noResult()) }
        state.withLock { state in
            if let holds = write.holds { state.members.base = holds }
            for (index, (cell, version, old)) in seen.enumerated() where isWritten[index] {
                cell.saved = stored[index]
                // A set made meanwhile (plain sets do not wait for the save lock) comes after this update.
                guard cell.version == version else { continue }
                if new[index] == old {
                    // Resealed, the same value: no observer is told (the new key's ``StoreState/setCipher(_:)`` makes the
                    // decoded cache open it once again).
                    if let sealed = stored[index], !cell.isDirty { cell.stored = .raw(sealed) }
                    continue
                }
                cell.stored = stored[index].map { .raw($0) } ?? .absent
                cell.version &+= 1
                cell.isDirty = false
                changed.insert(MemberName(cell.name))
            }
            for member in written.stamped {
                let cell = state.cell(named: member.name)
                cell.saved = member.value
                cell.stored = member.value.map { .raw($0) } ?? .absent
                cell.version &+= 1
            }
            // The new key is the store's in the critical section that gives the store its values: a read takes a
            // value with the key it was sealed with (``StoreState/setCipher(_:)``).
            if let resealing { state.setCipher(resealing) }
        }
        if let notDurable = written.notDurable { return .failure(notDurable) }
        return result
    }

    /// A stored value as compact JSON: a pending value is encoded (user code: call without the lock).
    func fragment(of stored: StoredValue, name: String) throws(DefaultsError) -> [UInt8]? {
        switch stored {
        case .absent: return nil
        case .raw(let fragment): return fragment
        case .pending(let box):
            return try Codec.encode(box.value, key: name, encoder: Codec.makeEncoder(), maxDepth: maxDepth)
        }
    }

    /// The error for a storage that neither wrote nor called the transform (it should not happen).
    private func noResult() -> DefaultsError {
        DefaultsError(.writeFailed, "the storage did not run the update; nothing was written", path: path)
    }

    /// What a read of `name` gives when nothing is stored: its first fallback layer's value (and whether that is
    /// secret), else its registered value; `nil` when neither has one.
    func valueBelowStored(_ name: String) -> (bytes: [UInt8], isSecret: Bool)? {
        state.withLock { state in
            guard let cell = state.existingCell(named: name) else { return nil }
            if let fallback = cell.fallback { return (fallback.bytes, fallback.isSecret) }
            return cell.registered.map { ($0, false) }
        }
    }
}
