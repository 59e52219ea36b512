import CodableDefaults

/// `write FILE KEY VALUE [--string]` or `write FILE KEY -TYPE VALUE...`: stores a value.
///
/// An update that needs the current value (`-array-add`, `-dict-add`) is one atomic update of the library
/// (`modify(forKeys:)`): the value is read under the file's lock, with what other processes saved, and the result
/// written durably before the lock is released.
struct WriteCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "write",
        origin: .defaults,
        abstract: "Store a value: JSON text, a string (--string), or typed as defaults(1) does (-int 5).",
        store: [.etcd, .layers, .schema, .dryRun], arguments: [.key(), .value("VALUE", .typedValues)],
        options: [
            OptionDeclaration(name: "string", valueName: nil, summary: "Store VALUE as a string, not as JSON text."),
            OptionDeclaration(
                name: "secret", valueName: nil,
                summary: "KEY is secret: store VALUE encrypted (needs --encryption-key FILE)."),
        ],
        discussion: [
            "VALUE is JSON text: 0.8, true, null, \"text\", [1,2], {\"a\":1}. Text that is not JSON is a usage "
                + "error; store it as a string with --string or by quoting it as JSON ('\"text\"'). The file "
                + "(and its directory) are created when missing; other keys, including those other processes "
                + "saved, are kept. Use -- before a VALUE that starts with '--'.",
            "Or give the value as defaults(1) does, with a type flag after KEY: write FILE KEY -TYPE VALUE... "
                + "Every argument after the flag is one of its values, taken as it is (options go before it; "
                + "after --, a type flag is a VALUE).",
            "  -int N           a JSON integer: an optional sign and digits, any size (1.5 exits with 2)\n"
                + "  -float N         a JSON number, as written (1.5, -2, 1e3; a leading + is dropped, as -int\n"
                + "                   drops it)\n"
                + "  -bool B          true or false: B is YES, NO, true, false, 1 or 0, in any case\n"
                + "  -string S        a JSON string\n"
                + "  -date D          an ISO 8601 date and time with a time zone (2026-12-01T10:00:00Z), stored\n"
                + "                   as the library stores a Date: its timeIntervalSinceReferenceDate, a number\n"
                + "                   that a Key<Date> reads; a day or time that does not exist (02-30, 24:00)\n"
                + "                   exits with 2; fractional seconds are kept as far as a Date holds them\n"
                + "                   (about 0.1 microsecond)\n"
                + "  -data HEX        bytes in hexadecimal (48656c6c6f), stored as the library stores Data: a\n"
                + "                   Base64 string that a Key<Data> reads\n"
                + "  -array V...      an array of strings (no V: an empty array)\n"
                + "  -array-add V...  the stored array with the strings appended\n"
                + "  -dict K V...     an object of string values (a K given twice keeps its last V)\n"
                + "  -dict-add K V... the stored object with these members set\n"
                + "  -integer and -boolean are the same as -int and -bool.",
            "-array-add and -dict-add start from an empty array or object when KEY has no value; a value of another type exits with 1 and writes "
                + "nothing. Each is one atomic update: under the file's lock, the current value is read (with "
                + "what other processes saved), the elements are added and the result is written durably "
                + "before the lock is released, so two -array-add run at once keep both elements.",
            "With layer options (see 'help explain'), the store is written as always, and when an override "
                + "shadows KEY a note on standard error says which (codable-defaults: note: \"KEY\" is shadowed "
                + "by environment MYSERVICE_KEY; reads give that value); the exit status is 0. Layers are never "
                + "written.",
            "With --secret, KEY is a secret key: VALUE is stored encrypted with the key of --encryption-key FILE (else "
                + "$CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE), and no output or history quotes it. Without a key, --secret "
                + "is a usage error: a secret is never stored in clear. A KEY whose stored value is encrypted stays "
                + "encrypted without --secret; writing it needs the key.",
            SchemaOptions.writeParagraph,
            DryRun.helpParagraph + " With a type flag, give --dry-run before the flag (after it, it is a value). "
                + DryRun.unlockedSentence(of: "A dry run of -array-add or -dict-add"),
        ],
        examples: [
            "codable-defaults write settings.json volume 0.8",
            "codable-defaults write settings.json profile '{\"name\":\"Ann\",\"age\":29}'",
            "codable-defaults write settings.json name --string 'Ann Lee'",
            "codable-defaults write settings.json count -int 5",
            "codable-defaults write settings.json enabled -bool YES",
            "codable-defaults write settings.json recent -array-add a.txt b.txt",
            "codable-defaults write settings.json volume 0.9 --dry-run",
            "codable-defaults write settings.json volume 0.9 --schema settings.schema.json",
        ],
        exitCases: [.wrongType("-array-add, -dict-add"), .etcdTextNotJSON("-array-add and -dict-add"), .notDurable])

    /// What `write` stores: JSON text, a string (`--string`), or values given with a type flag.
    enum Value: Sendable, Equatable {
        /// `write FILE KEY VALUE`: VALUE is JSON text.
        case json(String)
        /// `write FILE KEY VALUE --string`.
        case string(String)
        /// `write FILE KEY -TYPE VALUE...`.
        case typed(TypeFlag, [String])
    }

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key to write.
    let key: String
    /// The value to store.
    let value: Value
    /// Whether KEY is secret (`--secret`): its value is stored encrypted.
    let isSecret: Bool

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        isSecret = arguments.flag("secret")
        if isSecret && store.encryptionKey == nil {
            throw .usage(
                "--secret stores the value encrypted: give --encryption-key FILE (or set "
                    + "\(StoreArguments.encryptionKeyVariable)); a secret is never stored in clear")
        }
        key = try arguments.take("KEY")
        if let (flag, position) = arguments.typeFlag {
            if position != arguments.takenCount {
                throw .usage(
                    "\(flag.spelling) goes after KEY, before its values: \(flag.usage(in: Self.configuration))")
            }
            if arguments.flag("string") {
                throw .usage("give either --string or \(flag.spelling), not both")
            }
            value = .typed(flag, arguments.takeAll())
        } else {
            let text = try arguments.take("VALUE")
            value = arguments.flag("string") ? .string(text) : .json(text)
        }
    }

    func run(in tool: Tool) throws(ToolError) {
        switch value {
        case .json(let text): try write(text, asString: false, tool)
        case .string(let text): try write(text, asString: true, tool)
        case .typed(let flag, let values): try write(try TypedValue(flag, values), tool)
        }
    }

    /// `write FILE KEY VALUE`.
    private func write(_ text: String, asString: Bool, _ tool: Tool) throws(ToolError) {
        try tool.refuseReserved(key)
        try KeyText.checkLength(key)
        let value: JSONValue
        if asString {
            value = .string(text)
        } else {
            do throws(DefaultsError) {
                value = try JSONValue(parsing: text)
            } catch {
                throw notJSON(text, error)
            }
        }
        let opened = try tool.open(store, writes: true)
        if isSecret { opened.defaults.markSecret([key]) }
        try tool.notingShadowing(of: key, in: opened) { () throws(ToolError) in
            try tool.checkSchema(opened, changes: [(key, value)])
            opened.defaults.set(value, forKey: key)
            try tool.save(opened)
        }
    }

    /// The usage error of a VALUE that is not JSON, with the two ways to store it as a string.
    private func notJSON(_ text: String, _ error: DefaultsError) -> ToolError {
        // A KEY that looks like an option needs `--` before it in the suggested commands.
        let file = "codable-defaults write \(store.location.commandLineSpelling)"
        let asString =
            key.hasPrefix("-")
            ? "\(file) --string -- \(shellQuoted(key))" : "\(file) \(shellQuoted(key)) --string"
        let example = key.hasPrefix("-") ? "\(file) -- \(shellQuoted(key))" : "\(file) \(shellQuoted(key))"
        let quoted = JSONText.compact(.string(text))
        let position = error.line.map { "line \($0), column \(error.column ?? 0): " } ?? ""
        let shown = text.count > 200 ? String(text.prefix(200)) + "…" : text
        return .usage(
            """
            VALUE is not valid JSON (\(position)\(error.message)): \(shown)
            To store it as a string, use --string or quote it as JSON:
              \(asString) \(shellQuoted(shown))
              \(example) \(shellQuoted(text.count > 200 ? "\"…\"" : quoted))
            """)
    }

    /// `write FILE KEY -TYPE VALUE...`.
    private func write(_ value: TypedValue, _ tool: Tool) throws(ToolError) {
        try tool.refuseReserved(key)
        try KeyText.checkLength(key)
        let opened = try tool.open(store, writes: true)
        if isSecret { opened.defaults.markSecret([key]) }
        try tool.notingShadowing(of: key, in: opened) { () throws(ToolError) in
            try write(value, to: opened, tool)
        }
    }

    /// Writes `value` under KEY in `defaults`, durably.
    private func write(_ value: TypedValue, to opened: OpenedStore, _ tool: Tool) throws(ToolError) {
        switch value {
        case .json(let json):
            opened.defaults.set(json, forKey: key)
        case .date(let date):
            opened.defaults.set(date, forKey: key)
        case .data(let data):
            opened.defaults.set(data, forKey: key)
        case .arrayAdd(let elements):
            return try tool.update(opened, keys: [key]) { (values) throws(ToolError) in
                switch values[0] {
                case nil: values[0] = .array(elements)
                case .array(let current)?: values[0] = .array(current + elements)
                case let other?: throw notAnUpdate(opened, flag: .arrayAdd, found: other, tool)
                }
            }
        case .dictAdd(let pairs):
            return try tool.update(opened, keys: [key]) { (values) throws(ToolError) in
                var members: [String: JSONValue]
                switch values[0] {
                case nil: members = [:]
                case .object(let current)?: members = current
                case let other?: throw notAnUpdate(opened, flag: .dictAdd, found: other, tool)
                }
                for (name, member) in pairs { members[name] = member }
                values[0] = .object(members)
            }
        }
        try tool.checkSchema(opened, keys: [key])
        try tool.save(opened)
    }

    /// The error of `-array-add` or `-dict-add` on a value of another type: nothing is written.
    private func notAnUpdate(_ opened: OpenedStore, flag: TypeFlag, found: JSONValue, _ tool: Tool) -> ToolError {
        let expected = flag == .arrayAdd ? "an array" : "a dictionary"
        return ToolError(
            .failure,
            "\(opened.path): key \(KeyText.message(key)): the stored value's type is "
                + "\(JSONText.typeName(of: found)), not \(expected); \(flag.spelling) adds to \(expected) only; "
                + "nothing was written")
    }
}
