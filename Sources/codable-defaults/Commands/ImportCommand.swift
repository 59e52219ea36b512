import CodableDefaults
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `import FILE SOURCE`: merges the members of a JSON object, or of a property list's dictionary, into the store.
///
/// A JSON SOURCE is read by the library itself, opened as a store that is never changed: so it is held to the store
/// file's strict JSON rules, and its errors carry line and column. A property list (XML or binary, told by its
/// first bytes) is read by Foundation (``PropertyList``).
struct ImportCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "import",
        origin: .defaults,
        abstract: "Merge the members of the JSON object or property list in SOURCE into the store.",
        store: [.schema, .dryRun], arguments: [.value("SOURCE")],
        discussion: [
            "SOURCE must hold a JSON object (strict JSON, like a store file) or a property list whose top is a "
                + "dictionary, XML or binary (what defaults export writes; told by its first bytes, not its name): "
                + "a date is stored as a Date is (seconds since 2001-01-01 UTC), data as Data is (base64), so typed "
                + "keys read them. A SOURCE that does not parse exits with 4 naming it, and the store is unchanged. "
                + "Each member is stored under its key, replacing the key's value; other keys are kept. One write for the whole import. A SOURCE "
                + "that is the store file itself (by any path: a link, a hard link, a linked directory) is a "
                + "usage error.",
            SchemaOptions.writeParagraph,
            DryRun.helpParagraph,
        ],
        examples: [
            "codable-defaults import settings.json backup.json",
            "codable-defaults import settings.json backup.json --dry-run",
            "codable-defaults import settings.json com.example.app.plist",
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
        var imported: [String] = []
        for (key, value) in try members(tool) {
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

    /// SOURCE's members: a property list's (XML or binary, told by its first bytes), else the JSON object's, read
    /// by the library as a store opened only to read.
    private func members(_ tool: Tool) throws(ToolError) -> [(key: String, value: JSONValue)] {
        let path = ArgumentPath.absolute(source)
        var info = stat()
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG {
            // The first bytes say which format it is.
            var head = [UInt8](repeating: 0, count: 512)
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw ToolError(.badFile, "\(source): cannot be read: \(String(cString: strerror(errno)))")
            }
            var count = -1
            repeat { count = read(descriptor, &head, head.count) } while count < 0 && errno == EINTR
            let reason = count < 0 ? String(cString: strerror(errno)) : nil
            close(descriptor)
            if let reason { throw ToolError(.badFile, "\(source): cannot be read: \(reason)") }
            if PropertyList.looksLikeOne(Data(head.prefix(count))) {
                guard info.st_size <= Self.maximumPropertyListSize else {
                    throw ToolError(
                        .badFile,
                        "\(source): \(info.st_size) bytes is over the limit of \(Self.maximumPropertyListSize)")
                }
                let bytes: Data
                do {
                    bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                } catch {
                    throw ToolError(.badFile, "\(source): cannot be read: \(error.localizedDescription)")
                }
                return try PropertyList.members(of: bytes, path: source)
            }
        }
        return try tool.storedMembers(try tool.openToRead(source, encryptionKey: store.libraryEncryptionKey))
    }

    /// The largest property list taken: a store file's limit.
    private static let maximumPropertyListSize = Int64(Defaults.Options.default.maximumFileSize)
}
