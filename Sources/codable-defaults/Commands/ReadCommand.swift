import CodableDefaults

/// `read FILE [KEY]`: the whole store as pretty JSON, or one value as compact JSON; with layers, the effective
/// values.
struct ReadCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "read",
        origin: .defaults,
        abstract: "Print the whole store as pretty JSON, or one value as compact JSON.",
        store: [.etcd, .layers], arguments: [.key("KEY", .optional)],
        discussion: [
            "Without KEY, prints the stored object with sorted keys, indented by two spaces. With KEY, "
                + "prints its value as compact JSON on one line; a key with no stored value exits with 3. "
                + "A missing FILE is an empty store: it prints {}. On etcd, a key whose text is not JSON is "
                + "named on standard error and the read exits with 4 (the other keys are printed).",
            LayerOptions.helpParagraph,
            "With layers, read prints the effective values: KEY's (exit 3 when no layer has one either), or "
                + "every key of the store and of the layers' files and directories (the environment lists no "
                + "keys). A secret value is printed only with --show-secrets: read KEY exits with 1 naming "
                + "where it is, and the whole store shows it as \"<secret>\" (a note on standard error "
                + "names the keys).",
        ],
        examples: [
            "codable-defaults read settings.json", "codable-defaults read settings.json volume",
        ],
        exitCases: [.keyNotFound("read KEY"), .etcdTextNotJSON("read KEY, the whole store's read")])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key to print, or `nil` for the whole store.
    let key: String?

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = arguments.takeOptional()
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        // A secret key's value goes through the layered reads, which refuse or mask it (without --show-secrets); an
        // encrypted one is printed as its encrypted text, as the whole store's read prints it.
        let secret =
            key.map { opened.defaults.isSecret(forKey: $0) && opened.defaults.encryptedText(forKey: $0) == nil }
            ?? tool.holdsSecrets(opened)
        if store.layers.isEmpty && (!secret || store.layers.showSecrets) {
            try readStored(opened, tool)
        } else {
            try readLayered(opened, tool)
        }
    }

    /// The stored members, or KEY's stored value.
    private func readStored(_ opened: OpenedStore, _ tool: Tool) throws(ToolError) {
        guard let key else {
            try Output.print(JSONText.pretty(members: try tool.storedMembers(opened)) + "\n")
            // Text that is not JSON in etcd is no stored member, yet it is there: said, and the read fails.
            let unreadable = opened.defaults.unreadableValues().map(\.description)
            if !unreadable.isEmpty { throw ToolError(.badFile, unreadable.joined(separator: "\n")) }
            return
        }
        guard opened.defaults.hasStoredValue(forKey: key) else {
            // Text that is not JSON in etcd is not a stored value, yet it is there: a loud read says what it is.
            let reported = tool.reporter.count
            do {
                _ = try opened.defaults.value(for: Defaults.Key<JSONValue?>(key))
            } catch {
                throw ToolError(.badFile, tool.reporter.count > reported ? nil : error.description)
            }
            throw ToolError(.keyNotFound, "\(opened.path): key \(KeyText.message(key)): no value stored")
        }
        try Output.print(JSONText.compact(try tool.storedValue(opened, key: key)) + "\n")
    }

    /// The effective value of KEY, or every listed key's effective value.
    private func readLayered(_ opened: OpenedStore, _ tool: Tool) throws(ToolError) {
        if let key {
            let value = try tool.effectiveValue(opened, key: key, secrets: store.layers.showSecrets ? .shown : .refused)
            try Output.print(JSONText.compact(value) + "\n")
            return
        }
        let (members, masked) = try tool.effectiveMembers(opened, secrets: store.layers.showSecrets ? .shown : .masked)
        try Output.print(JSONText.pretty(members: members) + "\n")
        if !masked.isEmpty {
            let names = masked.map(KeyText.message).joined(separator: ", ")
            Output.printError(
                "codable-defaults: note: secret values are shown as \"\(Tool.secretPlaceholder)\" (\(names)); "
                    + "give --show-secrets to print them\n")
        }
    }
}
