import CodableDefaults

/// `history FILE [KEY] [--json]`: the saves the store's history kept, newest first, as ``HistoryText`` prints
/// them; with KEY, the saves that changed it.
struct HistoryCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "history",
        origin: .added(),
        abstract: "Print the saves the store's history kept, newest first (with KEY, those of KEY).",
        store: [.etcd], arguments: [.key("KEY", .optional)],
        options: [
            OptionDeclaration(
                name: "json", valueName: nil, summary: "Print one line of JSON per save (JSON Lines), for scripts.")
        ],
        discussion: [
            "Every save of a value is recorded, by every program and tool that writes the store (a store file keeps "
                + "it in .NAME.history beside it; by default the last 100 saves or 1 MiB are kept). For each save, "
                + "newest first, prints a header line, then a line per key it changed, as 'diff' prints them:",
            "  REVISION  TIME  USER@HOST  PROGRAM[PID]  (revert to N)\n"
                + "  + KEY<TAB>NEW          the save added KEY\n"
                + "  - KEY<TAB>OLD          the save removed KEY\n"
                + "  ~ KEY<TAB>OLD → NEW    the save changed KEY",
            "The revision grows with each save (by one on a store file; on etcd it is etcd's revision); TIME is UTC to the millisecond (2026-12-03T04:05:06.789Z); "
                + "'(revert to N)' marks a revert or an undo. Values are compact JSON; a secret key's value is "
                + "never recorded, and shows as <secret>. Blocks are separated by an empty line. With KEY, only "
                + "the saves that changed KEY are printed, each with that change only.",
            "With --json, each save is one line of compact JSON, newest first: {\"revision\":7,\"time\":"
                + "\"2026-12-03T04:05:06.789Z\",\"pid\":41,\"user\":\"ana\",\"program\":\"app\",\"host\":\"box\","
                + "\"kind\":\"save\",\"changes\":{\"volume\":{\"old\":0.5,\"new\":0.8},\"token\":{\"secret\":"
                + "\"changed\"}}}. A revert has \"kind\":\"revert\" and \"to\":N. In changes, a member per key "
                + "(sorted by UTF-8 bytes) holds old (left out when the save added the key) and new (left out when "
                + "it removed it); a secret key's holds only \"secret\": \"added\", \"removed\" or \"changed\".",
            "A history that is empty (nothing saved since it was turned on) prints nothing; the exit status is 0. A "
                + "line that holds no record (a record a crash cut short, a hand edit) is skipped and named in a note "
                + "on standard error; it does not change the exit status.",
        ],
        examples: [
            "codable-defaults history settings.json", "codable-defaults history settings.json volume",
            "codable-defaults history settings.json --json | jq -r .time",
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key whose changes to print, or `nil` for every save.
    let key: String?
    /// `--json`: JSON Lines instead of text.
    let json: Bool

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = arguments.takeOptional()
        json = arguments.flag("json")
    }

    func run(in tool: Tool) throws(ToolError) {
        if let key { try KeyText.checkLength(key) }
        let opened = try tool.open(store)
        let history = try tool.history(opened, forKey: key)
        let text = json ? history.map(HistoryText.jsonLine) : history.map(HistoryText.block)
        try Output.print(text.joined(separator: json ? "" : "\n"))
    }
}
