import CodableDefaults

/// `update FILE KEY --add N`: an atomic increment, which `defaults(1)` does not have.
struct UpdateCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "update",
        origin: .added(note: "an atomic --add"),
        abstract: "Add N to an integer atomically, and print the new value.",
        store: [.schema, .dryRun], arguments: [.key()],
        options: [
            OptionDeclaration(
                name: "add", valueName: "N", isRequired: true, summary: "The integer to add (negative to subtract).")
        ],
        discussion: [
            "One atomic update: under the file's lock, the current value of KEY is read (with what other "
                + "processes saved), N is added and the result is written durably before the lock is released, "
                + "so updates run at once by any number of processes all count. A KEY with no value counts as 0. "
                + "Prints the new value. N must be an integer (else exit 2); a stored value that is not an integer, "
                + "or a sum beyond 64-bit integers, exits with 1 and writes nothing. Not in defaults(1).",
            SchemaOptions.writeParagraph + " A sum the schema refuses (above a \"maximum\") writes nothing.",
            DryRun.helpParagraph + " " + DryRun.unlockedSentence(of: "A dry run")
                + " A dry run prints the change ('~ KEY<TAB>OLD → NEW', or '+ KEY<TAB>NEW'), not the new value alone.",
        ],
        examples: [
            "codable-defaults update settings.json launches --add 1",
            "codable-defaults update settings.json credits --add -5",
            "codable-defaults update settings.json launches --add 1 --dry-run",
        ],
        exitCases: [.wrongType("update"), .failure("update's sum overflows"), .etcdTextNotJSON("update"), .notDurable])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key whose integer to add to.
    let key: String
    /// The integer to add, as given.
    let amount: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = try arguments.take("KEY")
        amount = try arguments.requiredValue("add")
    }

    /// Adds N to the integer stored under KEY in one atomic update, and prints the sum.
    func run(in tool: Tool) throws(ToolError) {
        try tool.refuseReserved(key)
        try KeyText.checkLength(key)
        guard let amount = Int64(amount) else {
            throw .usage("--add takes an integer (such as 1 or -5), not \(shellQuoted(amount))")
        }
        let opened = try tool.open(store, writes: true)
        var sum: Int64 = 0
        try tool.update(opened, keys: [key]) { (values) throws(ToolError) in
            var current: Int64 = 0
            switch values[0] {
            case nil: break
            case .number(let number)? where number.int64Value != nil: current = number.int64Value!
            case .number(let number)? where JSONText.typeName(of: .number(number)) == "integer":
                throw ToolError(
                    .failure,
                    "\(opened.path): key \(KeyText.message(key)): the stored integer \(number) is beyond "
                        + "64-bit integers; update --add adds to 64-bit integers only; nothing was written")
            case let other?:
                throw ToolError(
                    .failure,
                    "\(opened.path): key \(KeyText.message(key)): the stored value's type is "
                        + "\(JSONText.typeName(of: other)), not integer; update --add adds to integers only; "
                        + "nothing was written")
            }
            let (result, overflow) = current.addingReportingOverflow(amount)
            if overflow {
                throw ToolError(
                    .failure,
                    "\(opened.path): key \(KeyText.message(key)): \(current) + \(amount) is beyond 64-bit "
                        + "integers; nothing was written")
            }
            sum = result
            values[0] = .number(JSONNumber(result))
        }
        // A dry run printed the change instead (its one line holds the sum).
        if !opened.isDryRun { try Output.print("\(sum)\n") }
    }
}
