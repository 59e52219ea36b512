import CodableDefaults

/// `delete FILE KEY... [--force]` or `delete FILE --all`: removes keys from the store.
struct DeleteCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "delete",
        origin: .defaults,
        abstract: "Remove keys from the store (with --all, every key).",
        arguments: [.store, .key("KEY", .oneOrMore)],
        options: StoreLocation.options + SchemaOptions.options + [
            OptionDeclaration(name: "all", valueName: nil, summary: "Remove every key."),
            OptionDeclaration(name: "force", valueName: nil, summary: "Ignore KEYs that have no stored value."),
            DryRun.option,
        ],
        discussion: [
            "A KEY with no stored value exits with 3 and changes nothing, unless --force is given. With a schema "
                + "(see 'help write'), removing a key it lists in \"required\" exits with 2 and removes nothing.",
            DryRun.helpParagraph,
        ],
        examples: [
            "codable-defaults delete settings.json volume token", "codable-defaults delete settings.json --all",
            "codable-defaults delete settings.json --all --dry-run",
        ],
        exitCases: [.keyNotFound("delete KEY without --force"), .notDurable])

    /// The store to change.
    let location: StoreLocation
    /// The keys to remove (none with `--all`).
    let keys: [String]
    /// `--all`: remove every key.
    let all: Bool
    /// `--force`: ignore keys with no stored value.
    let force: Bool
    /// The schema whose `required` keys may not be removed.
    let schema: SchemaOptions

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        location = try StoreLocation(parsing: &arguments)
        all = arguments.flag("all")
        keys = arguments.takeAll()
        if all && !keys.isEmpty {
            throw .usage("--all removes every key: give either KEY... or --all, not both")
        }
        if !all && keys.isEmpty {
            throw .usage("missing KEY (or --all to remove every key)")
        }
        force = arguments.flag("force")
        schema = try SchemaOptions(parsing: arguments)
    }

    func run(in tool: Tool) throws(ToolError) {
        for key in keys {
            try tool.refuseReserved(key)
            try KeyText.checkLength(key)
        }
        let defaults = try tool.open(location, schema: schema, writes: true)
        let removed = all ? defaults.keys : keys
        if all {
            defaults.removeAll()
        } else {
            if !force, let missing = keys.first(where: { !defaults.hasStoredValue(forKey: $0) }) {
                throw ToolError(
                    .keyNotFound,
                    "\(tool.path(of: defaults)): key \(KeyText.message(missing)): no value stored; nothing was deleted")
            }
            for key in keys { defaults.removeValue(forKey: key) }
        }
        try tool.checkSchema(defaults, changes: removed.map { ($0, nil) })
        try tool.save(defaults)
    }
}
