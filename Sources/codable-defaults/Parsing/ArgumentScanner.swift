import Foundation

/// The options and positionals found on a command line, before they are checked against a command.
private struct RawArguments {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var positionals: [String] = []
    /// The positionals (by index in ``positionals``) that are not valid UTF-8, shown with `\xNN` escapes.
    var notUTF8Positionals: [Int: String] = [:]
    /// The options whose value is not valid UTF-8, with the value shown with `\xNN` escapes.
    var notUTF8Values: [String: String] = [:]
    /// The type flag of `write` (`-int`, `-array`...), and how many positionals came before it.
    var typeFlag: (flag: TypeFlag, position: Int)?
    /// How many positionals came before `--`, when it was given.
    var positionalsBeforeDashes: Int?
    /// The values of the options that may be repeated (the layer options), in the order given.
    var repeated: [(name: String, value: String)] = []
}

/// The command-line parser: written by hand, with the behaviour of the usual parsers.
///
/// - Options may come before or after positional arguments; `--` ends the options.
/// - `--name value` and `--name=value` both give a value; a flag given a value is an error.
/// - An argument that starts with `-` followed by a digit or `.` (a negative number) and a lone `-` are
///   positional.
/// - `-h` and `--help` anywhere before `--` ask for the command's help.
/// - Unknown commands and options are usage errors with a suggestion of the nearest valid name.
enum ArgumentParser {
    /// Parses the arguments that follow the program's name.
    ///
    /// - Parameters:
    ///   - arguments: The command-line arguments without the program's name.
    ///   - notUTF8: The arguments (by index) that are not valid UTF-8, shown with `\xNN` escapes: as FILE,
    ///     KEY, VALUE, SOURCE, DEST or an option's value, each is a usage error.
    /// - Returns: The request they make.
    /// - Throws: A usage error naming what is wrong.
    static func parse(_ arguments: [String], notUTF8: [Int: String] = [:]) throws(ToolError) -> Request {
        guard let first = arguments.first else {
            throw .usage("missing command", command: nil)
        }
        if first == "--help" || first == "-h" {
            return try parseHelpTopic(Array(arguments.dropFirst()))
        }
        if first == "--version" {
            if arguments.count > 1 {
                throw .usage("unexpected argument '\(arguments[1])' after --version", command: nil)
            }
            return .version
        }
        if looksLikeOption(first) {
            throw unknownTopLevelOption(first)
        }
        guard let command = Command(rawValue: first) else {
            let hint = suggestion(for: first, among: Command.allCases.map(\.rawValue))
            throw .usage("unknown command '\(first)'\(hint)", command: nil)
        }
        let spec = CommandSpec.spec(for: command)
        let shifted = Dictionary(uniqueKeysWithValues: notUTF8.compactMap { $0.key > 0 ? ($0.key - 1, $0.value) : nil })
        guard let raw = try scan(Array(arguments.dropFirst()), notUTF8: shifted, spec: spec) else {
            return .help(command)
        }
        if command == .help { return try parseHelpTopic(raw.positionals) }
        try refuseNotUTF8(command, raw)
        return try request(command, raw)
    }

    /// Reads options and positionals; returns `nil` when `-h` or `--help` asks for help.
    private static func scan(
        _ arguments: [String], notUTF8: [Int: String], spec: CommandSpec
    ) throws(ToolError) -> RawArguments? {
        var raw = RawArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !looksLikeOption(argument) {
                if let shown = notUTF8[index - 1] { raw.notUTF8Positionals[raw.positionals.count] = shown }
                raw.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                raw.positionalsBeforeDashes = raw.positionals.count
                continue
            }
            if argument == "-h" || argument == "--help" { return nil }
            if spec.command == .write, let flag = TypeFlag(argument: argument) {
                // As in defaults(1), every argument after the type flag is one of its values.
                raw.typeFlag = (flag, raw.positionals.count)
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
            guard argument.hasPrefix("--"), let option = spec.options.first(where: { $0.name == name }) else {
                throw unknownOption(argument, name: name, spec: spec)
            }
            if let valueName = option.valueName {
                let value: String
                if let inlineValue {
                    value = inlineValue
                    if let shown = notUTF8[index - 1] { raw.notUTF8Values[name] = shown }
                } else if index < arguments.count {
                    value = arguments[index]
                    if let shown = notUTF8[index] { raw.notUTF8Values[name] = shown }
                    index += 1
                } else {
                    throw .usage("option --\(name) needs a value: --\(name) \(valueName)", command: spec.command)
                }
                if option.repeatable {
                    raw.repeated.append((name, value))
                    continue
                }
                if raw.values[name] != nil {
                    throw .usage("option --\(name) is given more than once", command: spec.command)
                }
                raw.values[name] = value
            } else {
                if inlineValue != nil {
                    throw .usage("option --\(name) does not take a value", command: spec.command)
                }
                raw.flags.insert(name)
            }
        }
        return raw
    }

    /// Checks the arguments of a command and builds its request.
    private static func request(_ command: Command, _ raw: RawArguments) throws(ToolError) -> Request {
        var positionals = raw.positionals
        let location = try storeLocation(command, raw, positionals: &positionals)
        func take(_ name: String) throws(ToolError) -> String {
            guard !positionals.isEmpty else { throw .usage("missing \(name)", command: command) }
            return positionals.removeFirst()
        }
        func takeOptional() -> String? {
            positionals.isEmpty ? nil : positionals.removeFirst()
        }
        func takeAll() -> [String] {
            defer { positionals.removeAll() }
            return positionals
        }
        let layers = try LayerOptions(raw.repeated, showSecrets: raw.flags.contains("show-secrets"), command: command)
        let request: Request
        switch command {
        case .read:
            request = .read(location, key: takeOptional(), layers: layers)
        case .write:
            let key = try take("KEY")
            if let (flag, position) = raw.typeFlag {
                let fixed = raw.positionals.count - positionals.count
                if position != fixed {
                    throw .usage(
                        "\(flag.spelling) goes after KEY, before its values: write FILE KEY \(flag.spelling) "
                            + flag.valueSynopsis, command: command)
                }
                if raw.flags.contains("string") {
                    throw .usage("give either --string or \(flag.spelling), not both", command: command)
                }
                request = .write(location, key: key, value: .typed(flag, takeAll()), layers: layers)
            } else {
                let value = try take("VALUE")
                request = .write(
                    location, key: key, value: raw.flags.contains("string") ? .string(value) : .json(value),
                    layers: layers)
            }
        case .readType:
            request = .readType(location, key: try take("KEY"), layers: layers)
        case .update:
            let key = try take("KEY")
            guard let add = raw.values["add"] else { throw .usage("missing --add N", command: command) }
            request = .update(location, key: key, add: add)
        case .rename:
            let old = try take("OLD")
            request = .rename(location, from: old, to: try take("NEW"))
        case .delete:
            let all = raw.flags.contains("all")
            let keys = takeAll()
            if all && !keys.isEmpty {
                throw .usage("--all removes every key: give either KEY... or --all, not both", command: command)
            }
            if !all && keys.isEmpty {
                throw .usage("missing KEY (or --all to remove every key)", command: command)
            }
            request = .delete(location, keys: keys, all: all, force: raw.flags.contains("force"))
        case .keys:
            request = .keys(location, layers: layers)
        case .check:
            request = .check(location)
        case .watch:
            request = .watch(location, keys: takeAll(), initial: raw.flags.contains("initial"))
        case .import:
            let source = try take("SOURCE")
            if source.isEmpty { throw .usage("SOURCE is empty", command: command) }
            request = .importMembers(location, source: source)
        case .export:
            let destination = takeOptional()
            if destination?.isEmpty == true { throw .usage("DEST is empty", command: command) }
            // As in defaults(1), `-` is standard output (`./-` names a file called `-`).
            request = .export(location, destination: destination == "-" ? nil : destination, layers: layers)
        case .explain:
            request = .explain(location, key: try take("KEY"), layers: layers)
        case .help:
            return try parseHelpTopic(positionals)
        }
        if let extra = positionals.first {
            throw .usage("unexpected argument '\(extra)'", command: command)
        }
        return request
    }

    /// Refuses an argument that is not valid UTF-8, naming its role: used repaired, it would name another
    /// file or store another key or value.
    private static func refuseNotUTF8(_ command: Command, _ raw: RawArguments) throws(ToolError) {
        if let name = raw.notUTF8Values.keys.sorted().first {
            let value = CommandSpec.spec(for: command).options.first { $0.name == name }?.valueName ?? "value"
            throw .usage(
                "--\(name) \(value) is not valid UTF-8: \(shellQuoted(raw.notUTF8Values[name]!))", command: command)
        }
        guard let index = raw.notUTF8Positionals.keys.min() else { return }
        let hasFile = raw.values["suite"] == nil && raw.values["standard"] == nil && raw.values["etcd"] == nil
        var roles: [String] = hasFile ? ["FILE"] : []
        switch command {
        case .read, .readType, .update, .explain: roles += ["KEY"]
        case .write:
            roles += ["KEY"] + Array(repeating: "VALUE", count: max(1, raw.positionals.count - roles.count - 1))
        case .rename: roles += ["OLD", "NEW"]
        case .delete, .watch: roles += Array(repeating: "KEY", count: max(0, raw.positionals.count - roles.count))
        case .import: roles += ["SOURCE"]
        case .export: roles += ["DEST"]
        case .keys, .check, .help: break
        }
        let role = index < roles.count ? roles[index] : "an extra argument"
        throw .usage(
            "\(role) is not valid UTF-8: \(shellQuoted(raw.notUTF8Positionals[index]!)); "
                + "the tool takes file names, keys and values in UTF-8 only", command: command)
    }

    /// The store a command works on: `--suite`, `--standard`, or the first positional argument.
    private static func storeLocation(
        _ command: Command, _ raw: RawArguments, positionals: inout [String]
    ) throws(ToolError) -> StoreLocation {
        let suite = raw.values["suite"]
        let standard = raw.values["standard"]
        let application = raw.values["app"]
        if let etcd = try etcdLocation(command, raw) { return etcd }
        if suite != nil && standard != nil {
            throw .usage("give either --suite or --standard, not both", command: command)
        }
        if application != nil && suite == nil {
            throw .usage("--app names the app whose suite --suite opens; it needs --suite", command: command)
        }
        if let option = suite.map({ "--suite \(shellQuoted($0))" }) ?? standard.map({ "--standard \(shellQuoted($0))" })
        {
            try refuseFile(command, raw, option: option)
            if let suite { return .suite(suite, application: application) }
            if let standard { return .standard(application: standard) }
        }
        guard !positionals.isEmpty else {
            throw .usage("missing FILE (or --suite NAME, or --standard APP)", command: command)
        }
        let path = positionals.removeFirst()
        if path.isEmpty { throw .usage("FILE is empty", command: command) }
        return .path(path)
    }

    /// The etcd store of `--etcd URLS --prefix P`, or `nil` without `--etcd`.
    private static func etcdLocation(_ command: Command, _ raw: RawArguments) throws(ToolError) -> StoreLocation? {
        guard let etcd = raw.values["etcd"] else {
            for option in ["prefix", "etcd-user", "etcd-password-file"] where raw.values[option] != nil {
                throw .usage("--\(option) is for a store in etcd; it needs --etcd", command: command)
            }
            return nil
        }
        if raw.values["suite"] != nil || raw.values["standard"] != nil {
            throw .usage("give either --etcd or --suite/--standard, not both", command: command)
        }
        guard let prefix = raw.values["prefix"] else {
            throw .usage("--etcd needs --prefix P (the store's keys are the etcd keys P + KEY)", command: command)
        }
        let endpoints = etcd.split(separator: ",").map(String.init)
        if endpoints.isEmpty { throw .usage("--etcd URLS is empty", command: command) }
        var user: EtcdUser?
        switch (raw.values["etcd-user"], raw.values["etcd-password-file"]) {
        case (nil, nil): break
        case (let name?, let file?):
            if name.isEmpty { throw .usage("--etcd-user NAME is empty", command: command) }
            user = EtcdUser(name: name, passwordFile: file)
        case (_?, nil):
            throw .usage(
                "--etcd-user needs --etcd-password-file FILE (a password on the command line is seen by other users)",
                command: command)
        case (nil, _?):
            throw .usage(
                "--etcd-password-file is the password of --etcd-user NAME; it needs --etcd-user", command: command)
        }
        let location = StoreLocation.etcd(endpoints: endpoints, prefix: prefix, user: user)
        try refuseFile(command, raw, option: location.commandLineSpelling)
        return location
    }

    /// Refuses a FILE given together with `--suite` or `--standard` (`option`, as written): more positionals
    /// than the command takes, or a first positional that would be a KEY but names a path (it holds a `/` or
    /// ends with `.json`) and came before `--`. Read as a KEY, such a FILE would read or change another key.
    private static func refuseFile(_ command: Command, _ raw: RawArguments, option: String) throws(ToolError) {
        guard let first = raw.positionals.first else { return }
        let most: Int? =
            switch command {
            case .read, .readType, .update, .import, .export, .explain: 1
            case .rename: 2
            case .write: raw.typeFlag == nil ? 2 : nil
            case .keys, .check: 0
            case .delete, .watch, .help: nil
            }
        let takesKey = [.read, .readType, .write, .update, .rename, .delete, .watch, .explain].contains(command)
        let beforeDashes = raw.positionalsBeforeDashes.map { $0 > 0 } ?? true
        let looksLikePath = first.contains("/") || first.hasSuffix(".json")
        let tooMany =
            if let typeFlag = raw.typeFlag, command == .write { typeFlag.position > 1 } else {
                raw.positionals.count > (most ?? Int.max)
            }
        if tooMany || (takesKey && beforeDashes && looksLikePath) {
            var message = "\(shellQuoted(first)) is given as FILE together with \(option): "
            message += "give either FILE or \(option), not both"
            if !tooMany {
                message += " (a KEY that looks like a path goes after --)"
            }
            throw .usage(message, command: command)
        }
    }

    /// The request of `--help [COMMAND]` and `help [COMMAND]`.
    private static func parseHelpTopic(_ arguments: [String]) throws(ToolError) -> Request {
        guard let topic = arguments.first else { return .help(nil) }
        if arguments.count > 1 {
            throw .usage("unexpected argument '\(arguments[1])'", command: .help)
        }
        guard let command = Command(rawValue: topic) else {
            let hint = suggestion(for: topic, among: Command.allCases.map(\.rawValue))
            throw .usage("no help for '\(topic)': it is not a command\(hint)", command: .help)
        }
        return .help(command)
    }

    /// Whether an argument is an option (or `--`) rather than a positional argument.
    static func looksLikeOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument != "-" else { return false }
        let second = argument[argument.index(after: argument.startIndex)]
        return !(second.isASCII && (second.isNumber || second == "."))
    }

    /// The error for an unknown option of `spec`'s command.
    private static func unknownOption(_ argument: String, name: String, spec: CommandSpec) -> ToolError {
        let spelled = argument.hasPrefix("--") ? "--" + name : argument
        var hint = suggestion(for: "--" + name, among: spec.options.map { "--" + $0.name } + ["--help"])
        if hint.isEmpty, let owner = CommandSpec.all.first(where: { $0.options.contains { $0.name == name } }) {
            hint = " (--\(name) is an option of '\(owner.command.rawValue)')"
        } else if hint.isEmpty, let flag = TypeFlag(argument: argument) {
            hint =
                " (\(flag.spelling) is a type flag of 'write': write FILE KEY \(flag.spelling) \(flag.valueSynopsis))"
        }
        return .usage("unknown option '\(spelled)' for '\(spec.command.rawValue)'\(hint)", command: spec.command)
    }

    /// The error for an option given before the command.
    private static func unknownTopLevelOption(_ argument: String) -> ToolError {
        let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
        let owners = CommandSpec.all.filter { spec in spec.options.contains { "--" + $0.name == name } }
        // An option of every store-taking command (--suite) is shown with `read`; any other with its command.
        if let owner = owners.first(where: { $0.command == .read }) ?? owners.first {
            let value = owner.options.first { "--" + $0.name == name }?.valueName.map { " " + $0 } ?? ""
            let whose = owners.count > 1 ? "every command that takes FILE" : "'\(owner.command.rawValue)'"
            return .usage(
                "\(name) is an option of \(whose): put it after the command, as in "
                    + "'codable-defaults \(owner.command.rawValue) \(name)\(value) ...'", command: nil)
        }
        if let flag = TypeFlag(argument: argument) {
            return .usage(
                "\(flag.spelling) is a type flag of 'write': put it after KEY, as in "
                    + "'codable-defaults write FILE KEY \(flag.spelling) \(flag.valueSynopsis)'", command: nil)
        }
        let hint = suggestion(for: name, among: ["--help", "--version"])
        return .usage("unknown option '\(name)'\(hint)", command: nil)
    }
}
