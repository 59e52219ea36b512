/// How a key is written in an error's ``DefaultsError/description``: as a JSON string (so a quote, a
/// backslash or a line break in it cannot break the one-line message), and shortened when long.
enum KeyDescription {
    /// Keys of more characters than this are shortened.
    static let longKey = 64
    /// How many characters of a long key are shown.
    static let shownCharacters = 40

    /// `"key"` with JSON escapes; for a key over ``longKey`` characters, its first ``shownCharacters``,
    /// `…`, and its length: `"aaaa…" (1025 bytes)`.
    static func quoted(_ key: String) -> String {
        guard key.count > longKey else { return "\"" + escaped(Substring(key)) + "\"" }
        return "\"" + escaped(key.prefix(shownCharacters)) + "…\" (\(key.utf8.count) bytes)"
    }

    /// The text with `"`, `\`, control characters and line or paragraph separators escaped as in JSON.
    private static func escaped(_ text: Substring) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{00}"..."\u{1F}", "\u{7F}"..."\u{9F}", "\u{2028}", "\u{2029}":
                let hex = String(scalar.value, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
