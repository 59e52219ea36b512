import CodableDefaults

/// `keys FILE`: the stored keys (with layers, every listed key), one per line, in the file's order.
struct KeysCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "keys",
        origin: .added(),
        abstract: "Print the stored keys, one per line, in the file's order.",
        store: [.etcd, .layers],
        discussion: [
            "A key is printed as it is, unless it is empty, starts with a double quote, or holds a control "
                + "character (a line break, a tab...) or U+2028/U+2029: such a key is printed as a JSON string, "
                + "in double quotes with JSON escapes (\"a\\nb\"), so each line is one key. A line that starts "
                + "with a double quote is always a JSON string."
        ],
        examples: [
            "codable-defaults keys settings.json"
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        let keys = store.layers.isEmpty ? opened.defaults.keys : opened.defaults.effectiveKeys
        try Output.print(keys.map { KeyText.line($0) + "\n" }.joined())
    }
}
