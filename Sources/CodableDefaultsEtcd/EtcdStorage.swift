import CodableDefaults
import Dispatch
import Foundation

/// A store's members kept in etcd: each member is the etcd key `prefix + name`, holding the value's compact JSON
/// text (so `etcdctl get` shows it and other tools may write it).
///
/// - Reading (``open(reporting:)``, ``read()``) is one range of the prefix.
/// - A write is one transaction of the changed members' puts and deletes (a burst of sets saved at once is one
///   transaction), up to ``maximumOperationsPerTransaction`` members and ``maximumBytesPerTransaction`` bytes of
///   keys and values; a larger save is several (a member larger than that alone is one).
/// - Outside changes come from a watch of the prefix, from the revision after the last one seen, reported member by
///   member; it resumes from where it was after a disconnect (with a backoff while no endpoint answers), and when
///   etcd compacted that revision away, reloads the prefix and reports a snapshot.
/// - ``update(reading:_:)`` reads the names' values and revisions, calls the transform, and writes in a transaction
///   that compares the revisions; when another writer changed one first, it calls the transform again with the new
///   values.
///
/// A value that is not JSON (stored by another tool) is left out of what the storage reports, and remembered:
/// ``unreadableValue(named:)`` gives the `decodingFailed` error that reads of its name throw. It is never written
/// over unless the store writes its name. A key whose name (after the prefix) is not UTF-8 is left out too: no
/// `String` names it, so the store can neither read nor write it.
///
/// The ``Storage`` methods block their thread until etcd answers (the client's calls need no other thread, so
/// this is safe from any thread). Errors are ``DefaultsError``s that quote the ``EtcdError`` (its endpoint and etcd's words).
package final class EtcdStorage: Storage {
    /// The cluster.
    package let client: EtcdClient
    /// The prefix of every member's key.
    package let prefix: [UInt8]
    /// `etcd://host:port/prefix`, for messages.
    package let location: String?
    /// The most members one transaction changes (etcd refuses more than `--max-txn-ops`, 128 by default).
    package let maximumOperationsPerTransaction: Int
    /// The most bytes of keys and values one transaction of a save carries (etcd refuses a request over
    /// `--max-request-bytes`, 1.5 MiB by default), unless one member alone is larger.
    package let maximumBytesPerTransaction: Int
    /// The nesting limit for values (the store's ``Defaults/Options/maximumDepth``).
    private let maxDepth: Int
    private let state = Locked(State())

    /// A change a watch saw that the store has not taken in yet.
    private struct Seen {
        var value: [UInt8]?
        var revision: Int64
    }

    /// What the storage knows of etcd, behind its lock.
    private struct State {
        /// By name (its UTF-8 bytes): the revision of the newest change the storage knows of.
        var revisions: [[UInt8]: Int64] = [:]
        /// The revision up to which every change of the prefix is known: the watch resumes after it.
        var seen: Int64 = 0
        /// What the watch saw that the store has not taken in, by name.
        var pending: [[UInt8]: Seen] = [:]
        /// A reload after a compaction that the store has not taken in (changes seen after it are applied to it).
        var snapshot: [[UInt8]: [UInt8]]?
        /// The names whose value is not JSON, with where the text stops being JSON.
        var unreadable: [[UInt8]: StorageValueError] = [:]
        /// A range read ahead of ``open(reporting:)`` (by the asynchronous initializer).
        var primed: EtcdRange?
        /// The watch's task, while it runs.
        var watch: Task<Void, Never>?
        var signal: (@Sendable () -> Void, DispatchQueue)?
        /// How many transactions the storage sent (for tests).
        var transactions = 0
        /// How many times the watch reloaded the prefix after a compaction (for tests).
        var compactionReloads = 0
        /// The wait for etcd to answer again after a write found no endpoint, while it runs.
        var retry: Task<Void, Never>?
        /// What to call when etcd answers again after a failed write: the store's save.
        var writableAgain: (@Sendable () -> Void)?
    }

    /// Makes the storage of the keys under `prefix` on `client`'s cluster. Reads nothing yet.
    package init(
        client: EtcdClient, prefix: String, maximumDepth: Int, maximumOperationsPerTransaction: Int = 128,
        maximumBytesPerTransaction: Int = 1 << 20
    ) {
        self.client = client
        self.prefix = Array(prefix.utf8)
        let endpoint = client.endpoints.first.map { "\($0.host ?? "")\($0.port.map { ":\($0)" } ?? "")" } ?? ""
        location = "etcd://\(endpoint)/\(prefix)"
        maxDepth = maximumDepth
        self.maximumOperationsPerTransaction = max(1, maximumOperationsPerTransaction)
        self.maximumBytesPerTransaction = max(1, maximumBytesPerTransaction)
    }

    /// How many transactions this storage sent to etcd.
    package var transactionCount: Int { state.withLock { $0.transactions } }

    /// How many times the watch reloaded the prefix because etcd had compacted its revision away.
    package var compactionReloadCount: Int { state.withLock { $0.compactionReloads } }

    /// The revision the watch starts from when it connects next: the one after every change it knows of.
    package var resumeRevision: Int64 { state.withLock { $0.seen } &+ 1 }

    /// The change of `name` that the watch brought and the store has not taken in yet (`value` `nil`: removed, or
    /// not JSON), with its revision; `nil` when there is none (for tests).
    package func unappliedChange(named name: String) -> (value: [UInt8]?, revision: Int64)? {
        state.withLock { state in state.pending[Array(name.utf8)].map { ($0.value, $0.revision) } }
    }

    /// Sets what the storage calls (on a task of its own) when etcd answers again after a write failed because no
    /// endpoint answered: the store's save of its unsaved changes. Until then it asks etcd with a backoff, from
    /// 100 ms doubling to 5 s.
    package func whenWritableAgain(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.writableAgain = action }
    }

    /// Reads the prefix now, asynchronously, for the next ``open(reporting:)`` to use.
    ///
    /// - Throws: ``DefaultsError`` (`readFailed`) when etcd cannot be read.
    package func prime() async throws(DefaultsError) {
        let range: EtcdRange
        do {
            range = try await client.range(prefix: prefix)
        } catch {
            throw failure(.readFailed, "the keys cannot be read", error)
        }
        state.withLock { $0.primed = range }
    }

    // MARK: Storage

    package var isPersistent: Bool { true }

    package func open(reporting report: (DefaultsError) -> Void) throws(DefaultsError) -> StoredMembers? {
        if let range = state.withLock({ state in
            defer { state.primed = nil }; return state.primed
        }) {
            return take(range)
        }
        return try read()
    }

    package func read() throws(DefaultsError) -> StoredMembers? {
        let range: EtcdRange
        do {
            range = try client.range(prefix: prefix)
        } catch {
            throw failure(.readFailed, "the keys cannot be read", error)
        }
        return take(range)
    }

    /// Takes in a range read of the whole prefix: its members (`nil` when there is none).
    private func take(_ range: EtcdRange) -> StoredMembers? {
        let (members, unreadable) = members(of: range.keyValues)
        state.withLock { state in
            state.unreadable = unreadable
            for kv in range.keyValues {
                guard let name = name(of: kv.key) else { continue }
                state.revisions[name] = max(state.revisions[name] ?? 0, kv.modRevision)
            }
            state.seen = max(state.seen, range.revision)
            // A change seen before this read is in it.
            state.pending = state.pending.filter { $0.value.revision > range.revision }
            state.snapshot = nil
        }
        return range.keyValues.isEmpty ? nil : StoredMembers(members: members)
    }

    package func write(_ changes: [MemberChange]) -> StorageWrite {
        var saved: [Int] = []
        var refusals: [DefaultsError] = []
        var start = changes.startIndex
        while start < changes.endIndex {
            // As many changes as one transaction takes, and at least one.
            var end = start + 1
            var bytes = prefix.count + changes[start].name.utf8.count + (changes[start].value?.count ?? 0)
            while end < changes.endIndex && end - start < maximumOperationsPerTransaction {
                bytes += prefix.count + changes[end].name.utf8.count + (changes[end].value?.count ?? 0)
                if bytes > maximumBytesPerTransaction { break }
                end += 1
            }
            let batch = Array(start..<end)
            start = end
            switch commit(batch.map { changes[$0] }, compares: []) {
            case .success(true): saved += batch
            case .success(false): return failed(notApplied(), saved: saved)
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

    /// The failure of a write, after the changes at the indexes `saved` were written all the same.
    private func failed(_ error: DefaultsError, saved: [Int]) -> StorageWrite {
        var write = StorageWrite(outside: nil, outcome: .failure(error))
        write.savedDespiteFailure = saved
        return write
    }

    /// The error of a transaction without conditions that etcd says it did not apply (no etcd says that).
    private func notApplied() -> DefaultsError {
        DefaultsError(
            .writeFailed,
            "etcd answered that it did not apply a transaction without conditions; the changes stay unsaved",
            path: location)
    }

    package func update(reading names: [String], _ transform: (StorageContent?) -> [MemberChange]?) -> StorageWrite {
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
            switch commit(changes, compares: compares) {
            case .success(true): return StorageWrite(outside: nil, outcome: .success(([], nil)))
            case .success(false): continue  // Another writer changed a name first: again, with its value.
            case .failure(let failure): return StorageWrite(outside: nil, outcome: .failure(failure.error))
            }
        }
    }

    /// Why a transaction failed, and whether etcd refused it (an error answer that is etcd's own: it wrote
    /// nothing). Any other failure (no endpoint answered, an answer that is not etcd's) may or may not have been
    /// applied: nothing is sent again that could write over a newer value.
    private struct CommitFailure: Error {
        var error: DefaultsError
        var refusedByEtcd: Bool
    }

    /// Sends one transaction of `changes` under `compares`; returns whether it was applied.
    private func commit(_ changes: [MemberChange], compares: [EtcdCompare]) -> Result<Bool, CommitFailure> {
        let operations: [EtcdOperation] = changes.map { change in
            let key = prefix + Array(change.name.utf8)
            return change.value.map { .put(key: key, value: $0) } ?? .delete(key: key)
        }
        let result: EtcdTransactionResult
        do {
            result = try client.transaction(compares: compares, operations: operations)
        } catch {
            let etcdError = error as? EtcdError
            if etcdError?.isEndpointDown == true { retryWhenReachable() }
            let refusedByEtcd = etcdError.map { $0.code == .server && !$0.isEndpointDown } ?? false
            let names = changes.prefix(3).map { "\"\($0.name)\"" }.joined(separator: ", ")
            let more = changes.count > 3 ? " and \(changes.count - 3) more" : ""
            return .failure(
                CommitFailure(
                    error: failure(.writeFailed, "\(names)\(more) cannot be written; they stay unsaved", error),
                    refusedByEtcd: refusedByEtcd))
        }
        state.withLock { state in
            state.transactions += 1
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
            }
        }
        return .success(result.succeeded)
    }

    /// The key of `name`, read now, and the revision it was read at.
    private func read(_ name: String) throws -> (keyValue: EtcdKeyValue?, revision: Int64) {
        try client.read(prefix + Array(name.utf8))
    }

    package var hasUnconfirmedWrite: Bool { false }

    package func confirmDurability() throws(DefaultsError) {}

    package func outsideChanges() throws(DefaultsError) -> StorageContent? {
        let (snapshot, pending) = state.withLock { state in
            defer {
                state.snapshot = nil
                state.pending = [:]
            }
            return (state.snapshot, state.pending)
        }
        if let snapshot {
            return .snapshot(
                StoredMembers(members: snapshot.map { (String(decoding: $0.key, as: UTF8.self), $0.value) }))
        }
        if pending.isEmpty { return nil }
        return .changes(pending.map { MemberChange(String(decoding: $0.key, as: UTF8.self), $0.value.value) })
    }

    package func startWatching(on queue: DispatchQueue, _ signal: @escaping @Sendable () -> Void) {
        state.withLock { state in
            guard state.signal == nil else { return }
            state.signal = (signal, queue)
            state.watch = Task { [weak self] in await self?.watchUntilCancelled() }
        }
    }

    package func stopWatching() {
        let tasks = state.withLock { state in
            defer {
                state.signal = nil
                state.watch = nil
                state.retry = nil
            }
            return [state.watch, state.retry]
        }
        for task in tasks { task?.cancel() }
    }

    /// Stops the watch but keeps the store's signal, as a long disconnect would (for tests of what follows).
    package func pauseWatching() {
        let task = state.withLock { state in
            defer { state.watch = nil }
            return state.watch
        }
        task?.cancel()
    }

    /// Starts the watch again after ``pauseWatching()``, from the revision after the last one seen.
    package func resumeWatching() {
        state.withLock { state in
            guard state.signal != nil, state.watch == nil else { return }
            state.watch = Task { [weak self] in await self?.watchUntilCancelled() }
        }
    }

    /// Starts waiting for etcd to answer again (unless that already runs), then calls ``whenWritableAgain(_:)``'s
    /// action.
    private func retryWhenReachable() {
        state.withLock { state in
            guard state.retry == nil else { return }
            state.retry = Task { [weak self] in await self?.waitUntilReachable() }
        }
    }

    /// Asks etcd (a read of the prefix's first key) with a backoff until it answers, then calls the action. An
    /// answer that is an error (etcd refuses the read) is an answer too: the save then reports why it fails.
    private func waitUntilReachable() async {
        var backoff: Duration = .milliseconds(100)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: backoff)
                _ = try await client.range(prefix: prefix, limit: 1)
                break
            } catch is CancellationError {
                return
            } catch let error as EtcdError where !error.isEndpointDown {
                break
            } catch {
                backoff = min(backoff * 2, .seconds(5))  // Still no answer: ask again later.
            }
        }
        let action = state.withLock { state in
            defer { state.retry = nil }
            return Task.isCancelled ? nil : state.writableAgain
        }
        action?()
    }

    package func moveAsideUnreadable() throws(DefaultsError) -> (location: String, notice: DefaultsError)? { nil }

    /// etcd has no empty key: with the empty prefix, the name "" would be one.
    package var minimumNameLength: Int { prefix.isEmpty ? 1 : 0 }

    package func unreadableNames() -> [String] {
        state.withLock { $0.unreadable.keys.sorted { $0.lexicographicallyPrecedes($1) } }
            .map { String(decoding: $0, as: UTF8.self) }
    }

    package func unreadableValue(named name: String, secret: Bool) -> DefaultsError? {
        guard let error = state.withLock({ $0.unreadable[Array(name.utf8)] }) else { return nil }
        // The parser's words may quote the text (the character where it stopped): left out for a secret.
        let what = secret ? "details withheld: the value is secret" : error.message
        return DefaultsError(
            .decodingFailed,
            "the value of the etcd key \"\(String(decoding: prefix, as: UTF8.self))\(name)\" is not JSON "
                + "(\(what), at line \(error.line), column \(error.column) of the value); it is kept unchanged",
            path: location, key: name)
    }

    // MARK: The watch

    /// Watches the prefix from the revision after the last one seen, again and again, until cancelled: after a
    /// disconnect at once and then with a backoff (50 ms doubling to 2 s) while no endpoint answers; after a
    /// compaction, reloading first.
    private func watchUntilCancelled() async {
        var backoff: Duration = .milliseconds(50)
        while !Task.isCancelled {
            let start = resumeRevision
            var received = false
            do {
                for try await response in client.watch(prefix: prefix, startRevision: max(start, 1)) {
                    backoff = .milliseconds(50)
                    received = true
                    take(response)
                }
            } catch let error as EtcdError where error.code == .compacted {
                do { try await reloadAfterCompaction() } catch { await pause(&backoff) }
            } catch let error as EtcdError where error.code == .watchDisconnected && received {
                continue  // It worked until now: again at once, from where it was.
            } catch {
                await pause(&backoff)  // Ended before any message too (a server that closes at once): not in a loop.
            }
        }
    }

    /// Sleeps for `backoff` (unless cancelled), and doubles it up to 2 s.
    private func pause(_ backoff: inout Duration) async {
        do { try await Task.sleep(for: backoff) } catch { return }  // Cancelled: the loop ends.
        backoff = min(backoff * 2, .seconds(2))
    }

    /// Takes in one message of the watch: the changes newer than what the storage knows, for the store. (Package
    /// access for tests that hand it a message as etcd sends them.)
    package func take(_ response: EtcdWatchResponse) {
        let signal: (@Sendable () -> Void, DispatchQueue)? = state.withLock { state in
            var changed = false
            for event in response.events {
                guard let name = name(of: event.key), event.modRevision > state.revisions[name] ?? 0 else { continue }
                state.revisions[name] = event.modRevision
                var value: [UInt8]?
                state.unreadable[name] = nil
                if event.kind == .put {
                    switch StorageValue.compact(event.value, maxDepth: maxDepth) {
                    case .success(let compact): value = compact
                    case .failure(let error):
                        state.unreadable[name] = error
                    }
                }
                if state.snapshot != nil {
                    state.snapshot?[name] = value
                } else {
                    state.pending[name] = Seen(value: value, revision: event.modRevision)
                }
                changed = true
            }
            // A message of events is complete up to its last event's revision, no further: catching up, etcd sends
            // the events in batches of whole revisions, each with the cluster's current revision in its header. A
            // message without events (a progress notification, sent to a watch that has caught up) is complete up
            // to its header's revision.
            state.seen = max(state.seen, response.events.last?.modRevision ?? response.revision)
            return changed ? state.signal : nil
        }
        if let (signal, queue) = signal { queue.async(execute: signal) }
    }

    /// Reads the whole prefix again after the watch's revision was compacted, and keeps it as the snapshot the
    /// store takes in next. A read older than a write the storage made meanwhile is read again.
    private func reloadAfterCompaction() async throws {
        while true {
            let range = try await client.range(prefix: prefix)
            let (members, unreadable) = members(of: range.keyValues)
            let signal: (@Sendable () -> Void, DispatchQueue)?? = state.withLock { state in
                if state.revisions.values.contains(where: { $0 > range.revision }) { return nil }
                state.unreadable = unreadable
                for kv in range.keyValues {
                    guard let name = name(of: kv.key) else { continue }
                    state.revisions[name] = max(state.revisions[name] ?? 0, kv.modRevision)
                }
                state.seen = max(state.seen, range.revision)
                state.pending = [:]
                state.compactionReloads += 1
                var snapshot: [[UInt8]: [UInt8]] = [:]
                for member in members { snapshot[Array(member.name.utf8)] = member.value }
                state.snapshot = snapshot
                return .some(state.signal)
            }
            guard let signal else { continue }
            if let (signal, queue) = signal { queue.async(execute: signal) }
            return
        }
    }

    // MARK: Names and values

    /// The name of the member of `key` (the key without the prefix), as UTF-8 bytes; `nil` when those bytes are not
    /// UTF-8 (a key another tool stored): no `String` names it, so the storage leaves it out and never writes it.
    private func name(of key: [UInt8]) -> [UInt8]? {
        let name = Array(key.dropFirst(prefix.count))
        return String(utf8Validating: name) == nil ? nil : name
    }

    /// The members of `keyValues` whose values are JSON, and the errors of those whose values are not.
    private func members(of keyValues: [EtcdKeyValue]) -> (
        [(name: String, value: [UInt8])], [[UInt8]: StorageValueError]
    ) {
        var members: [(name: String, value: [UInt8])] = []
        var unreadable: [[UInt8]: StorageValueError] = [:]
        for kv in keyValues {
            guard let name = name(of: kv.key) else { continue }
            let text = String(decoding: name, as: UTF8.self)
            switch StorageValue.compact(kv.value, maxDepth: maxDepth) {
            case .success(let value): members.append((text, value))
            case .failure(let error): unreadable[name] = error
            }
        }
        return (members, unreadable)
    }

    /// A ``DefaultsError`` of `code` saying `what`, quoting the etcd error.
    private func failure(_ code: DefaultsError.Code, _ what: String, _ error: any Error) -> DefaultsError {
        DefaultsError(code, "\(what): \(error)", path: location)
    }
}
