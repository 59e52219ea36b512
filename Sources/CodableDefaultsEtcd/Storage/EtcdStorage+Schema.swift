import CodableDefaults

/// The schema kept with a prefix (``Defaults/publishSchema(for:title:)``): the reserved key ``schemaKey``.
extension EtcdStorage {
    /// The reserved key of the prefix's schema: the prefix, the byte 0xFF, then `schema`. Like ``historyKey``, not
    /// UTF-8 (so never a member, and left out of the storage's reads and watch) and within the prefix (so whoever
    /// may write the prefix may publish it, and whoever may read it may read it).
    package var schemaKey: [UInt8] { prefix + [0xFF] + Array("schema".utf8) }

    /// The schema key's value; `nil` when it has none. One read of one key, from whichever endpoint answers; with
    /// a local copy, what the copy holds when none answers (and the copy keeps what was read).
    package func storedSchema() throws(DefaultsError) -> [UInt8]? {
        let schema: [UInt8]?
        do {
            schema = try client.get(schemaKey)?.value
        } catch let error as EtcdError where error.isEndpointDown && localCopy != nil {
            return state.withLock { $0.schema }
        } catch {
            throw failure(.readFailed, "the schema cannot be read", error)
        }
        if localCopy != nil {
            let changed = state.withLock { state in
                defer { state.schema = schema }
                return state.schema != schema
            }
            if changed { updateLocalCopy() }
        }
        return schema
    }

    /// Puts `bytes` under the schema key: durable once etcd answers (a majority of members wrote it).
    package func storeSchema(_ bytes: [UInt8]) throws(DefaultsError) {
        do {
            _ = try client.put(schemaKey, bytes)
        } catch {
            throw failure(.writeFailed, "the schema cannot be written", error)
        }
    }
}
