import CodableDefaults

/// `delete FILE KEY... [--force]` or `delete FILE --all`: removes keys from the store.
struct DeleteCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "delete",
        origin: .defaults,
        abstract: "Remove keys from the store (with --all, every key).",
        store: [.schema, .dryRun], arguments: [.key("KEY", .oneOrMore)],
        options: [
            OptionDeclaration(name: "all", valueName: nil, summary: "Remove every key."),
            OptionDeclaration(name: "force", valueName: nil, summary: "Ignore KEYs that have no stored value."),
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

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The keys to remove (none with `--all`).
    let keys: [String]
    /// `--all`: remove every key.
    let all: Bool
    /// `--force`: ignore keys with no stored value.
    let force: Bool

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        all = arguments.flag("all")
        keys = arguments.takeAll()
        if all && !keys.isEmpty {
            throw .usage("--all removes every key: give either KEY... or --all, not both")
        }
        if !all && keys.isEmpty {
            throw .usage("missing KEY (or --all to remove every key)")
        }
        force = arguments.flag("force")
    }

    func run(in tool: Tool) throws(ToolError) {
        for key in keys {
            try tool.refuseReserved(key)
            try KeyText.checkLength(key)
        }
        let opened = try tool.open(store, writes: true)
        let removed = all ? opened.defaults.keys : keys
        if all {
            opened.defaults.removeAll()
        } else {
            if !force, let missing = keys.first(where: { !opened.defaults.hasStoredValue(forKey: $0) }) {
                throw ToolError(
                    .keyNotFound,
                    "\(opened.path): key \(KeyText.message(missing)): no value stored; nothing was deleted")
            }
            for key in keys { opened.defaults.removeValue(forKey: key) }
        }
        try tool.checkSchema(opened, changes: removed.map { ($0, nil) })
        try tool.save(opened)
    }
}
