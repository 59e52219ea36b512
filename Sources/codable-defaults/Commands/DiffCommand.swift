import CodableDefaults
import Foundation

/// `diff FILE OTHER`: a line per key whose stored value differs between the store and the JSON object in
/// OTHER, as ``DiffText`` writes them; exit 0 when there is none, 1 when there is one, as diff(1) exits.
///
/// OTHER is read by the library itself, opened as a store that is never changed (as `import` reads SOURCE):
/// it is held to the store file's strict JSON rules, its errors carry line and column, and it is never locked
/// or written.
struct DiffCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "diff",
        origin: .added(),
        abstract: "Print a line per key whose stored value differs from the JSON object in OTHER.",
        store: [.etcd], arguments: [.value("OTHER")],
        discussion: [
            "OTHER is the path of a JSON file holding an object: a store file, an export, any JSON object "
                + "(strict JSON, like a store file). It is only read: never locked, created or written. For each "
                + "key whose stored value differs, sorted by the keys' UTF-8 bytes, prints one line: the key as "
                + "'keys' prints it, a tab, and the values as compact JSON:",
            "  + KEY<TAB>NEW          KEY has a value only in OTHER\n"
                + "  - KEY<TAB>OLD          KEY has a value only in the store\n"
                + "  ~ KEY<TAB>OLD → NEW    KEY has a value in both, and they differ",
            "Values are compared as the library compares JSON values: numbers by value (1, 1.0 and 1e0 are "
                + "the same), objects whatever the order of their members, strings as Swift compares them "
                + "(canonically equivalent strings are the same); a value only spelled otherwise is no "
                + "difference. Keys are compared byte for byte, as the store compares them. The stored values "
                + "only: layers (see 'help explain') are no part of a diff. A file's $schemaVersion member is "
                + "compared like a key.",
            "Exits with 0 when nothing differs (and prints nothing), with 1 when something does, as diff(1). "
                + "A missing FILE is an empty store, as for 'read'; a missing OTHER exits with 4, and so does "
                + "an OTHER that is not a JSON object (naming its line and column). On etcd, a key whose text "
                + "is not JSON is named on standard error and the diff exits with 4.",
        ],
        examples: [
            "codable-defaults diff settings.json backup.json",
            "codable-defaults diff --etcd http://127.0.0.1:2379 --prefix myservice/ myservice.json",
        ],
        exitCases: [.difference, .missingFile("a missing OTHER for diff"), .etcdTextNotJSON("diff")])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The path of the JSON file to compare it with.
    let other: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        other = try arguments.take("OTHER")
        if other.isEmpty { throw .usage("OTHER is empty") }
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        let otherStore = try tool.openToRead(other, encryptionKey: store.libraryEncryptionKey)
        try tool.learnSecrets(of: otherStore, schema: nil)
        // A key secret in either store is secret in the diff; its values are printed as secrets either way.
        var (from, to) = (try tool.storedMembers(opened), try tool.storedMembers(otherStore))
        Self.decryptWhereBothAreEncrypted(&from, opened, &to, otherStore)
        let lines = DiffText.lines(
            from: from, to: to,
            isSecret: { opened.defaults.isSecret(forKey: $0) || otherStore.defaults.isSecret(forKey: $0) })
        try Output.print(lines.joined())
        // Text that is not JSON in etcd is no stored member, yet it is there: said, and the diff fails.
        let unreadable = opened.defaults.unreadableValues().map(\.description)
        if !unreadable.isEmpty { throw ToolError(.badFile, unreadable.joined(separator: "\n")) }
        if !lines.isEmpty { throw ToolError(.failure, nil) }
    }

    /// Replaces, in both lists, the encrypted text of a key encrypted in both stores by its value, when both open
    /// with the key given: one value encrypted twice differs in its text only. A key encrypted on one side only, or
    /// one whose values do not open (encrypted with other keys), keeps its texts, and so differs.
    private static func decryptWhereBothAreEncrypted(
        _ from: inout [(key: String, value: JSONValue)], _ fromStore: OpenedStore,
        _ to: inout [(key: String, value: JSONValue)], _ toStore: OpenedStore
    ) {
        guard fromStore.defaults.hasEncryptionKey else { return }
        for index in from.indices {
            let key = from[index].key
            guard fromStore.defaults.encryptedText(forKey: key) != nil,
                toStore.defaults.encryptedText(forKey: key) != nil,
                let other = to.firstIndex(where: { $0.key.utf8.elementsEqual(key.utf8) }),
                let mine = fromStore.defaults.decryptedValue(forKey: key),
                let theirs = toStore.defaults.decryptedValue(forKey: key)
            else { continue }
            from[index].value = mine
            to[other].value = theirs
        }
    }
}
