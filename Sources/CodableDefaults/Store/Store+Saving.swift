import Dispatch

extension Store {
    /// A cell's change as handed to the storage: the cell, the version written (`nil` when the cell was set
    /// again after its value was encoded: it stays unsaved), and the value written (`nil`: removed).
    private typealias Written = (cell: Cell, version: UInt64?, value: [UInt8]?)

    /// Writes unsaved changes to the storage, durably, merged into what it holds now.
    ///
    /// A value that fails to encode, or whose JSON nests deeper than the file's limit, is reverted to what the
    /// storage holds and its error thrown after the other changes are written.
    ///
    /// Once the new file is renamed into place the changes are saved; if flushing the directory then fails,
    /// this throws ``DefaultsError/Code-swift.struct/notDurable`` and every later save retries the flush (even
    /// with nothing else to write) until it succeeds.
    ///
    /// - Throws: ``DefaultsError``; on any other failure every unsaved change stays pending.
    func save() throws(DefaultsError) {
        var reverted = Set<MemberName>()
        var merged = Set<MemberName>()
        var unthrown: DefaultsError?
        // The save stands when its history record could not be written: that goes to the error handler.
        var historyFailure: DefaultsError?
        // Observers saw the values that failed to encode; tell them (outside the save lock) they are gone.
        defer {
            publish(reverted)
            // What other writers saved, taken in under the save lock, is told on the queue (as a watched
            // change is), not inside this call.
            if !merged.isEmpty {
                let told = merged
                queue.async { [weak self] in self?.publish(told) }
            }
            if let unthrown { report(unthrown) }
            if let historyFailure { report(historyFailure) }
        }
        try saveLock.lock(for: "a save")
        defer { saveLock.unlock() }
        guard let pending = takePending() else { return try durable?.confirmDurability() ?? () }
        var (encoded, encodingError) = encode(pending, reverted: &reverted)
        // The storage's view of each change is made under the lock, where a cell's fields are read.
        var (changes, members): ([Written], [MemberChange]) = state.withLock { state in
            var changes: [Written] = []
            var members: [MemberChange] = []
            for cell in state.members.dirty where cell.isDirty {
                let written: Written
                switch cell.stored {
                case .absent: written = (cell, cell.version, nil)
                case .raw(let value): written = (cell, cell.version, value)
                case .pending:
                    // Set again after its value was encoded: the encoded value is written, the cell stays unsaved.
                    guard let value = encoded[ObjectIdentifier(cell)] else { continue }
                    written = (cell, nil, value)
                }
                changes.append(written)
                // A name whose stored value is encrypted stays so, whatever declared it secret.
                members.append(MemberChange(name: cell.name, value: written.value, secret: cell.isSecretOrSealed))
            }
            return (changes, members)
        }
        // A secret refused for want of the key is reverted, as a value that does not encode is.
        if let refused = seal(&changes, &members, reverted: &reverted) { encodingError = encodingError ?? refused }
        let write = storage.write(members)
        historyFailure = write.historyFailure
        let outcome = state.withLock { state in
            if let outside = write.outside {
                state.errors.loadFailure = nil
                merged = state.takeIn(outside)
            }
            guard case .success(let written) = write.outcome else {
                // What a failed write stored all the same is saved: never written again over what other writers
                // store after it, and what a discard goes back to.
                for index in write.savedDespiteFailure {
                    let (cell, version, value) = changes[index]
                    cell.saved = value
                    if cell.version == version { cell.isDirty = false }
                }
                state.members.pruneDirty()
                return write.outcome
            }
            if let holds = write.holds { state.members.base = holds }
            for (cell, version, value) in changes {
                cell.saved = value
                guard cell.version == version else { continue }
                cell.isDirty = false
                // The value sealed: the cell holds it as stored (the same value, so its version and the decoded
                // cache stay), so later saves of other names keep its bytes.
                if let value, SecretCipher.isEnvelope(value), case .raw(let plain) = cell.stored, plain != value {
                    cell.stored = .raw(value)
                }
            }
            for member in written.stamped {
                let cell = state.cell(named: member.name)
                cell.saved = member.value
                cell.stored = member.value.map { .raw($0) } ?? .absent
                cell.version &+= 1
            }
            state.members.pruneDirty()
            return write.outcome
        }
        let written: (stamped: [MemberChange], notDurable: DefaultsError?)
        switch outcome {
        case .success(let value): written = value
        case .failure(let error): throw error
        }
        if let notDurable = written.notDurable {
            unthrown = encodingError
            throw notDurable
        }
        if let encodingError { throw encodingError }
    }

    /// Seals the values of the secret members among `members` (and their `changes`) that are not sealed yet, with
    /// the store's key (outside the state's lock). Without a key, a secret is written in clear, unless its stored
    /// value was encrypted: that change is refused (removed from both lists, its cell reverted to the saved value
    /// and added to `reverted`; a cell set again since its value was encoded keeps that newer value, unsaved),
    /// never written in clear. Returns the first refusal's error.
    private func seal(
        _ changes: inout [Written], _ members: inout [MemberChange], reverted: inout Set<MemberName>
    ) -> DefaultsError? {
        guard members.contains(where: \.secret) else { return nil }
        let cipher = self.cipher
        var refused: [(Cell, UInt64?)] = []
        var firstError: DefaultsError?
        for index in members.indices.reversed() where members[index].secret {
            guard let value = members[index].value, !SecretCipher.isEnvelope(value) else { continue }
            let cell = changes[index].cell
            let wasEncrypted = state.withLock { _ in cell.holdsSealedValue }
            guard cipher.key != nil || wasEncrypted else { continue }
            do throws(DefaultsError) {
                let sealed = try cipher.seal(value, name: members[index].name, path: path)
                members[index] = MemberChange(name: members[index].name, value: sealed, secret: true)
                changes[index].value = sealed
            } catch {
                firstError = error
                refused.append((cell, changes[index].version))
                members.remove(at: index)
                changes.remove(at: index)
            }
        }
        guard !refused.isEmpty else { return nil }
        state.withLock { state in
            for (cell, version) in refused where version != nil && cell.version == version {
                cell.stored = cell.saved.map { .raw($0) } ?? .absent
                cell.version &+= 1
                cell.isDirty = false
                reverted.insert(MemberName(cell.name))
            }
            state.members.pruneDirty()
        }
        return firstError
    }

    /// The unsaved cells' pending values to encode, each with its version; `nil` when nothing is unsaved.
    /// One critical section: a cell made dirty after it stays in the list for the next save.
    private func takePending() -> [(Cell, UInt64, any Encodable & Sendable)]? {
        state.withLock { state in
            state.members.pruneDirty()
            if state.members.dirty.isEmpty { return nil }
            return state.members.dirty.compactMap { cell in
                guard case .pending(let box) = cell.stored else { return nil }
                return (cell, cell.version, box.value)
            }
        }
    }

    /// Encodes pending values outside the lock (encoders are user code), and stores the fragments in the cells
    /// still at the encoded version. A value that fails is reverted to the saved one and its name added to
    /// `reverted`. Returns the fragments by cell, and the first encoding error.
    private func encode(
        _ pending: [(Cell, UInt64, any Encodable & Sendable)], reverted: inout Set<MemberName>
    ) -> (encoded: [ObjectIdentifier: [UInt8]], error: DefaultsError?) {
        guard !pending.isEmpty else { return ([:], nil) }
        var encoded: [ObjectIdentifier: [UInt8]] = [:]
        var firstError: DefaultsError?
        var failed: [(Cell, UInt64)] = []
        let encoder = Codec.makeEncoder()
        for (cell, version, value) in pending {
            do throws(DefaultsError) {
                encoded[ObjectIdentifier(cell)] = try Codec.encode(
                    value, key: cell.name, encoder: encoder, maxDepth: maxDepth)
            } catch {
                firstError = firstError ?? error
                failed.append((cell, version))
            }
        }
        state.withLock { state in
            for (cell, version, _) in pending where cell.version == version {
                if let fragment = encoded[ObjectIdentifier(cell)] { cell.stored = .raw(fragment) }
            }
            for (cell, version) in failed where cell.version == version {
                cell.stored = cell.saved.map { .raw($0) } ?? .absent
                cell.version &+= 1
                cell.isDirty = false
                reverted.insert(MemberName(cell.name))
            }
        }
        return (encoded, firstError)
    }
}

extension Store {
    /// Saves the unsaved changes on the store's queue, reporting a failure to the error handler: what an engine
    /// that can write again after a save failed (etcd answering again) asks for.
    func saveInBackground() {
        queue.async { [weak self] in
            guard let self else { return }
            do throws(DefaultsError) { try save() } catch { report(error) }
        }
    }
}
