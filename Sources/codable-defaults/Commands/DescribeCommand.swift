import CodableDefaults

/// `describe FILE [KEY]`: what each key is, from the store's schema, and the value reads give with where it
/// comes from.
struct DescribeCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "describe",
        origin: .added(),
        abstract: "Print each key's type, default, rules and description, and the value reads give and its source.",
        store: [.etcd, .layers, .schema], arguments: [.key("KEY", .optional)],
        discussion: [
            "Describes every key the schema lists and every key with a value (stored, or in a layer given with "
                + "the layer options), sorted by key; with KEY, that key alone (a KEY neither listed nor with a "
                + "value exits with 3). The schema is the store's own (settings.schema.json beside settings.json; "
                + "on etcd the prefix's schema key) or the file --schema names; without one, only the values "
                + "are described.",
            "For each key, its name on a line, then indented lines: 'type:', 'default:', 'rules:' (the schema's "
                + "rules in words; a rule of the program's own, named in the schema's x-rules, is said not to be "
                + "checked here), 'secret: yes', 'description:', and 'value:', the value reads give and, in "
                + "parentheses, where it is (stored PATH, environment NAME, file PATH, as 'explain' says), or "
                + "the schema's default when nothing has a value. A line the schema has nothing for is left out. "
                + "A secret value is printed as <secret> unless --show-secrets is given.",
            "  volume\n"
                + "    type: number\n"
                + "    default: 0.5\n"
                + "    rules: at least 0, at most 1\n"
                + "    description: Playback volume.\n"
                + "    value: 0.8 (stored /home/ann/settings.json)",
        ],
        examples: [
            "codable-defaults describe settings.json",
            "codable-defaults describe settings.json volume --env-prefix MYSERVICE_",
            "codable-defaults describe --etcd http://127.0.0.1:2379 --prefix myservice/",
        ],
        exitCases: [.keyNotFound("describe KEY")])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key to describe, or `nil` for every key.
    let key: String?

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = arguments.takeOptional()
    }

    func run(in tool: Tool) throws(ToolError) {
        if let key { try KeyText.checkLength(key) }
        let opened = try tool.open(store)
        let inEffect = opened.schema
        var keys: [String]
        if let key {
            keys = [key]
        } else {
            keys = opened.defaults.effectiveKeys.filter { $0 != Defaults.schemaVersionKey }
            for name in inEffect?.schema.keyNames ?? []
            where !keys.contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
                keys.append(name)
            }
            keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
        var text = ""
        for name in keys {
            let property = inEffect?.schema.property(named: name)
            let values = try tool.layeredValues(opened, key: name)
            if key != nil && property == nil && values.isEmpty {
                let listed = inEffect.map { "; the schema \($0.location) does not list it" } ?? ""
                throw ToolError(
                    .keyNotFound,
                    "\(opened.path): key \(KeyText.message(name)): no value stored or in a layer\(listed)")
            }
            text += describe(name, property: property, secret: inEffect?.schema.isSecret(name) == true, values)
        }
        if keys.isEmpty {
            let schemaNote = inEffect.map { "; the schema \($0.location) lists none" } ?? ""
            text = "(no keys: nothing stored\(schemaNote))\n"
        }
        try Output.print(text)
    }

    /// The lines of one key.
    private func describe(
        _ name: String, property: JSONValue?, secret schemaSecret: Bool, _ values: [Defaults.LayeredValue]
    ) -> String {
        var lines = [KeyText.line(name)]
        let effective = values.first
        if let property {
            if let type = SchemaText.type(of: property) { lines.append("type: " + type) }
            if let value = SchemaText.defaultValue(of: property) { lines.append("default: " + JSONText.compact(value)) }
            let rules = SchemaText.rules(of: property)
            if !rules.isEmpty { lines.append("rules: " + rules.joined(separator: ", ")) }
        } else if let effective {
            let note = store.schema?.isOff == true ? "" : "; not in the schema"
            lines.append("type: \(JSONText.typeName(of: effective.value)) (of the value\(note))")
        }
        let secret = schemaSecret || effective?.isSecret == true
        if secret { lines.append("secret: yes") }
        if let property, let summary = SchemaText.description(of: property) { lines.append("description: " + summary) }
        if let effective {
            let shown = secret && !store.layers.showSecrets ? Tool.secretPlaceholder : JSONText.compact(effective.value)
            lines.append("value: \(shown) (\(Tool.sourceText(effective.source)))")
        } else if let property, let value = SchemaText.defaultValue(of: property) {
            lines.append("value: \(JSONText.compact(value)) (the schema's default: nothing has a value)")
        } else {
            lines.append("value: (none: nothing has a value)")
        }
        return lines.enumerated().map { $0.offset == 0 ? $0.element + "\n" : "  " + KeyText.line($0.element) + "\n" }
            .joined()
    }
}
