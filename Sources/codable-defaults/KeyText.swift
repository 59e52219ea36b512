import CodableDefaults

/// How the tool prints keys: in the line-oriented output of `keys` and `watch`, and in messages.
enum KeyText {
    /// `key` as `keys` and `watch` print it: as it is, unless that would be ambiguous in a line of output.
    ///
    /// A key that is empty, starts with `"`, or holds a control character (a line break, a tab…) or a
    /// line or paragraph separator is printed as a JSON string instead, in quotes and with JSON escapes. So a
    /// line that starts with `"` is always a JSON string, and any other line is the key as it is.
    static func line(_ key: String) -> String {
        needsQuoting(key) ? quoted(key) : key
    }

    /// `key` for a message: a JSON string in quotes; a key of more than 64 characters is shortened to its first
    /// 40, `…` and its length in bytes (as the library's errors show keys).
    static func message(_ key: String) -> String {
        guard key.count > 64 else { return quoted(key) }
        return String(quoted(String(key.prefix(40))).dropLast()) + "…\" (\(key.utf8.count) bytes)"
    }

    /// Whether `key` printed as it is could be misread in a line of output.
    static func needsQuoting(_ key: String) -> Bool {
        key.isEmpty || key.hasPrefix("\"") || key.unicodeScalars.contains(where: isEscaped)
    }

    /// Refuses a KEY argument longer than the library's limit: no stored key can be that long, and a store
    /// refuses to set it.
    static func checkLength(_ key: String, command: Command) throws(ToolError) {
        let limit = Defaults.Options.default.maximumKeyLength
        guard key.utf8.count > limit else { return }
        throw .usage(
            "KEY \(message(key)) is over the limit of \(limit) bytes", command: command)
    }

    /// `key` as a JSON string, with `"`, `\`, control characters and line or paragraph separators escaped.
    private static func quoted(_ key: String) -> String {
        var text = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where isEscaped(scalar):
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// Whether a character is written as an escape: C0 and C1 controls, DEL, U+2028 and U+2029.
    private static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
            || scalar.value == 0x2029
    }
}
