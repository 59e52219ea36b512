import CodableDefaults

/// `read-type FILE KEY`: prints `Type is integer`, `float`, `boolean`, `string`, `array`, `dictionary` or
/// `null`, as `defaults(1)` does.
struct ReadTypeCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "read-type",
        origin: .defaults,
        abstract: "Print the type of a stored value, as defaults(1) does: 'Type is integer'.",
        store: [.layers], arguments: [.key()],
        discussion: [
            "Prints 'Type is T', T being integer, float, boolean, string, array, dictionary or null. A number "
                + "written with a '.' or an exponent (1.5, 1e3, 2.0) is a float, any other an integer. A date "
                + "written with -date is stored as a number (an integer or a float) and data written with -data as a Base64 "
                + "string: the JSON file has no date or data type. A key with no stored value exits with 3.",
            "With layer options (see 'help explain'), the type of the effective value; a secret's type is "
                + "printed, never its value.",
        ],
        examples: [
            "codable-defaults read-type settings.json volume"
        ],
        exitCases: [.keyNotFound("read-type KEY")])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key whose value's type to print.
    let key: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = try arguments.take("KEY")
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        if !store.layers.isEmpty {
            // The type of the effective value; a secret's type is printed, never its value.
            let value = try tool.effectiveValue(opened, key: key, secrets: .shown)
            try Output.print("Type is \(JSONText.typeName(of: value))\n")
            return
        }
        guard opened.defaults.hasStoredValue(forKey: key) else {
            throw ToolError(.keyNotFound, "\(opened.path): key \(KeyText.message(key)): no value stored")
        }
        try Output.print("Type is \(JSONText.typeName(of: try tool.storedValue(opened, key: key)))\n")
    }
}
