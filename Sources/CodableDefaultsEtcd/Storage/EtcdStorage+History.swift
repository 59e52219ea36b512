import CodableDefaults
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The history of a prefix's saves, kept by etcd itself.
///
/// Every transaction of a save (or of a modify, or a revert) also puts the prefix's record key, ``historyKey``: a
/// ``HistoryRecord`` line that says who saved, when, as what (a save, a revert), and which keys the transaction
/// changed, by name only. So a change and its record are one transaction, and the record's etcd revision (its
/// `mod_revision`) is the change's: that is the history's revision number (it only grows, is shared by every
/// writer of the cluster, and survives a member's restart). The values are not copied into the record: etcd keeps
/// every key's past values until it compacts them, so a key's value after the change is read at the record's
/// revision, and before it at the revision just before (a read-only transaction of reads at revisions). A secret
/// key's record says it changed; its values are never read (a read of the key alone says whether it was there).
///
/// The history is walked back from the record key's newest version through its earlier ones (each read at the
/// revision before the last one found), up to ``Defaults/Options/history``'s bounds. etcd bounds it too: a record
/// whose revisions etcd compacted away is where the history ends ("history before revision N is gone"). Nothing
/// else is stored: no copy of old values, no replication of etcd's own.
extension EtcdStorage {
    /// The reserved key of the prefix's history record: the prefix, the byte 0xFF, then `history`. A name that is
    /// not UTF-8 names no member, so the storage's reads and watch of the prefix leave it out (as any such key)
    /// and no store can set it; and it lies within the prefix, so a user etcd lets write the prefix may write it.
    package var historyKey: [UInt8] { prefix + [0xFF] + Array("history".utf8) }

    /// The bytes a record takes besides its changes (time, author, kind), at most, for sizing a transaction.
    static let recordOverhead = 1024

    /// The bytes `change` takes in a record, at most (its name quoted, each byte escaped at worst as `\u00XX`).
    static func recordBytes(of change: MemberChange) -> Int { change.name.utf8.count * 6 + 32 }

    /// The record line a transaction of `changes` puts as `kind`: their names (a secret key's marked so: its values
    /// are never read back), the time, this process; `nil` when the history is off or nothing is recorded (the
    /// reserved schema version is not a user's change). Its `revision` is 0: the record's etcd revision is its own.
    func record(of changes: [MemberChange], as kind: Defaults.HistoryEntry.Kind) -> [UInt8]? {
        guard historyLimit.isEnabled else { return nil }
        let recorded = changes.filter { $0.name != Defaults.schemaVersionKey }.map { change in
            let value: HistoryRecord.Value = change.secret ? .secret : .absent
            return HistoryRecord.Change(name: change.name, old: value, new: value)
        }
        if recorded.isEmpty { return nil }
        let milliseconds = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        return HistoryRecord(
            revision: 0, milliseconds: milliseconds, author: .current, kind: kind, changes: recorded
        ).line
    }

    /// The records, oldest first, walked back from the record key's newest version (see the type's comment): at
    /// most ``Defaults/Options/history``'s saves and bytes, and none etcd compacted away.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/readFailed`` when etcd cannot be read;
    ///   ``DefaultsError/Code-swift.struct/historyUnavailable`` when even the newest record's revisions were
    ///   compacted.
    package func history() throws(DefaultsError) -> StorageHistory {
        guard historyLimit.isEnabled else { return StorageHistory(records: [], isComplete: true) }
        var records: [HistoryRecord] = []
        var notices: [DefaultsError] = []
        var bytes = 0
        // Whether the walk stopped before the record key's first version (a bound, or compaction).
        var stoppedEarly = false
        var next: EtcdKeyValue?
        do {
            next = try client.get(historyKey)
        } catch {
            throw failure(.readFailed, "the history cannot be read", error)
        }
        walk: while let stored = next, records.count < historyLimit.maximumSaves {
            let revision = stored.modRevision
            var parsed: HistoryRecord?
            do throws(HistoryRecord.Malformed) {
                parsed = try HistoryRecord(line: stored.value)
            } catch {
                notices.append(
                    DefaultsError(
                        .invalidJSON,
                        "the history record of etcd revision \(revision) is skipped: it is not a record "
                            + "(\(error.message))", path: location))
            }
            let changes = parsed?.changes ?? []
            // The record before this one, then each changed key before and after the change.
            var reads = [EtcdRead(key: historyKey, revision: revision - 1)]
            for change in changes {
                let key = prefix + Array(change.name.utf8)
                let secret = change.old == .secret || change.new == .secret
                reads.append(EtcdRead(key: key, revision: revision - 1, keysOnly: secret))
                reads.append(EtcdRead(key: key, revision: revision, keysOnly: secret))
            }
            let answers: [EtcdKeyValue?]
            do {
                answers = try readPast(reads)
            } catch let error as EtcdError where error.isCompactedRevision {
                stoppedEarly = true
                if !records.isEmpty { break walk }
                throw DefaultsError(
                    .historyUnavailable,
                    "history before revision \(revision + 1) is gone: etcd compacted the revisions that held what "
                        + "the save of revision \(revision) changed", path: location)
            } catch {
                throw failure(.readFailed, "the history cannot be read", error)
            }
            next = revision > 1 ? answers[0] : nil
            guard var record = parsed else { continue }
            record.revision = Int(revision)
            record.changes = changes.indices.compactMap { index in
                recordedChange(changes[index], old: answers[1 + 2 * index], new: answers[2 + 2 * index])
            }
            // A save that changed no value (it put what the key held) records nothing.
            if record.changes.isEmpty { continue }
            let size = record.line.count + 1
            if !records.isEmpty && bytes + size > historyLimit.maximumBytes {
                stoppedEarly = true
                break
            }
            bytes += size
            records.append(record)
        }
        // A key one record marks secret (a writer that declared it so) has its values withheld in every record, those
        // of writers that did not know it too (the tool).
        let secret = records.reduce(into: Set<String>()) { $0.formUnion($1.secretNames) }
        for index in records.indices { records[index].withholdValues(of: secret) }
        return StorageHistory(
            records: records.reversed(), notices: notices, isComplete: next == nil && !stoppedEarly)
    }

    /// The change of a record as etcd's revisions tell it: `old` and `new` are the key read before and after; a
    /// secret key's values were not read (only whether it was there). `nil` when the value did not change.
    private func recordedChange(
        _ change: HistoryRecord.Change, old: EtcdKeyValue?, new: EtcdKeyValue?
    ) -> HistoryRecord.Change? {
        if change.old == .secret || change.new == .secret {
            if old == nil && new == nil { return nil }
            return HistoryRecord.Change(
                name: change.name, old: old == nil ? .absent : .secret, new: new == nil ? .absent : .secret)
        }
        // A value that is not JSON (another tool's) is none for the store: the history shows it as absent.
        func value(_ keyValue: EtcdKeyValue?) -> HistoryRecord.Value {
            guard let keyValue, case .success(let compact) = StorageValue.compact(keyValue.value, maxDepth: maxDepth)
            else { return .absent }
            return .json(compact)
        }
        let recorded = HistoryRecord.Change(name: change.name, old: value(old), new: value(new))
        return recorded.old == recorded.new ? nil : recorded
    }

    /// `reads`, in read-only transactions of at most ``maximumOperationsPerTransaction`` reads.
    private func readPast(_ reads: [EtcdRead]) throws -> [EtcdKeyValue?] {
        var answers: [EtcdKeyValue?] = []
        var start = reads.startIndex
        while start < reads.endIndex {
            let end = min(reads.endIndex, start + maximumOperationsPerTransaction)
            answers += try client.read(Array(reads[start..<end]))
            start = end
        }
        return answers
    }
}
