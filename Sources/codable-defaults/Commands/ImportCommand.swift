import CodableDefaults
import Foundation

/// `import FILE SOURCE`: merges the members of a JSON object into the store.
///
/// SOURCE is read by the library itself, opened as a store that is never changed: so it is held to the store
/// file's strict JSON rules, and its errors carry line and column.
struct ImportCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "import",
        origin: .defaults,
        abstract: "Merge the members of the JSON object in SOURCE into the store.",
        store: [.schema, .dryRun], arguments: [.value("SOURCE")],
        discussion: [
            "SOURCE must hold a JSON object (strict JSON, like a store file). Each member is stored under its "
                + "key, replacing the key's value; other keys are kept. One write for the whole import. A SOURCE "
                + "that is the store file itself (by any path: a link, a hard link, a linked directory) is a "
                + "usage error.",
            SchemaOptions.writeParagraph,
            DryRun.helpParagraph,
        ],
        examples: [
            "codable-defaults import settings.json backup.json",
            "codable-defaults import settings.json backup.json --dry-run",
        ],
        exitCases: [.missingFile("a missing SOURCE for import"), .notDurable])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The path of the JSON file to import.
    let source: String

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        source = try arguments.take("SOURCE")
        if source.isEmpty { throw .usage("SOURCE is empty") }
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store, writes: true)
        if FileManager.default.fileExists(atPath: source),
            PathIdentity(path: ArgumentPath.absolute(source)) == PathIdentity(path: opened.path)
        {
            throw .usage(
                "SOURCE \(source) is the store file \(opened.path) itself: there is nothing to import")
        }
        let sourceStore = try tool.openToRead(source)
        var imported: [String] = []
        for (key, value) in try tool.storedMembers(sourceStore) {
            if key == Defaults.schemaVersionKey {
                // The store's own schema version stays; the source's is not a setting to copy.
                Output.printError("codable-defaults: \(source): skipped \(key), the source's schema version\n")
                continue
            }
            opened.defaults.set(value, forKey: key)
            imported.append(key)
        }
        try tool.checkSchema(opened, keys: imported)
        try tool.save(opened)
    }
}
