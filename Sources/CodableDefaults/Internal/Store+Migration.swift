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
                "the members \(escaped(earlier)) and \(escaped(member.key)) have names that differ only in "
                    + "Unicode normalization; the migrations see keys as Swift strings, which would merge them, so "
                    + "the file is left as it is (rename one of them)",
                path: path, key: member.key)
        }
    }

    /// `name` quoted, with every character outside printable ASCII as a JSON `\uXXXX` escape, so that two
    /// spellings of one text look different in a message.
    static func escaped(_ name: String) -> String {
        var text = "\""
        for unit in name.utf16 {
            if unit >= 0x20 && unit < 0x7F && unit != 0x22 && unit != 0x5C {
                text.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            } else {
                let hex = String(unit, radix: 16, uppercase: true)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return text + "\""
    }
}
