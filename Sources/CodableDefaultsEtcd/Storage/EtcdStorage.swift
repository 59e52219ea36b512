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
/// - ``update(reading:as:_:)`` reads the names' values and revisions, calls the transform, and writes in a
///   transaction that compares the revisions; when another writer changed one first, it calls the transform again
///   with the new values.
/// - Each transaction of a save also puts the prefix's history record, the reserved key ``historyKey`` (the
///   prefix, the byte 0xFF, `history`: not UTF-8, so never a member): what the save changed, by name (see
///   `EtcdStorage+History.swift`).
///
/// A value that is not JSON (stored by another tool) is left out of what the storage reports, and remembered:
/// ``unreadableValue(named:secret:)`` gives the `decodingFailed` error that reads of its name throw. It is never
/// written over unless the store writes its name. A key whose name (after the prefix) is not UTF-8 is left out too: no
/// `String` names it, so the store can neither read nor write it.
///
/// The ``CodableDefaults/Storage`` methods block their thread until etcd answers (the client's calls need no other
/// thread, so this is safe from any thread). Errors are ``CodableDefaults/DefaultsError``s that quote the ``EtcdError``
/// (its endpoint and etcd's words).
package final class EtcdStorage: RemoteStorage {
    /// The cluster.
    package let client: EtcdClient
    /// The prefix of every member's key.
    package let prefix: [UInt8]
    /// `etcd://host:port/prefix`, for messages.
    package let location: String?
    /// The most operations one transaction makes (etcd refuses more than `--max-txn-ops`, 128 by default): the
    /// members it changes and, unless the history is off, the history record (so one member fewer); the most reads
    /// one read-only transaction of ``history()`` makes.
    package let maximumOperationsPerTransaction: Int
    /// The most bytes of keys, values and history record one transaction of a save carries (etcd refuses a
    /// request over `--max-request-bytes`, 1.5 MiB by default), unless one member alone is larger.
    package let maximumBytesPerTransaction: Int
    /// The nesting limit for values (the store's ``CodableDefaults/Defaults/Options/maximumDepth``).
    let maxDepth: Int
    /// How much of the history ``history()`` reads (the store's ``CodableDefaults/Defaults/Options/history``); when it
    /// is off, writes record nothing.
    package let historyLimit: Defaults.HistoryLimit
    /// The local copy of the prefix (see `EtcdStorage+LocalCopy.swift`), or `nil` when the store keeps none.
    let localCopy: EngineFile?
    /// The most bytes the local copy may take (the store's ``CodableDefaults/Defaults/Options/maximumFileSize``).
    let localCopyLimit: Int
    /// Held while the local copy is written, so that copies are written in the order of the states they hold.
    let localCopyWriting = Locked(())
    /// Held while the storage writes to etcd: by a save and a modify (which the store already makes one at a time)
    /// and by the catch-up after an outage (on a task of the storage's own), so that the changes kept in the local
    /// copy and the store's newer ones are sent one after the other.
    let writing = Locked(())
    let state = Locked(State())

    /// A change a watch saw that the store has not taken in yet.
    struct Seen {
        var value: [UInt8]?
        var revision: Int64
    }

    /// What the storage knows of etcd, behind its lock.
    struct State {
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
        #if CODABLE_DEFAULTS_TESTING
            /// How many transactions the storage sent (for tests; see `Testing/EtcdStorage+Inspection.swift`).
            var transactions = 0
            /// How many times the watch reloaded the prefix after a compaction (for tests).
            var compactionReloads = 0
        #endif
        /// The wait for etcd to answer again after a write found no endpoint, while it runs.
        var retry: Task<Void, Never>?
        /// What to call when etcd answers again after a failed write: the store's save.
        var writableAgain: (@Sendable () -> Void)?
        /// With a local copy: each member's value as etcd holds it at ``seen`` (and after this storage's writes),
        /// by name; empty without one.
        var known: [[UInt8]: [UInt8]] = [:]
        /// With a local copy: the changes made while no endpoint answered, not yet sent, by name.
        var offline: [[UInt8]: OfflineChange] = [:]
        /// Whether the store serves its local copy because no endpoint answered when it opened, until it caught up.
        var isStale = false
        /// What the storage found on its own, for the store's error handler (``takeNotices()``).
        var notices: [DefaultsError] = []
        /// The descriptor holding the local copy's lock, once it was read.
        var localCopyLock: Int32?
        /// Whether the prime found no endpoint (the store then opens from its local copy).
        var primeFoundNoEndpoint: DefaultsError?
        /// Whether the outage that keeps changes in the local copy was reported (once per outage).
        var reportedOffline = false
        /// With a local copy: the prefix's schema as last read (kept in the copy, for reads while no endpoint
        /// answers).
        var schema: [UInt8]?
    }

    /// Makes the storage of the keys under `prefix` on `client`'s cluster, recording its saves' history as
    /// `history` says. Reads nothing yet.
    package init(
        client: EtcdClient, prefix: String, maximumDepth: Int, maximumOperationsPerTransaction: Int = 128,
        maximumBytesPerTransaction: Int = 1 << 20, history: Defaults.HistoryLimit = .default,
        localCopy: String? = nil, localCopyLimit: Int = 64 << 20
    ) {
        self.localCopy = localCopy.map { EngineFile(path: $0, role: "local copy") }
        self.localCopyLimit = localCopyLimit
        self.client = client
        self.prefix = Array(prefix.utf8)
        let endpoint = client.endpoints.first.map { "\($0.host ?? "")\($0.port.map { ":\($0)" } ?? "")" } ?? ""
        location = "etcd://\(endpoint)/\(prefix)"
        maxDepth = maximumDepth
        historyLimit = history
        self.maximumOperationsPerTransaction = max(1, maximumOperationsPerTransaction)
        self.maximumBytesPerTransaction = max(1, maximumBytesPerTransaction)
        // etcd has no empty key: with the empty prefix, the name "" would be one. One transaction's operations
        // take the members, less the history record's when it is recorded.
        facts = StorageFacts(
            location: location, schemaLocation: (location ?? "etcd") + "\\xFFschema", isPersistent: true,
            minimumNameLength: prefix.isEmpty ? 1 : 0,
            maximumKeysPerUpdate: max(1, self.maximumOperationsPerTransaction - (history.isEnabled ? 1 : 0)))
    }

    deinit {
        if let descriptor = state.withLock({ $0.localCopyLock }) { localCopy?.unlock(descriptor) }
    }

    /// The revision the watch starts from when it connects next: the one after every change it knows of.
    package var resumeRevision: Int64 { state.withLock { $0.seen } &+ 1 }

    /// Sets what the storage calls (on a task of its own) when etcd answers again after a write failed because no
    /// endpoint answered: the store's save of its unsaved changes. Until then it asks etcd with a backoff, from
    /// 100 ms doubling to 5 s.
    package func whenWritableAgain(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.writableAgain = action }
    }

    /// Reads the prefix now, asynchronously, for the next ``open(reporting:)`` to use.
    ///
    /// - Throws: ``CodableDefaults/DefaultsError`` (`readFailed`) when etcd cannot be read.
    package func prime() async throws(DefaultsError) {
        let range: EtcdRange
        do {
            range = try await client.range(prefix: prefix)
        } catch let error as EtcdError where error.isEndpointDown && localCopy != nil {
            // The store opens from its local copy (``open(reporting:)``), without asking again.
            let unreachable = failure(.readFailed, "the keys cannot be read", error)
            state.withLock { $0.primeFoundNoEndpoint = unreachable }
            return
        } catch {
            throw failure(.readFailed, "the keys cannot be read", error)
        }
        state.withLock { $0.primed = range }
    }

    // MARK: Storage

    package let facts: StorageFacts

    package func open(reporting report: (DefaultsError) -> Void) throws(DefaultsError) -> StoredMembers? {
        if localCopy != nil { return try openWithLocalCopy(reporting: report) }
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
    func take(_ range: EtcdRange) -> StoredMembers? {
        let (members, unreadable) = members(of: range.keyValues)
        state.withLock { state in
            if localCopy != nil {
                state.known = [:]
                for member in members { state.known[Array(member.name.utf8)] = member.value }
            }
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

    // MARK: Names and values

    /// The name of the member of `key` (the key without the prefix), as UTF-8 bytes; `nil` when those bytes are not
    /// UTF-8 (a key another tool stored): no `String` names it, so the storage leaves it out and never writes it.
    func name(of key: [UInt8]) -> [UInt8]? {
        let name = Array(key.dropFirst(prefix.count))
        return String(utf8Validating: name) == nil ? nil : name
    }

    /// The members of `keyValues` whose values are JSON, and the errors of those whose values are not.
    func members(of keyValues: [EtcdKeyValue]) -> (
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

    /// A ``CodableDefaults/DefaultsError`` of `code` saying `what`, quoting the etcd error.
    func failure(_ code: DefaultsError.Code, _ what: String, _ error: any Error) -> DefaultsError {
        DefaultsError(code, "\(what): \(error)", path: location)
    }
}
