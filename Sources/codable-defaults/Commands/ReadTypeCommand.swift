import CodableDefaults

/// `read-type FILE KEY`: prints `Type is integer`, `float`, `boolean`, `string`, `array`, `dictionary` or
/// `null`, as `defaults(1)` does.
struct ReadTypeCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "read-type",
        origin: .defaults,
        abstract: "Print the type of a stored value, as defaults(1) does: 'Type is integer'.",
        arguments: [.store, .key()],
        options: StoreLocation.options + LayerOptions.options,
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

    /// The store to read.
    let location: StoreLocation
    /// The layers read around the store.
    let layers: LayerOptions
    /// The key whose value's type to print.
    let key: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        location = try StoreLocation(parsing: &arguments)
        layers = try LayerOptions(parsing: arguments)
        key = try arguments.take("KEY")
    }

    func run(in tool: Tool) throws(ToolError) {
        let defaults = try tool.open(location, layers: layers)
        if !layers.isEmpty {
            // The type of the effective value; a secret's type is printed, never its value.
            let value = try tool.effectiveValue(defaults, key: key, secrets: .shown)
            try Output.print("Type is \(JSONText.typeName(of: value))\n")
            return
        }
        guard defaults.hasStoredValue(forKey: key) else {
            throw ToolError(.keyNotFound, "\(tool.path(of: defaults)): key \(KeyText.message(key)): no value stored")
        }
        try Output.print("Type is \(JSONText.typeName(of: try tool.storedValue(defaults, key: key)))\n")
    }
}
