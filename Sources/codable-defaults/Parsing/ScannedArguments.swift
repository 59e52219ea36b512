/// The options and positional arguments found after a command's name, checked against its declaration, for the
/// command to take its arguments from.
///
/// A command takes its positional arguments in the order of its usage line (``take(_:)``,
/// ``takeOptional()``, ``takeAll()``); what it leaves is an unexpected argument (``refuseUnexpected()``).
struct ScannedArguments {
    /// The declaration the arguments were checked against.
    let configuration: CommandConfiguration
    /// The flags given (names without `--`).
    var flags: Set<String> = []
    /// The values of the options given once (names without `--`).
    var values: [String: String] = [:]
    /// Every positional argument, in order, taken or not.
    var positionals: [String] = []
    /// The positionals (by index in ``positionals``) that are not valid UTF-8, shown with `\xNN` escapes.
    var notUTF8Positionals: [Int: String] = [:]
    /// The options whose value is not valid UTF-8, with the value shown with `\xNN` escapes.
    var notUTF8Values: [String: String] = [:]
    /// The type flag (`-int`, `-array`...), and how many positionals came before it.
    var typeFlag: (flag: TypeFlag, position: Int)?
    /// How many positionals came before `--`, when it was given.
    var positionalsBeforeDashes: Int?
    /// The values of the options that may be repeated, in the order given.
    var repeated: [(name: String, value: String)] = []
    /// How many positionals the command took.
    private(set) var takenCount = 0

    /// Arguments of `configuration`: the options found so far, and `positionals`.
    init(configuration: CommandConfiguration, positionals: [String] = []) {
        self.configuration = configuration
        self.positionals = positionals
    }

    /// Whether the flag `name` was given.
    func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// The value of the option `name`, or `nil` when it was not given.
    func value(_ name: String) -> String? {
        values[name]
    }

    /// The value of the option `name`, which the command needs.
    ///
    /// - Throws: A usage error, `missing --name VALUE`, when it was not given.
    func requiredValue(_ name: String) throws(ToolError) -> String {
        guard let value = values[name] else {
            let option = configuration.option(named: name)?.synopsis ?? "--\(name)"
            throw .usage("missing \(option)")
        }
        return value
    }

    /// Takes the next positional argument, which the command needs.
    ///
    /// - Parameter name: Its placeholder, for the message.
    /// - Throws: A usage error, `missing NAME`, when there is none.
    mutating func take(_ name: String) throws(ToolError) -> String {
        guard let argument = takeOptional() else { throw .usage("missing \(name)") }
        return argument
    }

    /// Takes the next positional argument, or returns `nil` when there is none.
    mutating func takeOptional() -> String? {
        guard takenCount < positionals.count else { return nil }
        takenCount += 1
        return positionals[takenCount - 1]
    }

    /// Takes every positional argument left.
    mutating func takeAll() -> [String] {
        defer { takenCount = positionals.count }
        return Array(positionals[takenCount...])
    }

    /// Refuses a positional argument the command did not take.
    func refuseUnexpected() throws(ToolError) {
        guard takenCount < positionals.count else { return }
        throw .usage("unexpected argument '\(positionals[takenCount])'")
    }

    /// Refuses an argument that is not valid UTF-8, naming its role (from the declaration): used repaired, it
    /// would name another file or store another key or value. A command about the tool takes names it only
    /// compares, and refuses none.
    func refuseNotUTF8() throws(ToolError) {
        guard !configuration.isAboutTheTool else { return }
        if let name = notUTF8Values.keys.sorted().first {
            let value = configuration.option(named: name)?.valueName ?? "value"
            throw .usage("--\(name) \(value) is not valid UTF-8: \(shellQuoted(notUTF8Values[name]!))")
        }
        guard let index = notUTF8Positionals.keys.min() else { return }
        var roles: [String] = []
        for argument in configuration.arguments {
            switch (argument.kind, argument.arity) {
            case (.store, _):
                if !StoreLocation.isNamedByOption(in: self) { roles.append(argument.name) }
            case (_, .one), (_, .optional):
                roles.append(argument.name)
            case (_, .oneOrMore), (_, .zeroOrMore), (_, .typedValues):
                roles += Array(repeating: argument.name, count: max(0, positionals.count - roles.count))
            }
        }
        let role = index < roles.count ? roles[index] : "an extra argument"
        throw .usage(
            "\(role) is not valid UTF-8: \(shellQuoted(notUTF8Positionals[index]!)); "
                + "the tool takes file names, keys and values in UTF-8 only")
    }
}
