import CodableDefaults

/// `explain FILE KEY`: a line per domain or layer that has a value for KEY, in lookup order, the one reads give
/// marked with `*`; `* default<TAB>(none)` and exit status 3 when none has one.
struct ExplainCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "explain",
        origin: .added(),
        abstract: "Print every layer's value of KEY in lookup order, and which one reads give.",
        store: [.layers], arguments: [.key()],
        discussion: [
            LayerOptions.helpParagraph,
            "Prints a line per domain or layer that has a value for KEY, in lookup order: a mark ('* ' for "
                + "the value reads give, the first; two spaces for the others), where the value is, a tab, and "
                + "the value as compact JSON, or <secret> for a secret value without --show-secrets. Where "
                + "is one of: environment NAME (the variable), file PATH (an --override or --fallback file, or "
                + "a file of a --fallback-dir or --secret-dir), stored PATH (the store file). A NAME or PATH "
                + "that holds a tab, a line break or another control character is a JSON string, as 'keys' "
                + "prints such a key. When nothing has a value, the one line is '* default<TAB>(none)' (a "
                + "program reads its key's default, which the tool does not know) and the exit status is 3.",
            "  * environment MYSERVICE_VOLUME\t0.9\n"
                + "    stored /var/lib/myservice/settings.json\t0.8\n"
                + "    file /etc/myservice/defaults.json\t0.5",
        ],
        examples: [
            "codable-defaults explain settings.json volume --env-prefix MYSERVICE_ --fallback /etc/myservice/defaults.json",
            "codable-defaults explain settings.json token --secret-dir /run/secrets/myservice",
        ],
        exitCases: [.keyNotFound("explain KEY")])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key to explain.
    let key: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = try arguments.take("KEY")
    }

    func run(in tool: Tool) throws(ToolError) {
        try KeyText.checkLength(key)
        let opened = try tool.open(store)
        let values = try tool.layeredValues(opened, key: key)
        var text = ""
        for value in values {
            let shown =
                value.isSecret && !store.layers.showSecrets ? Tool.secretPlaceholder : JSONText.compact(value.value)
            text += (value.isEffective ? "* " : "  ") + Tool.sourceText(value.source) + "\t" + shown + "\n"
        }
        if values.isEmpty { text = "* default\t(none)\n" }
        try Output.print(text)
        if values.isEmpty {
            throw ToolError(
                .keyNotFound,
                "\(opened.path): key \(KeyText.message(key)): no value stored or in a layer; a program "
                    + "reads its key's default")
        }
    }
}
