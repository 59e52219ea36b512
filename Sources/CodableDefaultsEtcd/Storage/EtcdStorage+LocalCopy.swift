import CodableDefaults
import Dispatch
import Foundation

/// The local copy: a file that holds the prefix as this storage last knew it (values, revisions, and the revision up
/// to which it knew every change) and the changes made while no endpoint answered.
///
/// - Opening with no endpoint answering serves the copy (the store is then stale) and waits for etcd; opening with
///   etcd answering reads etcd, and first sends the copy's changes a process kept before it ended.
/// - The copy is rewritten (atomically and durably) after each open, each save, each message of the watch and each
///   reload; a change made while no endpoint answers is in it before the save returns, and counts as saved.
/// - When a member answers again, the kept changes are sent in one transaction that compares each key's revision
///   with the one the change was made on. A key another writer changed meanwhile is a conflict: etcd's value is
///   kept, the change is dropped, and the conflict is reported with both values (a `conflict` error). Then the
///   prefix is read again and the store told what changed, whatever revision etcd compacted to meanwhile.
extension EtcdStorage {
    /// The catch-up found no endpoint again: the wait for etcd goes on.
    struct StillNoEndpoint: Error {}

    /// What sending the kept changes came to.
    enum OfflineOutcome: Equatable {
        /// Every kept change was sent, or dropped as a conflict (or there was none).
        case sent
        /// No endpoint answered: the changes stay kept.
        case noEndpoint
        /// etcd refused some of them, or answered what is not etcd's (reported): those stay kept, to be sent again
        /// by the next save or catch-up.
        case refused
    }

    /// Whether the store serves its local copy because no endpoint answered when it opened, until it caught up.
    package var isStale: Bool { state.withLock { $0.isStale } }

    /// How many changes are kept in the local copy, not yet sent to etcd.
    package var unsentChangeCount: Int { state.withLock { $0.offline.count } }

    package func takeNotices() -> [DefaultsError] {
        state.withLock { state in
            defer { state.notices = [] }
            return state.notices
        }
    }

    /// Keeps `notice` for the store's error handler, and signals the store.
    func notify(_ notice: DefaultsError) {
        let signal = state.withLock { state in
            state.notices.append(notice)
            return state.signal
        }
        if let (signal, queue) = signal { queue.async(execute: signal) }
    }

    // MARK: Opening

    /// ``open(reporting:)`` with a local copy: etcd's members when an endpoint answers (after sending the changes
    /// the copy kept), else the copy's.
    func openWithLocalCopy(reporting report: (DefaultsError) -> Void) throws(DefaultsError) -> StoredMembers? {
        let copy = try readLocalCopy()
        let (primed, noEndpoint) = state.withLock { state in
            defer {
                state.primed = nil
                state.primeFoundNoEndpoint = nil
            }
            return (state.primed, state.primeFoundNoEndpoint)
        }
        var range = primed
        var unreachable = noEndpoint
        if range == nil && unreachable == nil {
            do {
                range = try client.range(prefix: prefix)
            } catch let error as EtcdError where error.isEndpointDown {
                unreachable = failure(.readFailed, "the keys cannot be read", error)
            } catch {
                throw failure(.readFailed, "the keys cannot be read", error)
            }
        }
        if let range {
            var members = take(range)
            state.withLock { state in
                state.offline = copy?.offline ?? [:]
                state.schema = copy?.schema
            }
            if copy?.offline.isEmpty == false {
                // Another run kept changes while etcd did not answer: they go first, then etcd is read again.
                if sendOffline() == .noEndpoint { return try openFromCopy(copy, unreachable, report) }
                for notice in takeNotices() { report(notice) }
                members = try read()
                // Changes etcd refused for now stay kept, and stay what the store serves (as after a reload).
                let served = state.withLock { state -> [[UInt8]: [UInt8]]? in
                    guard !state.offline.isEmpty else { return nil }
                    var served = state.known
                    for (name, change) in state.offline { served[name] = change.value }
                    return served
                }
                if let served { members = Self.stored(served) }
            }
            // etcd answered: a copy that cannot be written is reported, and the store opens all the same.
            do throws(DefaultsError) {
                try writeLocalCopy()
            } catch {
                report(error)
            }
            return members
        }
        return try openFromCopy(copy, unreachable, report)
    }

    /// The store's members from the local copy (with its kept changes on top), the store stale until etcd answers.
    private func openFromCopy(
        _ copy: EtcdLocalCopy?, _ unreachable: DefaultsError?, _ report: (DefaultsError) -> Void
    ) throws(DefaultsError) -> StoredMembers? {
        guard let copy, let localCopy else {
            var error = unreachable ?? DefaultsError(.readFailed, "no etcd endpoint answered", path: location)
            error.message += "; and there is no local copy to start from yet (\(localCopy?.path ?? "none"))"
            throw error
        }
        var members: [[UInt8]: [UInt8]] = [:]
        state.withLock { state in
            state.schema = copy.schema
            state.known = copy.members.mapValues(\.value)
            state.revisions = copy.members.mapValues(\.revision)
            state.seen = copy.revision
            state.offline = copy.offline
            state.unreadable = [:]
            state.pending = [:]
            state.snapshot = nil
            state.isStale = true
            state.reportedOffline = !copy.offline.isEmpty
            members = state.known
            for (name, change) in copy.offline { members[name] = change.value }
        }
        let why = unreachable?.message ?? "no etcd endpoint answered"
        report(
            DefaultsError(
                .readFailed,
                "\(why); the store serves its local copy \(localCopy.path) of revision "
                    + "\(copy.revision), stale until a member answers (changes are kept in the copy and sent then)",
                path: location))
        retryWhenReachable()
        return Self.stored(members)
    }

    /// `members` (by name) as the store takes them in; `nil` when there is none.
    private static func stored(_ members: [[UInt8]: [UInt8]]) -> StoredMembers? {
        guard !members.isEmpty else { return nil }
        return StoredMembers(
            members: members.sorted { $0.key.lexicographicallyPrecedes($1.key) }
                .map { (String(decoding: $0.key, as: UTF8.self), $0.value) })
    }

    // MARK: The file

    /// The local copy as the file holds it (taking the file's lock the first time), or `nil` when there is none.
    ///
    /// - Throws: What the file's read or lock throws, or a copy that does not read (named with its path): the copy
    ///   is then never written over.
    func readLocalCopy() throws(DefaultsError) -> EtcdLocalCopy? {
        guard let localCopy else { return nil }
        if state.withLock({ $0.localCopyLock == nil }) {
            let descriptor = try localCopy.lock()
            state.withLock { $0.localCopyLock = descriptor }
        }
        guard let bytes = try localCopy.read(maxSize: localCopyLimit) else { return nil }
        do throws(DefaultsError) {
            return try EtcdLocalCopy.decoded(bytes, prefix: String(decoding: prefix, as: UTF8.self), maxDepth: maxDepth)
        } catch {
            var located = error
            located.path = localCopy.path
            located.message += "; it is left as it is (move it away to start afresh from etcd)"
            throw located
        }
    }

    /// Writes the local copy of what the storage knows now, durably. Copies are written one at a time, each of the
    /// state when its write began, so that an older state never replaces a newer one.
    ///
    /// - Throws: ``CodableDefaults/DefaultsError/Code-swift.struct/fileTooLarge`` when the copy would be larger than
    ///   the store reads (``localCopyLimit``), or what the file's write throws; the file is then left as it was.
    func writeLocalCopy() throws(DefaultsError) {
        guard let localCopy else { return }
        try localCopyWriting.withLock { (_: inout Void) throws(DefaultsError) in
            let copy = state.withLock { state in
                EtcdLocalCopy(
                    prefix: String(decoding: prefix, as: UTF8.self), revision: state.seen,
                    members: state.known.reduce(into: [:]) { members, member in
                        members[member.key] = (member.value, state.revisions[member.key] ?? 0)
                    }, offline: state.offline, schema: state.schema)
            }
            let bytes = copy.encoded()
            // Never write a copy that this store (with these limits) could not open again.
            guard bytes.count <= localCopyLimit else {
                throw DefaultsError(
                    .fileTooLarge,
                    "the local copy would be \(bytes.count) bytes, over the limit of \(localCopyLimit) bytes "
                        + "(the store's maximumFileSize); the copy is left as it was", path: localCopy.path)
            }
            try localCopy.write(bytes)
        }
    }

    /// Writes the local copy now, on the calling thread (after a save, before it returns: a program that ends then
    /// finds its change in the copy); a failure goes to the store's error handler.
    func updateLocalCopy() {
        do throws(DefaultsError) {
            try writeLocalCopy()
        } catch {
            notify(error)
        }
    }

    /// Writes the local copy soon, on a thread of its own; a failure goes to the store's error handler.
    func scheduleLocalCopyWrite() {
        DispatchQueue.global(qos: .utility).async { [weak self] in
            guard let self else { return }
            do throws(DefaultsError) {
                try self.writeLocalCopy()
            } catch {
                self.notify(error)
            }
        }
    }

    // MARK: Offline changes

    /// Keeps the changes of `changes` not at the indexes `saved` in the local copy (no endpoint answered): each on
    /// the revision its key had as last known (0 for a key known to have no value: etcd compares a missing key's
    /// revision as 0, whatever revision removed it), a second change of a key on the first one's. They count as
    /// saved once the copy is written; when it cannot be, the write fails and they stay unsaved in the store.
    func keepOffline(_ changes: [MemberChange], saved: [Int], sentWithoutAnswer: Set<Int> = []) -> StorageWrite {
        let savedIndexes = Set(saved)
        let before = state.withLock { state in
            let before = state.offline
            for (index, change) in changes.enumerated() where !savedIndexes.contains(index) {
                let name = Array(change.name.utf8)
                // A key with neither a value nor one that is not JSON has none in etcd (as last known): the
                // revision of its removal is not the one etcd compares.
                let exists = state.known[name] != nil || state.unreadable[name] != nil
                let base = state.offline[name]?.base ?? (exists ? state.revisions[name] ?? 0 : 0)
                let secret = change.secret || state.offline[name]?.secret == true
                var unconfirmed = state.offline[name]?.unconfirmed ?? []
                // Sent, and no answer came: etcd may hold it, as this store's own write after `base`.
                if sentWithoutAnswer.contains(index) && !unconfirmed.contains(change.value) {
                    unconfirmed.append(change.value)
                }
                state.offline[name] = OfflineChange(
                    value: change.value, base: base, secret: secret, unconfirmed: unconfirmed)
            }
            return before
        }
        do throws(DefaultsError) {
            try writeLocalCopy()
        } catch {
            state.withLock { $0.offline = before }
            var failed = error
            failed.message =
                "no etcd endpoint answered, and the local copy that would keep the changes cannot be written: "
                + error.message + "; the changes stay unsaved"
            return self.failed(failed, saved: saved)
        }
        let first = state.withLock { state in
            defer { state.reportedOffline = true }
            return !state.reportedOffline
        }
        if first {
            notify(
                DefaultsError(
                    .writeFailed,
                    "no etcd endpoint answers: changes are kept in the local copy \(localCopy?.path ?? "") and sent "
                        + "when a member answers", path: location))
        }
        retryWhenReachable()
        var write = StorageWrite(outside: nil, outcome: .success(([], nil)))
        write.savedDespiteFailure = []
        return write
    }

    /// Sends the kept changes in transactions (as many changes as one takes: ``transactionEnd(of:from:)``) that
    /// compare each key's revision with the one its change was made on; drops (and reports) the changes another
    /// writer's newer change conflicts with, and the ones etcd already holds (a transaction whose answer was lost).
    /// A transaction etcd refuses is sent again one change at a time, so that a change etcd refuses (reported, and
    /// kept for the next save) holds back no other.
    func sendOffline() -> OfflineOutcome {
        var refused: Set<[UInt8]> = []
        while true {
            let kept = state.withLock { $0.offline }.filter { !refused.contains($0.key) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            guard !kept.isEmpty else { return refused.isEmpty ? .sent : .refused }
            let batch = Array(kept[..<transactionEnd(of: kept.map(Self.memberChange), from: 0)])
            var stopped: OfflineOutcome?
            var progressed = false
            switch send(batch) {
            case .done: progressed = true
            case .stopped(let outcome): stopped = outcome
            case .refused(let error) where batch.count == 1:
                notify(error)
                refused.insert(batch[0].key)
            case .refused:
                for change in batch where stopped == nil {
                    switch send([change]) {
                    case .done: progressed = true
                    case .stopped(let outcome): stopped = outcome
                    case .refused(let error):
                        notify(error)
                        refused.insert(change.key)
                    }
                }
            }
            if progressed {
                do throws(DefaultsError) {
                    try writeLocalCopy()
                } catch {
                    notify(error)
                }
            }
            if let stopped { return stopped }
        }
    }

    /// What sending one transaction of kept changes came to.
    private enum Sending {
        /// Sent, or resolved as conflicts.
        case done
        /// Sending ends here, with this outcome (reported).
        case stopped(OfflineOutcome)
        /// etcd refused the transaction (it wrote nothing): the changes stay kept.
        case refused(DefaultsError)
    }

    /// The change `change` kept of the member `name`, as a change to send.
    private static func memberChange(_ name: [UInt8], _ change: OfflineChange) -> MemberChange {
        var member = MemberChange(String(decoding: name, as: UTF8.self), change.value)
        member.secret = change.secret
        return member
    }

    /// Sends `batch` in one transaction that compares each key's revision with its change's base.
    private func send(_ batch: [(key: [UInt8], value: OfflineChange)]) -> Sending {
        let changes = batch.map(Self.memberChange)
        let compares = batch.map { EtcdCompare(key: prefix + $0.key, modRevision: $0.value.base) }
        switch commit(changes, compares: compares) {
        case .success(true):
            forget(batch)
            return .done
        case .success(false):
            // A key changed since its change was made: read each, keep etcd's where it differs.
            let current: [(keyValue: EtcdKeyValue?, revision: Int64)]
            do {
                current = try batch.map { name, _ in try client.read(prefix + name) }
            } catch let error as EtcdError where error.isEndpointDown {
                return .stopped(.noEndpoint)
            } catch {
                notify(failure(.writeFailed, "the changes kept in the local copy cannot be sent", error))
                return .stopped(.refused)
            }
            resolveConflicts(batch, current)
            return .done
        case .failure(let failure) where failure.noEndpoint:
            // Sent, and no answer came: etcd may hold these values now, as this store's own writes.
            state.withLock { state in
                for (name, change) in batch where state.offline[name]?.unconfirmed.contains(change.value) == false {
                    state.offline[name]?.unconfirmed.append(change.value)
                }
            }
            return .stopped(.noEndpoint)
        case .failure(let failure) where failure.refusedByEtcd:
            return .refused(failure.error)
        case .failure(let failure):
            notify(failure.error)
            return .stopped(.refused)
        }
    }

    /// Removes the sent changes of `batch` from the kept ones. A newer change of the key kept meanwhile stays, now
    /// on the revision the sent one was written at (it follows that write, not the one before it).
    private func forget(_ batch: [(key: [UInt8], value: OfflineChange)]) {
        state.withLock { state in
            for (name, change) in batch {
                if state.offline[name] == change {
                    state.offline[name] = nil
                } else if let written = state.revisions[name] {
                    state.offline[name]?.base = written
                }
            }
        }
    }

    /// For each change of `batch` whose key etcd now holds at another revision than the change's: dropped, and, when
    /// etcd's value is not the change's own, reported as a conflict and given to the store as an outside change.
    private func resolveConflicts(
        _ batch: [(key: [UInt8], value: OfflineChange)], _ current: [(keyValue: EtcdKeyValue?, revision: Int64)]
    ) {
        var conflicts: [DefaultsError] = []
        let schemaSecrets = secretNamesOfSchema()
        let signal = state.withLock { state in
            var changed = false
            for ((name, change), (keyValue, readRevision)) in zip(batch, current) {
                let revision = keyValue?.modRevision ?? 0
                guard revision != change.base, state.offline[name] == change else { continue }
                state.offline[name] = nil
                let theirs: [UInt8]? =
                    keyValue.flatMap {
                        if case .success(let value) = StorageValue.compact($0.value, maxDepth: maxDepth) {
                            return value
                        }
                        return nil
                    }
                if theirs == change.value && keyValue != nil || keyValue == nil && change.value == nil {
                    continue  // etcd holds the change already (its answer was lost): nothing to send.
                }
                if keyValue == nil || theirs != nil,
                    change.unconfirmed.contains(where: { $0 == theirs }), revision > change.base || keyValue == nil
                {
                    // etcd holds a value this store sent without an answer: its own write. The change follows it.
                    var rebased = change
                    rebased.base = revision
                    rebased.unconfirmed = []
                    state.offline[name] = rebased
                    let known = keyValue == nil ? readRevision : revision
                    if known > state.revisions[name] ?? 0 {
                        state.revisions[name] = known
                        state.known[name] = theirs
                    }
                    continue
                }
                let text = String(decoding: name, as: UTF8.self)
                func shown(_ value: [UInt8]?) -> String {
                    value.map { String(decoding: $0, as: UTF8.self) } ?? "no value"
                }
                // Secret when the change was made by a store that knew it so, or the prefix's schema marks it (a
                // schema that cannot be read withholds every value).
                let secret = change.secret || schemaSecrets.map { $0.contains(text) } ?? true
                let both =
                    secret
                    ? "(values withheld: the key is secret)"
                    : "(the kept change: \(shown(change.value)); etcd's: \(shown(theirs)))"
                let what =
                    keyValue == nil
                    ? "removed the key after it" : "changed the key at revision \(revision)"
                conflicts.append(
                    DefaultsError(
                        .conflict,
                        "the change kept while etcd did not answer was made on revision \(change.base), but another "
                            + "writer \(what): etcd's value is kept and the change is dropped \(both)",
                        path: location, key: text))
                // A key with no value is known as of the read (its removal's revision is not in the read).
                let known = keyValue == nil ? readRevision : revision
                if known > state.revisions[name] ?? 0 {
                    state.revisions[name] = known
                    state.known[name] = theirs
                    state.pending[name] = Seen(value: theirs, revision: known)
                    changed = true
                }
            }
            state.notices += conflicts
            return conflicts.isEmpty && !changed ? nil : state.signal
        }
        if let (signal, queue) = signal { queue.async(execute: signal) }
    }

    /// The keys the prefix's schema as last read (kept in the copy) marks secret: none without a schema, `nil`
    /// when it cannot be read (then no key can be told not secret).
    private func secretNamesOfSchema() -> Set<String>? {
        guard let bytes = state.withLock({ $0.schema }) else { return [] }
        do {
            return Set(try Defaults.Schema(parsing: String(decoding: bytes, as: UTF8.self)).secretKeyNames)
        } catch {
            return nil
        }
    }

    /// After an outage: sends the kept changes, reads the prefix again for the store (which tells observers what
    /// differs), and ends staleness.
    ///
    /// - Throws: What the read throws; the wait for etcd then goes on.
    func catchUp() async throws {
        guard state.withLock({ $0.isStale || !$0.offline.isEmpty }) else { return }
        let outcome = try await Offload.run { self.writing.withLock { _ in self.sendOffline() } }
        if outcome == .noEndpoint { throw StillNoEndpoint() }
        try await reloadAfterCompaction()
        state.withLock { state in
            state.isStale = false
            state.reportedOffline = false
        }
    }
}
