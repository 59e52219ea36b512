/// The command-line scanner: written by hand, with the behaviour of the usual parsers, driven by a command's
/// declaration (``CommandConfiguration``).
///
/// - Options may come before or after positional arguments; `--` ends the options.
/// - `--name value` and `--name=value` both give a value; a flag given a value is an error.
/// - An argument that starts with `-` followed by a digit or `.` (a negative number) and a lone `-` are
///   positional.
/// - `-h` and `--help` anywhere before `--` ask for the command's help.
/// - A type flag (`-int`), for a command that takes one, ends the options: every argument after it is a value.
/// - Unknown commands and options are usage errors with a suggestion of the nearest valid name.
enum ArgumentScanner {
    /// Reads the options and positional arguments that follow a command's name.
    ///
    /// - Parameters:
    ///   - arguments: The arguments after the command's name.
    ///   - notUTF8: The arguments (by index) that are not valid UTF-8, shown with `\xNN` escapes.
    ///   - configuration: The command's declaration: its options, and whether it takes a type flag.
    /// - Returns: What was found, or `nil` when `-h` or `--help` asks for the command's help.
    /// - Throws: A usage error: an unknown option, an option without its value or with one it does not take,
    ///   an option given twice.
    static func scan(
        _ arguments: [String], notUTF8: [Int: String], for configuration: CommandConfiguration
    ) throws(ToolError) -> ScannedArguments? {
        var scanned = ScannedArguments(configuration: configuration)
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !looksLikeOption(argument) {
                if let shown = notUTF8[index - 1] { scanned.notUTF8Positionals[scanned.positionals.count] = shown }
                scanned.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                scanned.positionalsBeforeDashes = scanned.positionals.count
                continue
            }
            if argument == "-h" || argument == "--help" { return nil }
            if configuration.takesTypeFlag, let flag = TypeFlag(argument: argument) {
                // As in defaults(1), every argument after the type flag is one of its values.
                scanned.typeFlag = (flag, scanned.positionals.count)
                optionsEnded = true
                continue
            }
            let body = argument.hasPrefix("--") ? argument.dropFirst(2) : argument.dropFirst()
            let name: String
            let inlineValue: String?
            if let equals = body.firstIndex(of: "=") {
                name = String(body[..<equals])
                inlineValue = String(body[body.index(after: equals)...])
            } else {
                name = String(body)
                inlineValue = nil
            }
            guard argument.hasPrefix("--"), let option = configuration.option(named: name) else {
                throw unknownOption(argument, name: name, configuration: configuration)
            }
            if let valueName = option.valueName {
                let value: String
                if let inlineValue {
                    value = inlineValue
                    if let shown = notUTF8[index - 1] { scanned.notUTF8Values[name] = shown }
                } else if index < arguments.count {
                    value = arguments[index]
                    if let shown = notUTF8[index] { scanned.notUTF8Values[name] = shown }
                    index += 1
                } else {
                    throw .usage("option --\(name) needs a value: --\(name) \(valueName)")
                }
                if option.repeatable {
                    scanned.repeated.append((name, value))
                    continue
                }
                if scanned.values[name] != nil {
                    throw .usage("option --\(name) is given more than once")
                }
                scanned.values[name] = value
            } else {
                if inlineValue != nil {
                    throw .usage("option --\(name) does not take a value")
                }
                scanned.flags.insert(name)
            }
        }
        return scanned
    }

    /// Whether an argument is an option (or `--`) rather than a positional argument.
    static func looksLikeOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument != "-" else { return false }
        let second = argument[argument.index(after: argument.startIndex)]
        return !(second.isASCII && (second.isNumber || second == "."))
    }

    /// The error for an unknown option of the command `configuration` declares.
    private static func unknownOption(
        _ argument: String, name: String, configuration: CommandConfiguration
    ) -> ToolError {
        let spelled = argument.hasPrefix("--") ? "--" + name : argument
        var hint = suggestion(for: "--" + name, among: configuration.options.map { "--" + $0.name } + ["--help"])
        if hint.isEmpty, let owners = optionOwners("--" + name) {
            hint = " (--\(name) is an option of \(owners))"
        } else if hint.isEmpty, let flag = TypeFlag(argument: argument), let owners = typeFlagOwners() {
            hint = " (\(flag.spelling) is a type flag of \(owners.names): \(flag.usage(in: owners.first)))"
        }
        return .usage("unknown option '\(spelled)' for '\(configuration.name)'\(hint)")
    }

    /// The error for an option given before the command.
    static func unknownTopLevelOption(_ argument: String) -> ToolError {
        let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
        let owners = Commands.all.map { $0.configuration }.filter { $0.options.contains { "--" + $0.name == name } }
        // An option of several commands (--suite) is shown with the first of them, `read`.
        if let owner = owners.first {
            let value = owner.options.first { "--" + $0.name == name }?.valueName.map { " " + $0 } ?? ""
            let whose = optionOwners(name) ?? "'\(owner.name)'"
            return .usage(
                "\(name) is an option of \(whose): put it after the command, as in "
                    + "'codable-defaults \(owner.name) \(name)\(value) ...'")
        }
        if let flag = TypeFlag(argument: argument), let owners = typeFlagOwners() {
            let before = owners.first.arguments.prefix { $0.arity != .typedValues }
            let place = before.last.map { "after \($0.name)" } ?? "first"
            return .usage(
                "\(flag.spelling) is a type flag of \(owners.names): put it \(place), as in "
                    + "'codable-defaults \(flag.usage(in: owners.first))'")
        }
        let hint = suggestion(for: name, among: ["--help", "--version"])
        return .usage("unknown option '\(name)'\(hint)")
    }

    /// The commands that declare the option `name` (with its `--`), as a message names them: "every command that
    /// takes FILE" when each command that names its store takes it (`--suite`), else each name ("'write'",
    /// "'write', 'delete' and 'edit'"); `nil` when no command takes it.
    static func optionOwners(_ name: String) -> String? {
        let all = Commands.all.map { $0.configuration }
        let owners = all.filter { $0.options.contains { "--" + $0.name == name } }
        guard !owners.isEmpty else { return nil }
        let storeCommands = all.filter { $0.store != nil }
        if owners.count > 1 && storeCommands.allSatisfy({ store in owners.contains { $0.name == store.name } }) {
            return "every command that takes FILE"
        }
        let names = owners.map { "'\($0.name)'" }
        return names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// The commands that take a type flag, for messages: the first of them, and their names as a message writes
    /// them ("'write'", "'write' and 'edit'"); `nil` when no command takes one.
    private static func typeFlagOwners() -> (first: CommandConfiguration, names: String)? {
        let owners = Commands.all.map { $0.configuration }.filter(\.takesTypeFlag)
        guard let first = owners.first else { return nil }
        let names = owners.map { "'\($0.name)'" }
        let listed =
            names.count > 1 ? names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1] : names[0]
        return (first, listed)
    }
}
