import CodableDefaults

/// `rename FILE OLD NEW`: one atomic update, so one locked write removes OLD and sets NEW (replacing its value),
/// as `defaults(1)` renames.
struct RenameCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "rename",
        origin: .defaults,
        abstract: "Move the value of OLD to NEW, in one write.",
        store: [.schema, .dryRun], arguments: [.key("OLD"), .key("NEW")],
        discussion: [
            "One atomic update removes OLD and stores its value under NEW: under the file's lock, OLD is read "
                + "(with what other processes saved) and the result is written durably before the lock is "
                + "released. A NEW that has a value is overwritten, as defaults(1) does. An OLD with no stored "
                + "value exits with 3 and changes nothing; OLD and NEW the same key changes nothing. With a schema "
                + "(see 'help write'), a value NEW may not hold, or an OLD the schema requires, exits with 2 and "
                + "changes nothing.",
            DryRun.helpParagraph + " " + DryRun.unlockedSentence(of: "A dry run"),
        ],
        examples: [
            "codable-defaults rename settings.json volume soundVolume"
        ],
        exitCases: [.keyNotFound("rename OLD"), .notDurable])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key whose value moves.
    let old: String
    /// The key it moves to.
    let new: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        old = try arguments.take("OLD")
        new = try arguments.take("NEW")
    }

    func run(in tool: Tool) throws(ToolError) {
        for key in [old, new] {
            try tool.refuseReserved(key)
            try KeyText.checkLength(key)
        }
        let opened = try tool.open(store, writes: true)
        // A secret value stays secret under its new name: recorded without its values, never printed.
        if opened.defaults.isSecret(forKey: old) { opened.defaults.markSecret([new]) }
        // Keys are compared byte for byte, as the store compares them.
        let keys = old.utf8.elementsEqual(new.utf8) ? [old] : [old, new]
        try tool.update(opened, keys: keys) { (values) throws(ToolError) in
            guard let value = values[0] else {
                throw ToolError(
                    .keyNotFound,
                    "\(opened.path): key \(KeyText.message(old)): no value stored; nothing was renamed")
            }
            if keys.count == 2 { values = [nil, value] }
        }
    }
}
