import CodableDefaults

/// `keys FILE`: the stored keys (with layers, every listed key), one per line, in the file's order.
struct KeysCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "keys",
        origin: .added(),
        abstract: "Print the stored keys, one per line, in the file's order.",
        arguments: [.store],
        options: StoreLocation.options + StoreLocation.etcdOptions + LayerOptions.options,
        discussion: [
            "A key is printed as it is, unless it is empty, starts with a double quote, or holds a control "
                + "character (a line break, a tab...) or U+2028/U+2029: such a key is printed as a JSON string, "
                + "in double quotes with JSON escapes (\"a\\nb\"), so each line is one key. A line that starts "
                + "with a double quote is always a JSON string."
        ],
        examples: [
            "codable-defaults keys settings.json"
        ])

    /// The store to list.
    let location: StoreLocation
    /// The layers read around the store.
    let layers: LayerOptions

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        location = try StoreLocation(parsing: &arguments)
        layers = try LayerOptions(parsing: arguments)
    }

    func run(in tool: Tool) throws(ToolError) {
        let defaults = try tool.open(location, layers: layers)
        let keys = layers.isEmpty ? defaults.keys : defaults.effectiveKeys
        try Output.print(keys.map { KeyText.line($0) + "\n" }.joined())
    }
}
