import CodableDefaults

/// The JSON texts the tool prints.
enum JSONText {
    /// The value as compact JSON with sorted keys, on one line.
    static func compact(_ value: JSONValue) -> String {
        value.description
    }

    /// A store's top-level members pretty-printed, in the order given: nested members sorted by key (by UTF-8
    /// bytes), two spaces per level, as `jq` does. A list rather than a `JSONValue.object`: the dictionary's
    /// `String` keys would merge two names that differ only in Unicode normalization, which the store keeps
    /// apart.
    static func pretty(members: [(key: String, value: JSONValue)]) -> String {
        guard !members.isEmpty else { return "{}" }
        var text = "{\n"
        for (index, member) in members.enumerated() {
            text += (index == 0 ? "" : ",\n") + "  " + compact(.string(member.key)) + ": "
            appendPretty(member.value, indent: "  ", to: &text)
        }
        return text + "\n}"
    }

    /// One value pretty-printed as ``pretty(members:)`` prints a member's value: object members sorted by key
    /// (by UTF-8 bytes), two spaces per level; a scalar or an empty array or object on one line.
    static func pretty(_ value: JSONValue) -> String {
        var text = ""
        appendPretty(value, indent: "", to: &text)
        return text
    }

    /// The store file's format, written by the library's own writer: one member per line, sorted by key (by
    /// UTF-8 bytes), each value compact, a final newline.
    static func storeFile(_ members: [(key: String, value: JSONValue)]) -> String {
        let image = FileImage(members: members.lazy.map { (name: $0.key, value: Array(compact($0.value).utf8)) })
        return String(decoding: image.bytes, as: UTF8.self)
    }

    /// The name of a value's type, as `defaults(1)` names it and `read-type` prints it: `integer`, `float`,
    /// `boolean`, `string`, `array`, `dictionary` or `null`. A number written with a `.` or an exponent is a
    /// float.
    static func typeName(of value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let number):
            return number.description.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? "float" : "integer"
        case .string: return "string"
        case .array: return "array"
        case .object: return "dictionary"
        }
    }

    /// The keys of `members` in the store file's order: by UTF-8 bytes.
    static func sortedKeys(_ members: [String: JSONValue]) -> [String] {
        members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func appendPretty(_ value: JSONValue, indent: String, to text: inout String) {
        let inner = indent + "  "
        switch value {
        case .object(let members) where !members.isEmpty:
            text += "{\n"
            for (index, key) in sortedKeys(members).enumerated() {
                text += (index == 0 ? "" : ",\n") + inner + compact(.string(key)) + ": "
                appendPretty(members[key]!, indent: inner, to: &text)
            }
            text += "\n" + indent + "}"
        case .array(let elements) where !elements.isEmpty:
            text += "[\n"
            for (index, element) in elements.enumerated() {
                text += (index == 0 ? "" : ",\n") + inner
                appendPretty(element, indent: inner, to: &text)
            }
            text += "\n" + indent + "]"
        default:
            text += compact(value)
        }
    }
}
