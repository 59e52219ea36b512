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
        arguments: [.store, .value("SOURCE")],
        options: StoreLocation.options + SchemaOptions.options + [DryRun.option],
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

    /// The store to change.
    let location: StoreLocation
    /// The path of the JSON file to import.
    let source: String
    /// The schema the imported values are checked against.
    let schema: SchemaOptions

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        location = try StoreLocation(parsing: &arguments)
        schema = try SchemaOptions(parsing: arguments)
        source = try arguments.take("SOURCE")
        if source.isEmpty { throw .usage("SOURCE is empty") }
    }

    func run(in tool: Tool) throws(ToolError) {
        let defaults = try tool.open(location, schema: schema, writes: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw ToolError(.badFile, "\(source): no such file")
        }
        if PathIdentity(path: ArgumentPath.absolute(source)) == PathIdentity(path: tool.path(of: defaults)) {
            throw .usage(
                "SOURCE \(source) is the store file \(tool.path(of: defaults)) itself: there is nothing to import")
        }
        let sourceStore: Defaults
        do {
            sourceStore = try Defaults(
                url: URL(fileURLWithPath: ArgumentPath.absolute(source)), saveMode: .manual,
                options: Tool.readingOptions)
        } catch {
            throw ToolError(opening: error)
        }
        tool.keep(sourceStore)
        var imported: [String] = []
        for (key, value) in try tool.storedMembers(sourceStore) {
            if key == Defaults.schemaVersionKey {
                // The store's own schema version stays; the source's is not a setting to copy.
                Output.printError("codable-defaults: \(source): skipped \(key), the source's schema version\n")
                continue
            }
            defaults.set(value, forKey: key)
            imported.append(key)
        }
        try tool.checkSchema(defaults, keys: imported)
        try tool.save(defaults)
    }
}
