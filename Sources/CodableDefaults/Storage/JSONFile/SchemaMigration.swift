/// The migrations of ``Defaults/Options/migrations`` as a pure function from a file's members and the
/// steps to the migrated members. No I/O: ``JSONFileStorage`` reads, backs up and writes around it.
enum SchemaMigration {
    /// The steps sorted by version.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidArgument`` when a version is below 1 or two steps
    ///   have the same version.
    static func steps(_ migrations: [Defaults.Migration], path: String) throws(DefaultsError) -> [Defaults.Migration] {
        let steps = migrations.sorted { $0.version < $1.version }
        if let first = steps.first, first.version < 1 {
            throw DefaultsError(
                .invalidArgument, "migration versions start at 1, not \(first.version)", path: path)
        }
        for (step, next) in zip(steps, steps.dropFirst()) where step.version == next.version {
            throw DefaultsError(.invalidArgument, "two migrations have version \(step.version)", path: path)
        }
        return steps
    }

    /// Runs the steps newer than the members' schema version. Returns that version and the migrated members
    /// (sorted by name bytes, the reserved member holding the last step's version), or `nil` when the members
    /// are at the last step's version already.
    ///
    /// A member whose value the steps leave as it was keeps its original bytes (`1.50`, escapes and all);
    /// values are read and written by the store's own scanner and writer, so numbers keep their literals.
    ///
    /// - Throws: ``DefaultsError``: `unsupportedSchemaVersion` for a version newer than the steps know or not
    ///   a whole number, `migrationFailed` when a step throws, a value cannot be seen or written, or two names
    ///   differ only in Unicode normalization.
    static func run(
        _ steps: [Defaults.Migration], on members: [ParsedMember], maxDepth: Int, path: String
    ) throws(DefaultsError) -> (from: Int, members: [ParsedMember])? {
        guard let target = steps.last?.version else { return nil }
        let reserved = Defaults.schemaVersionKey
        var version = 0
        if let member = members.first(where: { $0.key == reserved }) {
            guard let number = Int(String(decoding: member.value, as: UTF8.self)), number >= 0 else {
                throw DefaultsError(
                    .unsupportedSchemaVersion, "the schema version is not a whole number", path: path, key: reserved)
            }
            version = number
        }
        if version > target {
            throw DefaultsError(
                .unsupportedSchemaVersion,
                "the file has schema version \(version), newer than this program's \(target); it is left as it is",
                path: path)
        }
        guard version < target else { return nil }
        try refuseCanonicalCollisions(members, path: path)

        var values: [String: JSONValue] = [:]
        var originals: [String: (value: JSONValue, fragment: [UInt8])] = [:]
        for member in members where member.key != reserved {
            let value = try migrationValue(member, path: path)
            values[member.key] = value
            originals[member.key] = (value, member.value)
        }
        for step in steps where step.version > version {
            do {
                try step.body(&values)
            } catch {
                throw DefaultsError(
                    .migrationFailed, "migration to schema version \(step.version) failed: \(error)", path: path)
            }
        }
        var migrated: [ParsedMember] = [ParsedMember(key: reserved, value: Array(String(target).utf8))]
        for (name, value) in values where name != reserved {
            let written: [UInt8]
            do {
                written = try JSONValueBytes.fragment(value, key: name, maxDepth: maxDepth)
            } catch {
                throw DefaultsError(.migrationFailed, error.message, path: path, key: name)
            }
            if let original = originals[name], JSONValueBytes.write(original.value).bytes == written {
                migrated.append(ParsedMember(key: name, value: original.fragment))
            } else {
                migrated.append(ParsedMember(key: name, value: written))
            }
        }
        migrated.sort { precedesInFile($0.key, $1.key) }
        return (version, migrated)
    }
    /// Refuses, before the migrations run, a file two of whose top-level members have names that differ only
    /// in Unicode normalization (such as `"\u00E9"` and `"e\u0301"`).
    ///
    /// The file holds them as two members, but the migrations see the values as one `[String: JSONValue]`,
    /// whose `String` keys compare by canonical equivalence: one value would silently replace the other.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/migrationFailed`` naming both spellings, escaped.
    static func refuseCanonicalCollisions(_ members: [ParsedMember], path: String) throws(DefaultsError) {
        var seen: [String: String] = [:]
        seen.reserveCapacity(members.count)
        for member in members {
            guard let earlier = seen.updateValue(member.key, forKey: member.key) else { continue }
            if sameBytes(earlier, member.key) { continue }
            throw DefaultsError(
                .migrationFailed,
                "the members \(KeyDescription.spelled(earlier)) and \(KeyDescription.spelled(member.key)) have "
                    + "names that differ only in Unicode normalization; the migrations see keys as Swift strings, "
                    + "which would merge them, so the file is left as it is (rename one of them)",
                path: path, key: member.key)
        }
    }

    /// A member's value as the migrations see it, a ``JSONValue``.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/migrationFailed`` naming the member, when one of its objects
    ///   has two names that differ only in Unicode normalization (the `JSONValue` would merge them); the file is
    ///   left as it is.
    static func migrationValue(_ member: ParsedMember, path: String) throws(DefaultsError) -> JSONValue {
        let result = member.value.withUnsafeBytes { bytes in
            Result { () throws(JSONValueBytes.NameCollision) in try JSONValueBytes.value(fromCompact: bytes) }
        }
        do {
            return try result.get()
        } catch {
            throw DefaultsError(
                .migrationFailed,
                error.message + "; the migrations cannot see this value, so the file is left as it is",
                path: path, key: member.key)
        }
    }
}
