import CodableDefaults
import Foundation

/// `undo FILE [KEY] [--to REVISION|TIME]`: puts the store (or KEY) back to what it held before the last save, or at a
/// revision or a time, as one new change (``CodableDefaults/Defaults/undo(dryRun:)-9zhy9`` and its siblings); prints
/// the changes made.
struct UndoCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "undo",
        origin: .added(),
        abstract: "Undo the last save (or KEY's last change), or go back to --to REVISION or TIME.",
        store: [.etcd, .schema, .dryRun], arguments: [.key("KEY", .optional)],
        options: [
            OptionDeclaration(
                name: "to", valueName: "REVISION|TIME",
                summary: "Go back to the store as it was after the save REVISION (0: before the first), or at TIME.")
        ],
        discussion: [
            "Reads the store's history (see 'help history'). Without --to, the keys the last save changed go back "
                + "to what they held before it, whoever made it; with KEY, KEY goes back to what it held before "
                + "the last save that changed it. With --to REVISION (a whole number), every key a later save "
                + "changed goes back to what it held right after the save REVISION; with --to TIME (UTC, "
                + "2026-12-03T04:05:06Z or 2026-12-03T04:05:06.789Z), to what it held after the last save made at "
                + "or before TIME. With KEY and --to, only KEY. Any other --to is a usage error (exit 2).",
            "The undo is one atomic change under the store's lock, recorded in the history as a revert: undo it "
                + "to bring the values back (a second undo undoes the first). Keys no later save changed are not touched. "
                + "Prints the changes made, as 'diff' prints them ('+ KEY<TAB>NEW', '- KEY<TAB>OLD', "
                + "'~ KEY<TAB>OLD → NEW'), nothing when every key already holds what it held then (exit 0).",
            "The history cannot always say what a key held: when it has no saves (none recorded yet, or a KEY no "
                + "save changed), when the saves after REVISION or TIME were dropped (the history keeps the "
                + "newest only), or when a secret key's value would have to be put back (its value is never "
                + "recorded: undo the other keys one by one). undo then exits with 1, names the reason and writes "
                + "nothing. A key the history shows as secret is printed as <secret>, and its change is recorded "
                + "without its values.",
            "With a schema (see 'help write'), the values the undo would put back are checked as every other "
                + "write's are: a value the schema refuses exits with 2, each broken rule on a line, and nothing is "
                + "written (--no-schema puts them back unchecked).",
            DryRun.helpParagraph
                + " undo --dry-run computes the changes from the history and the store as they are read, without "
                + "the lock; a real run reads both again under it.",
        ],
        examples: [
            "codable-defaults undo settings.json", "codable-defaults undo settings.json volume",
            "codable-defaults undo settings.json --to 12 --dry-run",
            "codable-defaults undo settings.json --to 2026-12-03T04:05:06Z",
        ],
        exitCases: [
            .failure(
                "undo when the history cannot say what to restore (no saves, older saves gone, a secret key's value)"),
            .notDurable,
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key to put back, or `nil` for every key.
    let key: String?
    /// Where to go back to.
    let target: Target

    /// Where `undo` goes back to.
    enum Target: Sendable, Equatable {
        /// Before the last save (of KEY, with one).
        case last
        /// Right after the save of this revision (0: before the first).
        case revision(Int)
        /// As the store was at this time (within its millisecond).
        case time(Date)
    }

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = arguments.takeOptional()
        guard let to = arguments.value("to") else {
            target = .last
            return
        }
        if !to.isEmpty, to.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard let revision = Int(to) else { throw .usage("--to \(shellQuoted(to)): the revision is too large") }
            target = .revision(revision)
        } else if let date = Defaults.HistoryEntry.date(fromTimeText: to) {
            target = .time(date)
        } else {
            throw .usage(
                "--to \(shellQuoted(to)) is neither a revision (a whole number) nor a UTC time "
                    + "(2026-12-03T04:05:06Z, 2026-12-03T04:05:06.789Z)")
        }
    }

    func run(in tool: Tool) throws(ToolError) {
        if let key {
            try tool.refuseReserved(key)
            try KeyText.checkLength(key)
        }
        let opened = try tool.open(store, writes: true)
        let history = try tool.history(opened)
        let secretKeys = HistoryText.secretKeys(in: history)
        try tool.treatAsSecret(secretKeys, in: opened)
        let changes = try revert(opened, tool, dryRun: opened.isDryRun)
        try Output.print(DiffText.lines(HistoryText.withholding(secretKeys, in: changes)).joined())
    }

    /// Reverts through the library, under the store's lock; returns the changes it made. With `dryRun`, the
    /// library says what it would change, from the history and the store as they are read, and writes nothing.
    private func revert(_ opened: OpenedStore, _ tool: Tool, dryRun: Bool) throws(ToolError) -> [Defaults.HistoryEntry
        .Change]
    {
        let point: Defaults.RevertPoint =
            switch target {
            case .last: .beforeLastSave
            case .revision(let revision): .revision(revision)
            case .time(let date): .date(date)
            }
        do {
            // The values put back are checked against the store's schema as every other write's are: refused (exit
            // 2, each broken rule named), nothing is written.
            return try opened.defaults.revert(forKey: key, to: point, dryRun: dryRun) { changes in
                try tool.checkSchema(opened, changes: changes, discarding: false)
            }
        } catch let error as ToolError {
            throw error
        } catch let error as DefaultsError {
            throw ToolError(error)
        } catch {
            throw ToolError(.failure, "\(opened.path): \(error)")
        }
    }
}
