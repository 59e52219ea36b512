import CodableDefaults
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `edit FILE [KEY]`: the user's editor on a copy of the stored members (or of KEY's value), and the edit applied
/// as one atomic update of the keys it changed, merged per key with what other writers saved meanwhile.
///
/// The copy is parsed by the library (a store file's strict JSON, its errors with line and column); a copy that
/// does not parse can be edited again. Under the file's lock (``Tool/update(_:keys:asEncryptedText:_:)``), a changed key whose
/// stored value is no longer the one the copy was made from is a conflict: it keeps the other writer's value.
struct EditCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "edit",
        origin: .added(),
        abstract: "Edit the stored members, or KEY's value, in $VISUAL or $EDITOR, and write what changed.",
        store: [.etcd, .schema, .dryRun], arguments: [.key("KEY", .optional)],
        discussion: [
            "Opens the editor on a copy in a private temporary directory (mode 0700, the copy 0600, removed when the command "
                + "ends): without KEY, the stored members as a JSON object in the store file's format (one member "
                + "per line, sorted by key); with KEY, its value pretty-printed (a KEY with no stored value exits "
                + "with 3). The editor is $VISUAL, else $EDITOR, else vi, run as /bin/sh -c '$EDITOR \"$1\"' sh "
                + "COPY (so it may hold arguments), with the tool's terminal. Layers are no part of an edit: the "
                + "copy holds stored values only.",
            "When the editor exits with 0, the copy is parsed strictly, as a store file is (without KEY, a JSON "
                + "object; with KEY, any JSON value). A copy that does not parse is shown with its line and "
                + "column, and 'Edit again? [y/N]' is asked on standard error: y or yes opens the editor again on "
                + "the same copy; anything else exits with 4 and writes nothing. Editing $schemaVersion is refused "
                + "the same way. An editor that exits with another status, or is killed, writes nothing and "
                + "exits with 1.",
            "What changed is written in one atomic update of the changed keys, under the file's lock: a key whose "
                + "stored value another writer changed since the copy was made is a conflict, named on standard "
                + "error with the other writer's value and the edited one; it keeps the other writer's value, "
                + "the other changes are written, and the edit exits with 1. The changes written are printed "
                + "as 'diff' prints them ('+ KEY<TAB>NEW', '- KEY<TAB>OLD', '~ KEY<TAB>OLD → NEW'). An edit that "
                + "changes nothing writes nothing and says so on standard error.",
            SchemaOptions.writeParagraph
                + " An edit the schema refuses is shown with each rule it breaks and 'Edit again? [y/N]' is asked, "
                + "as for a copy that does not parse; anything but y exits with 2 and writes nothing.",
            DryRun.helpParagraph
                + " A dry run compares with the store as it was read when the copy was made: it finds no conflict.",
        ],
        examples: [
            "codable-defaults edit settings.json",
            "EDITOR=nano codable-defaults edit settings.json window",
            "codable-defaults edit --etcd http://127.0.0.1:2379 --prefix myservice/ --dry-run",
        ],
        exitCases: [
            .failure("edit's editor fails, or another writer changed a key edit changes"),
            .keyNotFound("edit KEY"), .invalidFile("an edited copy that does not parse, for edit"),
            .etcdTextNotJSON("edit"), .notDurable,
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The key whose value to edit, or `nil` for every stored member.
    let key: String?

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        key = arguments.takeOptional()
    }

    func run(in tool: Tool) throws(ToolError) {
        if let key {
            try tool.refuseReserved(key)
            try KeyText.checkLength(key)
        }
        let opened = try tool.open(store, writes: true)
        let base = try baseMembers(of: opened, tool)
        let copy = try EditorCopy(name: copyName(opened), text: copyText(of: base))
        defer { copy.remove() }
        let edited = try editedMembers(copy, base: base, opened, tool)
        let changes = DiffText.changes(from: base, to: edited)
        if changes.isEmpty {
            return Output.printError("codable-defaults: no changes; nothing was written\n")
        }
        try apply(changes, to: opened, tool)
    }

    /// The members the copy is made of: every stored member (with the file's `$schemaVersion`), or KEY's alone.
    ///
    /// - Throws: Status 3 for a KEY with no stored value, 4 for text that is not JSON in etcd.
    private func baseMembers(of opened: OpenedStore, _ tool: Tool) throws(ToolError) -> [(
        key: String, value: JSONValue
    )] {
        // Text that is not JSON in etcd is no stored member, yet it is there: an edit would not show it.
        let unreadable = opened.defaults.unreadableValues(including: { key == nil || $0 == key }).map(\.description)
        if !unreadable.isEmpty { throw ToolError(.badFile, unreadable.joined(separator: "\n")) }
        guard let key else { return try tool.storedMembers(opened) }
        guard opened.defaults.hasStoredValue(forKey: key) else {
            throw ToolError(.keyNotFound, "\(opened.path): key \(KeyText.message(key)): no value stored")
        }
        return [(key, try tool.storedValue(opened, key: key))]
    }

    /// The copy's text: the members in the store file's format, or KEY's value pretty-printed.
    private func copyText(of base: [(key: String, value: JSONValue)]) -> String {
        guard key != nil, let member = base.first else { return JSONText.storeFile(base) }
        return JSONText.pretty(member.value) + "\n"
    }

    /// The copy's file name, for the editor's title: the store file's name, or KEY's when it is a plain name.
    private func copyName(_ opened: OpenedStore) -> String {
        if let key {
            let plain =
                key.utf8.count <= 64
                && key.unicodeScalars.allSatisfy { scalar in
                    scalar.isASCII
                        && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                }
            return (plain && !key.hasPrefix(".") ? key : "value") + ".json"
        }
        let name = opened.defaults.url?.lastPathComponent ?? "store.json"
        return name.hasSuffix(".json") ? name : name + ".json"
    }

    /// Runs the editor on the copy until it leaves a copy that parses and that the schema takes, and returns its
    /// members.
    ///
    /// - Throws: Status 1 when the editor fails; 4 when the copy does not parse, 2 when the schema refuses it, and
    ///   it is not edited again.
    private func editedMembers(
        _ copy: EditorCopy, base: [(key: String, value: JSONValue)], _ opened: OpenedStore, _ tool: Tool
    ) throws(ToolError) -> [(key: String, value: JSONValue)] {
        let editor = Editor.command()
        while true {
            try Editor.run(editor, on: copy.path)
            let problem: ToolError
            do throws(ToolError) {
                let edited = try parse(copy, base: base, tool)
                let changes = DiffText.changes(from: base, to: edited).map { ($0.key, $0.new) }
                try tool.checkSchema(opened, changes: changes)
                return edited
            } catch {
                problem = error
            }
            let message = problem.message ?? "the edited copy is not valid"
            Output.printError("codable-defaults: \(message)\nEdit again? [y/N] ")
            let answer = Self.readAnswer()?.trimmingCharacters(in: .whitespaces).lowercased()
            // An answer typed at a terminal ended the prompt's line; one read from elsewhere was not shown.
            if answer == nil || isatty(STDIN_FILENO) == 0 { Output.printError("\n") }
            guard answer == "y" || answer == "yes" else {
                if problem.status == .usage {
                    throw .refused("the schema refuses the edited copy; nothing was written")
                }
                throw ToolError(.badFile, "the edited copy is not valid; nothing was written")
            }
        }
    }

    /// The members the edited copy holds.
    ///
    /// - Throws: Status 4 naming the problem: the copy does not parse (its path, line and column), is not a JSON
    ///   object (without KEY), or changes `$schemaVersion`.
    private func parse(
        _ copy: EditorCopy, base: [(key: String, value: JSONValue)], _ tool: Tool
    ) throws(ToolError) -> [(key: String, value: JSONValue)] {
        if let key {
            let bytes = try copy.bytes()
            guard let text = String(utf8Validating: bytes) else {
                throw ToolError(.badFile, "\(copy.path): not valid UTF-8")
            }
            do throws(DefaultsError) {
                return [(key, try JSONValue(parsing: text))]
            } catch {
                let place = [error.line, error.column].compactMap { $0.map(String.init) }
                throw ToolError(.badFile, ([copy.path] + place).joined(separator: ":") + ": \(error.message)")
            }
        }
        // A copy the editor removed or emptied is not "every key removed" (as a missing or empty store file would
        // read): an editor that crashed or truncated it must not wipe the store. `{}` removes every key.
        let bytes = try copy.bytes()
        if bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            throw ToolError(
                .badFile, "\(copy.path): the copy is empty; it must hold a JSON object ({} removes every key)")
        }
        let store: Defaults
        do {
            store = try Defaults(url: URL(fileURLWithPath: copy.path), saveMode: .manual)
        } catch {
            throw ToolError(.badFile, error.description)
        }
        // Not kept open (as `Tool.open` keeps the stores of a command): the copy's store goes when this returns, so
        // that the next attempt, after the schema or anything else refused this one, reads the copy afresh (the
        // process shares one store per file while one is open).
        store.onError = tool.reporter.handler
        let members = try tool.storedMembers(
            OpenedStore(
                defaults: store, location: .path(copy.path), schema: nil, isDryRun: false, membersAsOpened: [],
                showsSecrets: false))
        let reserved = Defaults.schemaVersionKey
        if base.first(where: { $0.key == reserved })?.value != members.first(where: { $0.key == reserved })?.value {
            throw ToolError(
                .badFile,
                "\(copy.path): \(reserved) is the file's schema version (set by migrations); it cannot be edited")
        }
        return members
    }

    /// Reads one line from standard input, byte by byte (so that nothing after it is taken from the editor's
    /// input); `nil` at its end or on an error.
    private static func readAnswer() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }

    /// Writes `changes` in one atomic update of their keys; a key whose stored value is no longer the copy's is
    /// left as it is, and named.
    ///
    /// - Throws: Status 1 after the other changes are written when there was a conflict; the update's errors.
    private func apply(_ changes: [DiffText.Change], to opened: OpenedStore, _ tool: Tool) throws(ToolError) {
        var conflicts: [(change: DiffText.Change, current: JSONValue?)] = []
        do throws(ToolError) {
            // The copy showed encrypted values as their encrypted text: they are compared and kept as such.
            try tool.update(opened, keys: changes.map(\.key), asEncryptedText: true) { values in
                conflicts = []
                for (index, change) in changes.enumerated() {
                    if values[index] == change.old {
                        values[index] = change.new
                    } else if values[index] != change.new {
                        // Another writer changed it since the copy was made, to something else than the edit:
                        // theirs is kept. (One that made the same change is no conflict: the key is as edited.)
                        conflicts.append((change, values[index]))
                    }
                }
            }
        } catch  where error.status == .notDurable {
            try report(changes, conflicts: conflicts, tool, opened)
            throw error
        }
        try report(changes, conflicts: conflicts, tool, opened)
        if !conflicts.isEmpty { throw ToolError(.failure, nil) }
    }

    /// Prints the changes written (a dry run printed them already) and names each conflict on standard error.
    private func report(
        _ changes: [DiffText.Change], conflicts: [(change: DiffText.Change, current: JSONValue?)], _ tool: Tool,
        _ opened: OpenedStore
    ) throws(ToolError) {
        let conflicting = conflicts.map(\.change.key)
        if !opened.isDryRun {
            let written = changes.filter { change in !conflicting.contains { $0.utf8.elementsEqual(change.key.utf8) } }
            try Output.print(DiffText.lines(written, isSecret: { opened.defaults.isSecret(forKey: $0) }).joined())
        }
        for (change, current) in conflicts {
            // A secret key's values are never quoted: the note says that it changed, not to what.
            let secret = opened.defaults.isSecret(forKey: change.key)
            func shown(_ value: JSONValue) -> String { secret ? Tool.secretPlaceholder : JSONText.compact(value) }
            let theirs = current.map { "changed it to \(shown($0))" } ?? "removed it"
            let yours = change.new.map { "your \(shown($0))" } ?? "your removal"
            Output.printError(
                "codable-defaults: \(opened.path): key \(KeyText.message(change.key)): conflict: another "
                    + "writer \(theirs) since the copy was made; \(yours) was not written\n")
        }
    }
}
