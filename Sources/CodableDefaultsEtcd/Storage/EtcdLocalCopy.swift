import CodableDefaults

/// A change made while no etcd endpoint answered, kept in the local copy until it is sent.
struct OfflineChange: Sendable, Equatable {
    /// The new value, compact JSON; `nil` for a removal.
    var value: [UInt8]?
    /// The key's revision the change was made on (its `mod_revision` as last known; 0: it had no value): etcd
    /// must still hold that revision when the change is sent, or the change is a conflict.
    var base: Int64
    /// Whether it is a secret key's change: its values are quoted in no message.
    var secret: Bool
    /// The values (`nil`: a removal) this store sent for the key after ``base`` without learning whether etcd
    /// applied them (no answer came): finding one of them in etcd is finding this store's own write, not another
    /// writer's.
    var unconfirmed: [[UInt8]?] = []
}

/// What an etcd store's local copy holds: the prefix's members as of a revision, with each member's revision, and
/// the changes made while no endpoint answered.
///
/// The file is JSON, written and read whole:
///
/// ```json
/// {"codableDefaultsEtcdCopy": 1, "prefix": "myservice/", "revision": 42,
///  "members": [["volume", 40, "0.8"]],
///  "offline": [["volume", 40, "0.9", false], ["theme", 0, null, false]],
///  "schema": null}
/// ```
///
/// A member is `[name, revision, value]`; an offline change `[name, base revision, value or null for a removal, secret,
/// [values sent without an answer]]` (a file without the last field reads as none); `schema` is the prefix's schema as
/// text, when it was read. Values are kept as the exact compact JSON text etcd holds, in a JSON string, so that a value
/// read back is byte for byte the one written.
struct EtcdLocalCopy: Sendable, Equatable {
    /// The format's version; a file of another version is refused.
    static let version = 1

    /// The prefix the copy is of.
    var prefix: String
    /// The revision up to which every change of the prefix is in ``members``.
    var revision: Int64
    /// Each member's value (compact JSON) and revision, by name (its UTF-8 bytes).
    var members: [[UInt8]: (value: [UInt8], revision: Int64)]
    /// The changes not yet sent, by name.
    var offline: [[UInt8]: OfflineChange]
    /// The prefix's schema (``CodableDefaults/Defaults/publishSchema(for:title:)``) as last read, if it was.
    var schema: [UInt8]?

    static func == (lhs: EtcdLocalCopy, rhs: EtcdLocalCopy) -> Bool {
        lhs.prefix == rhs.prefix && lhs.revision == rhs.revision && lhs.offline == rhs.offline
            && lhs.schema == rhs.schema
            && lhs.members.count == rhs.members.count
            && lhs.members.allSatisfy { name, member in
                rhs.members[name].map { $0.value == member.value && $0.revision == member.revision } ?? false
            }
    }

    /// The file's text: one line per member and per change, sorted by name.
    func encoded() -> [UInt8] {
        func string(_ bytes: [UInt8]) -> String { JSONValue.string(String(decoding: bytes, as: UTF8.self)).description }
        let sortedMembers = members.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        let sortedOffline = offline.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var text = "{\"codableDefaultsEtcdCopy\": \(Self.version), \"prefix\": \(JSONValue.string(prefix)), "
        text += "\"revision\": \(revision),\n \"members\": ["
        text += sortedMembers.map { "\n  [\(string($0.key)), \($0.value.revision), \(string($0.value.value))]" }
            .joined(separator: ",")
        text += "],\n \"offline\": ["
        text += sortedOffline.map { name, change in
            let unconfirmed = change.unconfirmed.map { $0.map(string) ?? "null" }.joined(separator: ", ")
            return "\n  [\(string(name)), \(change.base), \(change.value.map(string) ?? "null"), \(change.secret), "
                + "[\(unconfirmed)]]"
        }.joined(separator: ",")
        text += "],\n \"schema\": \(schema.map(string) ?? "null")}\n"
        return Array(text.utf8)
    }

    /// Reads a file's text.
    ///
    /// - Throws: ``CodableDefaults/DefaultsError/Code-swift.struct/invalidJSON`` (with line and column) when it is not
    ///   JSON; ``CodableDefaults/DefaultsError/Code-swift.struct/decodingFailed`` when it is not a local copy of this
    ///   version, or one of another prefix than `prefix`. The errors carry no path: the caller adds it.
    static func decoded(_ bytes: [UInt8], prefix: String, maxDepth: Int) throws(DefaultsError) -> EtcdLocalCopy {
        guard let text = String(utf8Validating: bytes) else {
            throw DefaultsError(.invalidJSON, "the local copy is not valid UTF-8")
        }
        let json = try JSONValue(parsing: text)
        func bad(_ what: String) -> DefaultsError {
            DefaultsError(.decodingFailed, "not a local copy of an etcd store of this version: \(what)")
        }
        guard case .object(let top) = json else { throw bad("not a JSON object") }
        guard case .number(let version)? = top["codableDefaultsEtcdCopy"], version.intValue == Self.version else {
            throw bad("\"codableDefaultsEtcdCopy\" is not \(Self.version)")
        }
        guard case .string(let copied)? = top["prefix"] else { throw bad("no \"prefix\"") }
        guard copied == prefix else {
            throw DefaultsError(
                .decodingFailed,
                "the local copy is of the prefix \(JSONValue.string(copied)), not \(JSONValue.string(prefix))")
        }
        guard case .number(let revisionNumber)? = top["revision"], let revision = revisionNumber.int64Value else {
            throw bad("no whole \"revision\"")
        }
        guard case .array(let memberRows)? = top["members"], case .array(let offlineRows)? = top["offline"] else {
            throw bad("no \"members\" and \"offline\" arrays")
        }
        func value(_ json: JSONValue, _ row: Int) throws(DefaultsError) -> [UInt8] {
            guard case .string(let text) = json else { throw bad("row \(row): a value is not a string") }
            switch StorageValue.compact(Array(text.utf8), maxDepth: maxDepth) {
            case .success(let compact): return compact
            case .failure(let error): throw bad("row \(row): a value is not JSON (\(error.message))")
            }
        }
        var members: [[UInt8]: (value: [UInt8], revision: Int64)] = [:]
        for (index, row) in memberRows.enumerated() {
            guard case .array(let fields) = row, fields.count == 3, case .string(let name) = fields[0],
                case .number(let number) = fields[1], let memberRevision = number.int64Value
            else { throw bad("member \(index + 1) is not [name, revision, value]") }
            members[Array(name.utf8)] = (try value(fields[2], index + 1), memberRevision)
        }
        var offline: [[UInt8]: OfflineChange] = [:]
        for (index, row) in offlineRows.enumerated() {
            guard case .array(let fields) = row, fields.count == 4 || fields.count == 5,
                case .string(let name) = fields[0],
                case .number(let number) = fields[1], let base = number.int64Value, case .bool(let secret) = fields[3]
            else {
                throw bad("offline change \(index + 1) is not [name, base, value or null, secret, unconfirmed values]")
            }
            let changed: [UInt8]? = fields[2] == .null ? nil : try value(fields[2], index + 1)
            var unconfirmed: [[UInt8]?] = []
            if fields.count == 5 {
                guard case .array(let values) = fields[4] else {
                    throw bad("offline change \(index + 1): its unconfirmed values are not an array")
                }
                for sent in values { unconfirmed.append(sent == .null ? nil : try value(sent, index + 1)) }
            }
            offline[Array(name.utf8)] = OfflineChange(
                value: changed, base: base, secret: secret, unconfirmed: unconfirmed)
        }
        var schema: [UInt8]?
        switch top["schema"] {
        case .string(let text)?: schema = Array(text.utf8)
        case .null?, nil: schema = nil
        default: throw bad("\"schema\" is not a string or null")
        }
        return EtcdLocalCopy(prefix: prefix, revision: revision, members: members, offline: offline, schema: schema)
    }
}
