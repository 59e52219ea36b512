import CodableDefaults

/// How the tool prints keys: in the line-oriented output of `keys` and `watch`, and in messages.
enum KeyText {
    /// `key` as `keys` and `watch` print it: as it is, unless that would be ambiguous in a line of output.
    ///
    /// A key that is empty, starts with `"`, or holds a control character (a line break, a tab…) or a
    /// line or paragraph separator is printed as a JSON string instead, in quotes and with JSON escapes. So a
    /// line that starts with `"` is always a JSON string, and any other line is the key as it is.
    static func line(_ key: String) -> String {
        needsQuoting(key) ? KeyDescription.whole(key) : key
    }

    /// `key` for a message: a JSON string in quotes; a key of more than 64 characters is shortened to its first
    /// 40, `…` and its length in bytes (as the library's errors show keys).
    static func message(_ key: String) -> String {
        KeyDescription.quoted(key)
    }

    /// Whether `key` printed as it is could be misread in a line of output.
    static func needsQuoting(_ key: String) -> Bool {
        key.isEmpty || key.hasPrefix("\"") || key.unicodeScalars.contains(where: KeyDescription.isEscaped)
    }

    /// Refuses a KEY argument longer than the library's limit, by the library's rule of which keys a store takes
    /// (`Defaults.refusalIfAny`): no stored key can be that long, and a store refuses to set it.
    static func checkLength(_ key: String) throws(ToolError) {
        let limit = Defaults.Options.default.maximumKeyLength
        guard Defaults.refusalIfAny(key, maximumLength: limit)?.code == .keyTooLong else { return }
        throw .usage("KEY \(message(key)) is over the limit of \(limit) bytes")
    }
}
