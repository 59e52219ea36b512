extension Store {
    /// Refuses, before the migrations run, a file two of whose top-level members have names that differ only
    /// in Unicode normalization (such as `"\u00E9"` and `"e\u0301"`).
    ///
    /// The file holds them as two members, but the migrations see the values as one `[String: JSONValue]`,
    /// whose `String` keys compare by canonical equivalence: one value would silently replace the other.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/migrationFailed`` naming both spellings, escaped.
    static func refuseCanonicalCollisions(_ members: [DocumentMember], path: String) throws(DefaultsError) {
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
    static func migrationValue(_ member: DocumentMember, path: String) throws(DefaultsError) -> JSONValue {
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
