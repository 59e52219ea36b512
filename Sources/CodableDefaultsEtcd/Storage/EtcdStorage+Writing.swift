import CodableDefaults
import Dispatch
import Foundation

/// Writes: where an etcd transaction is built. A save's changes become transactions of puts and deletes
/// (``write(_:)``); a modify reads the names with their revisions and writes them in a transaction that compares
/// those revisions (``update(reading:as:_:)``). Each transaction also puts the history record of its changes
/// (see `EtcdStorage+History.swift`), so that a change and its record are one.
extension EtcdStorage {
    package func write(_ changes: [MemberChange]) -> StorageWrite {
        writing.withLock { _ in writeHoldingLock(changes) }
    }

    /// ``write(_:)``, holding ``writing``.
    private func writeHoldingLock(_ changes: [MemberChange]) -> StorageWrite {
        // Changes kept while etcd did not answer go first, so that a newer change of the same key follows them.
        if localCopy != nil, state.withLock({ !$0.offline.isEmpty }), sendOffline() == .noEndpoint {
            return keepOffline(changes, saved: [])
        }
        var saved: [Int] = []
        var refusals: [DefaultsError] = []
        var start = changes.startIndex
        while start < changes.endIndex {
            let end = transactionEnd(of: changes, from: start)
            let batch = Array(start..<end)
            start = end
            switch commit(batch.map { changes[$0] }, compares: []) {
            case .success(true): saved += batch
            case .success(false): return failed(notApplied(), saved: saved)
            case .failure(let failure) where failure.noEndpoint && localCopy != nil:
                // The batch was sent, and no answer came: etcd may have applied it.
                return keepOffline(changes, saved: saved, sentWithoutAnswer: Set(batch))
            case .failure(let failure) where !failure.refusedByEtcd: return failed(failure.error, saved: saved)
            case .failure(let failure) where batch.count == 1: refusals.append(failure.error)
            case .failure:
                // etcd refused the transaction (a key it cannot take, a value over its limit): one change at a
                // time, so that the others are saved and only what etcd refuses stays unsaved.
                for index in batch {
                    switch commit([changes[index]], compares: []) {
                    case .success(true): saved.append(index)
                    case .success(false): return failed(notApplied(), saved: saved)
                    case .failure(let failure) where !failure.refusedByEtcd:
                        return failed(failure.error, saved: saved)
                    case .failure(let failure): refusals.append(failure.error)
                    }
                }
            }
        }
        if localCopy != nil && !saved.isEmpty { updateLocalCopy() }
        switch refusals.count {
        case 0: return StorageWrite(outside: nil, outcome: .success(([], nil)))
        case 1: return failed(refusals[0], saved: saved)
        default:
            let listed = refusals.prefix(3).map(\.message).joined(separator: "; ")
            let more = refusals.count > 3 ? "; and \(refusals.count - 3) more" : ""
            return failed(
                DefaultsError(
                    .writeFailed,
                    "etcd refused \(refusals.count) changes, which stay unsaved (the others are saved): "
                        + listed + more, path: location), saved: saved)
        }
    }

    /// Where the transaction of `changes` that begins at `start` ends: as many changes as one transaction takes with
    /// its history record (``maximumOperationsPerTransaction``, ``maximumBytesPerTransaction``), and at least one.
    func transactionEnd(of changes: [MemberChange], from start: Int) -> Int {
        let recording = historyLimit.isEnabled
        let operations = max(1, maximumOperationsPerTransaction - (recording ? 1 : 0))
        func size(_ change: MemberChange) -> Int {
            prefix.count + change.name.utf8.count + (change.value?.count ?? 0)
                + (recording ? Self.recordBytes(of: change) : 0)
        }
        var end = start + 1
        var bytes = (recording ? Self.recordOverhead + historyKey.count : 0) + size(changes[start])
        while end < changes.endIndex && end - start < operations {
            bytes += size(changes[end])
            if bytes > maximumBytesPerTransaction { break }
            end += 1
        }
        return end
    }

    /// The failure of a write, after the changes at the indexes `saved` were written all the same.
    func failed(_ error: DefaultsError, saved: [Int]) -> StorageWrite {
        var write = StorageWrite(outside: nil, outcome: .failure(error))
        write.savedDespiteFailure = saved
        return write
    }

    /// The error of a transaction without conditions that etcd says it did not apply (no etcd says that).
    func notApplied() -> DefaultsError {
        DefaultsError(
            .writeFailed,
            "etcd answered that it did not apply a transaction without conditions; the changes stay unsaved",
            path: location)
    }

    package func update(
        reading names: [String], as kind: Defaults.HistoryEntry.Kind, _ transform: (StorageContent?) -> [MemberChange]?
    ) -> StorageWrite {
        writing.withLock { _ in updateHoldingLock(reading: names, as: kind, transform) }
    }

    /// ``update(reading:as:_:)``, holding ``writing``.
    private func updateHoldingLock(
        reading names: [String], as kind: Defaults.HistoryEntry.Kind, _ transform: (StorageContent?) -> [MemberChange]?
    ) -> StorageWrite {
        guard names.count <= facts.maximumKeysPerUpdate else {
            return StorageWrite(
                outside: nil,
                outcome: .failure(
                    DefaultsError(
                        .invalidArgument,
                        "an update on etcd reads and changes at most \(facts.maximumKeysPerUpdate) keys (one "
                            + "transaction); it was given \(names.count), and nothing was written", path: location)))
        }
        // Changes kept while etcd did not answer go first (when it does not answer now, the reads below fail).
        if localCopy != nil, state.withLock({ !$0.offline.isEmpty }) { _ = sendOffline() }
        while true {
            let current: [(name: String, keyValue: EtcdKeyValue?, revision: Int64)]
            do {
                current = try names.map { name in
                    let read = try read(name)
                    return (name, read.keyValue, read.revision)
                }
            } catch {
                return StorageWrite(
                    outside: nil, outcome: .failure(failure(.readFailed, "the keys to modify cannot be read", error)))
            }
            let reported: [MemberChange] = state.withLock { state in
                current.map { name, keyValue, revision in
                    let bytes = Array(name.utf8)
                    // A change the watch saw after this read is newer: the store is told of it instead (the
                    // transaction, which compares the revision read, then fails and this reads again).
                    if let seen = state.pending.removeValue(forKey: bytes), seen.revision > revision {
                        return MemberChange(name, seen.value)
                    }
                    guard let keyValue else {
                        state.unreadable[bytes] = nil
                        return MemberChange(name, nil)
                    }
                    state.revisions[bytes] = max(state.revisions[bytes] ?? 0, keyValue.modRevision)
                    switch StorageValue.compact(keyValue.value, maxDepth: maxDepth) {
                    case .success(let value):
                        state.unreadable[bytes] = nil
                        return MemberChange(name, value)
                    case .failure(let error):
                        state.unreadable[bytes] = error
                        return MemberChange(name, nil)
                    }
                }
            }
            guard let changes = transform(.changes(reported)) else {
                return StorageWrite(outside: nil, outcome: .success(([], nil)))
            }
            let compares = current.map { name, keyValue, _ in
                EtcdCompare(key: prefix + Array(name.utf8), modRevision: keyValue?.modRevision ?? 0)
            }
            switch commit(changes, compares: compares, as: kind) {
            case .success(true):
                if localCopy != nil { updateLocalCopy() }
                return StorageWrite(outside: nil, outcome: .success(([], nil)))
            case .success(false): continue  // Another writer changed a name first: again, with its value.
            case .failure(let failure): return StorageWrite(outside: nil, outcome: .failure(failure.error))
            }
        }
    }

    /// Why a transaction failed, and whether etcd refused it (an error answer that is etcd's own: it wrote
    /// nothing). Any other failure (no endpoint answered, an answer that is not etcd's) may or may not have been
    /// applied: nothing is sent again that could write over a newer value.
    struct CommitFailure: Error {
        var error: DefaultsError
        var refusedByEtcd: Bool
        /// Whether no endpoint answered (nothing reached etcd, or the answer was lost on the way).
        var noEndpoint = false
    }

    /// Sends one transaction of `changes` under `compares`, with the history record of the changes as `kind`
    /// (unless the history is off); returns whether it was applied.
    func commit(
        _ changes: [MemberChange], compares: [EtcdCompare], as kind: Defaults.HistoryEntry.Kind = .save
    ) -> Result<Bool, CommitFailure> {
        var operations: [EtcdOperation] = changes.map { change in
            let key = prefix + Array(change.name.utf8)
            return change.value.map { .put(key: key, value: $0) } ?? .delete(key: key)
        }
        if let record = record(of: changes, as: kind) { operations.append(.put(key: historyKey, value: record)) }
        let result: EtcdTransactionResult
        do {
            result = try client.transaction(compares: compares, operations: operations)
        } catch {
            let etcdError = error as? EtcdError
            if etcdError?.isEndpointDown == true { retryWhenReachable() }
            let refusedByEtcd = etcdError.map { $0.code == .server && !$0.isEndpointDown } ?? false
            let names = changes.prefix(3).map { "\"\($0.name)\"" }.joined(separator: ", ")
            let more = changes.count > 3 ? " and \(changes.count - 3) more" : ""
            // The history record goes with every change: a user etcd lets write some keys only may not write it.
            let record =
                operations.count > changes.count && etcdError?.message.contains("permission denied") == true
                ? " (the transaction also puts the history record, the key \"\(String(decoding: prefix, as: UTF8.self))"
                    + "\\xFFhistory\": a user who may not write it needs the history off, Options(history: .off))"
                : ""
            return .failure(
                CommitFailure(
                    error: failure(
                        .writeFailed, "\(names)\(more) cannot be written; they stay unsaved\(record)", error),
                    refusedByEtcd: refusedByEtcd, noEndpoint: etcdError?.isEndpointDown == true))
        }
        state.withLock { state in
            #if CODABLE_DEFAULTS_TESTING
                state.transactions += 1
            #endif
            guard result.succeeded else { return }
            for change in changes {
                let name = Array(change.name.utf8)
                // The watch may already have brought a newer change of the name (another writer's, after this
                // transaction): it stays, to be taken in after this write.
                if let known = state.revisions[name], known > result.revision { continue }
                state.revisions[name] = result.revision
                state.pending[name] = nil
                state.unreadable[name] = nil
                if state.snapshot != nil { state.snapshot?[name] = change.value }
                if localCopy != nil {
                    state.known[name] = change.value
                    // A plain save of the key supersedes a change of it still kept (one etcd refused for now).
                    if compares.isEmpty { state.offline[name] = nil }
                }
            }
        }
        return .success(result.succeeded)
    }

    /// The key of `name`, read now, and the revision it was read at.
    func read(_ name: String) throws -> (keyValue: EtcdKeyValue?, revision: Int64) {
        try client.read(prefix + Array(name.utf8))
    }
}
