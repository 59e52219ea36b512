import Foundation

/// One key of etcd with its value and revisions.
package struct EtcdKeyValue: Sendable, Hashable {
    /// The key's bytes.
    package var key: [UInt8]
    /// The value's bytes (empty when the value is empty).
    package var value: [UInt8]
    /// The revision of the key's last change.
    package var modRevision: Int64
    /// The revision that created the key (since it was last absent).
    package var createRevision: Int64

    /// Makes a key-value.
    package init(key: [UInt8], value: [UInt8], modRevision: Int64, createRevision: Int64) {
        self.key = key
        self.value = value
        self.modRevision = modRevision
        self.createRevision = createRevision
    }
}

/// The keys of a range, and the revision of the cluster they were read at.
package struct EtcdRange: Sendable, Equatable {
    /// The keys, in etcd's order (by key bytes).
    package var keyValues: [EtcdKeyValue]
    /// The cluster's revision when the range was read: a watch from `revision + 1` misses no later change.
    package var revision: Int64
}

/// A condition of a transaction: the key's last change is at `modRevision` (`0`: the key is absent).
package struct EtcdCompare: Sendable, Equatable {
    /// The key compared.
    package var key: [UInt8]
    /// The mod revision it must have; `0` means the key must not exist.
    package var modRevision: Int64

    /// Makes a compare of `key`'s mod revision with `modRevision`.
    package init(key: [UInt8], modRevision: Int64) {
        self.key = key
        self.modRevision = modRevision
    }
}

/// A change that a transaction makes.
package enum EtcdOperation: Sendable, Equatable {
    /// Sets `key` to `value`.
    case put(key: [UInt8], value: [UInt8])
    /// Removes `key` (nothing happens when it is absent).
    case delete(key: [UInt8])
}

/// A read of one key as it was at a past revision, for ``EtcdClient``'s read of several at once.
package struct EtcdRead: Sendable, Equatable {
    /// The key read.
    package var key: [UInt8]
    /// The revision to read it at: the key's value after every change up to it (`1` or more).
    package var revision: Int64
    /// Whether to leave the value out: only whether the key existed (and its revisions) is read.
    package var keysOnly: Bool

    /// A read of `key` at `revision`, its value left out when `keysOnly`.
    package init(key: [UInt8], revision: Int64, keysOnly: Bool = false) {
        self.key = key
        self.revision = revision
        self.keysOnly = keysOnly
    }
}

/// What a transaction did.
package struct EtcdTransactionResult: Sendable, Equatable {
    /// Whether every compare held, so that the operations were applied.
    package var succeeded: Bool
    /// The cluster's revision after the transaction (unchanged when it did not succeed).
    package var revision: Int64
}

// Each call blocks the calling thread until etcd answers (or every endpoint failed); its `async` form, below,
// waits without blocking a thread.
extension EtcdClient {
    /// Every key that starts with `prefix` (every key of the cluster when `prefix` is empty), with the revision it
    /// was read at, in one consistent (linearizable) read.
    ///
    /// - Parameters:
    ///   - prefix: The bytes every key read starts with.
    ///   - limit: At most this many keys (the first ones), or every key when `nil`.
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses.
    package func range(prefix: [UInt8], limit: Int64? = nil) throws -> EtcdRange {
        let request = Wire.RangeRequest(
            key: Self.rangeStart(prefix), rangeEnd: WireBytes(Self.rangeEnd(of: prefix)),
            limit: limit.map(WireInt64.init))
        let answer = try call("/v3/kv/range", request, as: Wire.RangeResponse.self)
        return EtcdRange(
            keyValues: (answer.kvs ?? []).map(EtcdKeyValue.init(wire:)), revision: answer.header.revision.value)
    }

    /// The key `key`, or `nil` when it is absent.
    ///
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses.
    package func get(_ key: [UInt8]) throws -> EtcdKeyValue? {
        try read(key).keyValue
    }

    /// The key `key` (`nil` when it is absent), and the cluster's revision it was read at: a change of the key
    /// with a later revision is newer than what was read.
    ///
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses.
    package func read(_ key: [UInt8]) throws -> (keyValue: EtcdKeyValue?, revision: Int64) {
        let answer = try call("/v3/kv/range", Wire.RangeRequest(key: WireBytes(key)), as: Wire.RangeResponse.self)
        return (answer.kvs?.first.map(EtcdKeyValue.init(wire:)), answer.header.revision.value)
    }

    /// Sets `key` to `value`; returns the revision of the change. It returns once etcd committed the change.
    ///
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses.
    @discardableResult
    package func put(_ key: [UInt8], _ value: [UInt8]) throws -> Int64 {
        let request = Wire.PutRequest(key: WireBytes(key), value: WireBytes(value))
        return try call("/v3/kv/put", request, as: Wire.HeaderResponse.self).header.revision.value
    }

    /// Removes `key`; returns how many keys were removed (0 or 1) and the cluster's revision after it.
    ///
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses.
    @discardableResult
    package func delete(_ key: [UInt8]) throws -> (deleted: Int64, revision: Int64) {
        let request = Wire.DeleteRangeRequest(key: WireBytes(key))
        let answer = try call("/v3/kv/deleterange", request, as: Wire.DeleteRangeResponse.self)
        return (answer.deleted?.value ?? 0, answer.header.revision.value)
    }

    /// Applies `operations` in one revision if every compare holds, else nothing; says which.
    ///
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses (for example a key changed twice in one
    ///   transaction: "duplicate key given in txn request").
    package func transaction(compares: [EtcdCompare], operations: [EtcdOperation]) throws
        -> EtcdTransactionResult
    {
        let request = Wire.TxnRequest(
            compare: compares.map { Wire.Compare(key: WireBytes($0.key), modRevision: WireInt64($0.modRevision)) },
            success: operations.map { operation in
                switch operation {
                case .put(let key, let value):
                    Wire.RequestOp(requestPut: Wire.PutRequest(key: WireBytes(key), value: WireBytes(value)))
                case .delete(let key):
                    Wire.RequestOp(requestDeleteRange: Wire.DeleteRangeRequest(key: WireBytes(key)))
                }
            })
        let answer = try call("/v3/kv/txn", request, as: Wire.TxnResponse.self)
        // etcd's JSON leaves out a `false` (a default value), so a missing `succeeded` means the compares failed.
        return EtcdTransactionResult(succeeded: answer.succeeded ?? false, revision: answer.header.revision.value)
    }

    /// Reads each key of `reads` as it was at its revision, in one read-only transaction (so at most etcd's
    /// `--max-txn-ops` reads, 128 by default); each answer is `nil` where the key was absent then.
    ///
    /// - Throws: ``EtcdError`` when no endpoint answers or etcd refuses, among others when a revision was compacted
    ///   away (``EtcdError/isCompactedRevision``): then nothing is read.
    package func read(_ reads: [EtcdRead]) throws -> [EtcdKeyValue?] {
        if reads.isEmpty { return [] }
        let request = Wire.TxnRequest(
            compare: [],
            success: reads.map { read in
                Wire.RequestOp(
                    requestRange: Wire.RangeRequest(
                        key: WireBytes(read.key), revision: WireInt64(max(1, read.revision)),
                        keysOnly: read.keysOnly ? true : nil))
            })
        let answer = try call("/v3/kv/txn", request, as: Wire.TxnResponse.self)
        let responses = answer.responses ?? []
        guard responses.count == reads.count else {
            throw EtcdError(
                .badResponse, endpoint: preferredEndpoint.absoluteString,
                message: "/v3/kv/txn: \(responses.count) answers to \(reads.count) reads")
        }
        return responses.map { $0.responseRange?.kvs?.first.map(EtcdKeyValue.init(wire:)) }
    }

    // The same calls for `async` callers: each waits without blocking its task's thread (see `Offload`).

    /// ``range(prefix:limit:)``, for `async` callers.
    package func range(prefix: [UInt8], limit: Int64? = nil) async throws -> EtcdRange {
        try await Offload.run { try self.range(prefix: prefix, limit: limit) }
    }

    /// ``get(_:)``, for `async` callers.
    package func get(_ key: [UInt8]) async throws -> EtcdKeyValue? {
        try await Offload.run { try self.get(key) }
    }

    /// ``read(_:)``, for `async` callers.
    package func read(_ key: [UInt8]) async throws -> (keyValue: EtcdKeyValue?, revision: Int64) {
        try await Offload.run { try self.read(key) }
    }

    /// ``put(_:_:)``, for `async` callers.
    @discardableResult
    package func put(_ key: [UInt8], _ value: [UInt8]) async throws -> Int64 {
        try await Offload.run { try self.put(key, value) }
    }

    /// ``delete(_:)``, for `async` callers.
    @discardableResult
    package func delete(_ key: [UInt8]) async throws -> (deleted: Int64, revision: Int64) {
        try await Offload.run { try self.delete(key) }
    }

    /// ``transaction(compares:operations:)``, for `async` callers.
    package func transaction(compares: [EtcdCompare], operations: [EtcdOperation]) async throws
        -> EtcdTransactionResult
    {
        try await Offload.run { try self.transaction(compares: compares, operations: operations) }
    }

    /// The first key of the range of `prefix`: the prefix itself, or the byte 0 (the first key) when it is empty.
    static func rangeStart(_ prefix: [UInt8]) -> WireBytes { WireBytes(prefix.isEmpty ? [0] : prefix) }

    /// The end (exclusive) of the keys that start with `prefix`: the prefix with its last byte below 0xFF
    /// incremented and the bytes after it dropped; the byte 0 ("to the end of the key space") when there is none.
    static func rangeEnd(of prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return [0]
    }
}

extension EtcdKeyValue {
    /// The key-value of the gateway's JSON (fields left out are at their default: empty, 0).
    init(wire: Wire.KeyValue) {
        self.init(
            key: wire.key?.bytes ?? [], value: wire.value?.bytes ?? [], modRevision: wire.modRevision?.value ?? 0,
            createRevision: wire.createRevision?.value ?? 0)
    }
}
