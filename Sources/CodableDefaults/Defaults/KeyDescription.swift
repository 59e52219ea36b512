/// How a key is written in an error's ``DefaultsError/description``, and by the `codable-defaults` tool: as a
/// JSON string (so a quote, a backslash or a line break in it cannot break a one-line message), and shortened
/// when long. Pure functions of their argument, callable from any thread.
package enum KeyDescription {
    /// Keys of more characters than this are shortened.
    static let longKey = 64
    /// How many characters of a long key are shown.
    static let shownCharacters = 40

    /// `"key"` with JSON escapes; for a key over ``longKey`` characters, its first ``shownCharacters``,
    /// `…`, and its length: `"aaaa…" (1025 bytes)`.
    package static func quoted(_ key: String) -> String {
        guard key.count > longKey else { return whole(key) }
        return "\"" + escaped(key.prefix(shownCharacters), asciiOnly: false) + "…\" (\(key.utf8.count) bytes)"
    }

    /// `"key"`, whole, with `"`, `\`, control characters and line or paragraph separators escaped as in JSON
    /// (see ``isEscaped(_:)``).
    package static func whole(_ key: String) -> String {
        "\"" + escaped(Substring(key), asciiOnly: false) + "\""
    }

    /// `name` quoted, whole, with every character outside printable ASCII as a JSON `\uXXXX` escape (of its
    /// UTF-16 code units), so that two spellings of one text look different in a message: `"\u00E9"` and
    /// `"e\u0301"`.
    static func spelled(_ name: String) -> String {
        "\"" + escaped(Substring(name), asciiOnly: true) + "\""
    }

    /// Whether ``whole(_:)`` writes `scalar` as an escape: C0 and C1 controls, DEL, U+2028 and U+2029 (and
    /// `"` and `\`, with a backslash).
    package static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
            || scalar.value == 0x2029
    }

    /// The text with `"`, `\` and the characters of ``isEscaped(_:)`` escaped as in JSON; with `asciiOnly`,
    /// every character outside printable ASCII too.
    private static func escaped(_ text: Substring, asciiOnly: Bool) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isEscaped(scalar):
                appendEscape(scalar.value, to: &result)
            case _ where asciiOnly && !scalar.isASCII:
                for unit in String(scalar).utf16 { appendEscape(UInt32(unit), to: &result) }
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Appends `\u` and `unit` as four hexadecimal digits (uppercase, as `"\u00E9"`).
    private static func appendEscape(_ unit: UInt32, to result: inout String) {
        let hex = String(unit, radix: 16, uppercase: true)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
