import CodableDefaults

/// A key's schema (a property of a ``CodableDefaults/Defaults/Schema``) in words, as `describe` prints it.
enum SchemaText {
    /// The key's type: `number`, `string or null`, `array of string`, `object (members: a, b)`; `nil` when the
    /// schema says none.
    static func type(of property: JSONValue) -> String? {
        guard case .object(let members) = property else { return nil }
        let names: [String]
        switch members["type"] {
        case .string(let name)?: names = [name]
        case .array(let list)?: names = list.compactMap { if case .string(let name) = $0 { name } else { nil } }
        default: return nil
        }
        var text = names.joined(separator: " or ")
        if names.contains("array"), let items = members["items"], let element = type(of: items) {
            text += " of \(element)"
        }
        if names.contains("object"), case .object(let properties)? = members["properties"], !properties.isEmpty {
            let sorted = properties.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            text += " (members: " + sorted.map(KeyText.line).joined(separator: ", ") + ")"
        } else if names.contains("object"), let additional = members["additionalProperties"],
            let element = type(of: additional)
        {
            text += " of \(element) values"
        }
        return text
    }

    /// The rules the key's schema states, in words, in a fixed order: allowed values, bounds, then the rules of
    /// the program's own that the schema names in `x-rules` (which no schema tool checks).
    static func rules(of property: JSONValue) -> [String] {
        guard case .object(let members) = property else { return [] }
        var rules: [String] = []
        if case .array(let values)? = members["enum"] {
            rules.append("one of " + values.map(JSONText.compact).joined(separator: ", "))
        }
        if let value = members["const"] { rules.append("equal to " + JSONText.compact(value)) }
        let phrased: [(keyword: String, phrase: (String) -> String)] = [
            ("minimum", { "at least \($0)" }), ("exclusiveMinimum", { "more than \($0)" }),
            ("maximum", { "at most \($0)" }), ("exclusiveMaximum", { "less than \($0)" }),
            ("minLength", { "at least \($0) characters long" }), ("maxLength", { "at most \($0) characters long" }),
            ("minItems", { "at least \($0) elements" }), ("maxItems", { "at most \($0) elements" }),
            ("minProperties", { "at least \($0) members" }), ("maxProperties", { "at most \($0) members" }),
        ]
        for (keyword, phrase) in phrased {
            if let value = members[keyword] { rules.append(phrase(JSONText.compact(value))) }
        }
        if members["uniqueItems"] == .bool(true) { rules.append("no repeated elements") }
        if case .array(let own)? = members["x-rules"] {
            for case .string(let rule) in own { rules.append(rule + " (the program's own rule; not checked here)") }
        }
        return rules
    }

    /// The key's description (`description`), if any.
    static func description(of property: JSONValue) -> String? {
        guard case .object(let members) = property, case .string(let text)? = members["description"] else {
            return nil
        }
        return text
    }

    /// The key's default (`default`), if the schema gives one.
    static func defaultValue(of property: JSONValue) -> JSONValue? {
        guard case .object(let members) = property else { return nil }
        return members["default"]
    }
}
