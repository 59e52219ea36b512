import CodableDefaults

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `export FILE [DEST]`: the stored members or, with layers, the effective ones, in the store file's format.
struct ExportCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "export",
        origin: .defaults,
        abstract: "Write the store's JSON (or a property list) to DEST, or to standard output (no DEST, or -).",
        store: [.layers], arguments: [.value("DEST", .optional)],
        discussion: [
            "Writes the store file's format: one member per line, sorted by key, each value compact; a DEST whose "
                + "name ends in .plist gets an XML property list instead (what defaults import reads): a number an "
                + "integer when it is whole and fits in 64 bits, else a real; a value that holds null, which a "
                + "property list cannot, exits with 1 naming its key, and nothing is written. DEST is "
                + "replaced atomically (created with mode 0600). DEST cannot be the store file itself, however "
                + "it is spelled (a link, a hard link, a linked directory such as here/s.json with here -> .): "
                + "files are compared by device and inode, and such a DEST is a usage error naming both paths.",
            "With layer options (see 'help explain'), the effective values of every key of the store and of "
                + "the layers' files and directories: what a program with these layers reads. A secret value "
                + "is exported only with --show-secrets; without, the export exits with 1, naming the key, and "
                + "writes nothing.",
        ],
        examples: [
            "codable-defaults export settings.json backup.json", "codable-defaults export --suite prefs",
            "codable-defaults export settings.json com.example.app.plist",
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The file to write, or `nil` for standard output.
    let destination: String?

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        let destination = arguments.takeOptional()
        if destination?.isEmpty == true { throw .usage("DEST is empty") }
        // As in defaults(1), `-` is standard output (`./-` names a file called `-`).
        self.destination = destination == "-" ? nil : destination
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        // A secret key's value is exported only with --show-secrets, as a secret layer's is.
        let members =
            store.layers.isEmpty && (store.layers.showSecrets || !tool.holdsSecrets(opened))
            ? try tool.storedMembers(opened)
            : try tool.effectiveMembers(opened, secrets: store.layers.showSecrets ? .shown : .refused).members
        guard let destination else {
            try Output.print(JSONText.storeFile(members))
            return
        }
        // As `defaults export` writes one: an XML property list, for a DEST named so.
        let text =
            destination.lowercased().hasSuffix(".plist")
            ? try PropertyList.xml(members, path: destination) : JSONText.storeFile(members)
        // A symbolic link is written through (the link stays a link); anything but a regular file is
        // refused rather than replaced (`export FILE /dev/stdout` would otherwise replace the device link).
        // The same file is told by its device and inode (or, for a file not yet made, its directory's and its
        // name), not by the path's text: `here/s.json` with `here -> .` is the store file too.
        let resolved = FileWriter.followingLinks(ArgumentPath.absolute(destination))
        if PathIdentity(path: resolved) == PathIdentity(path: opened.path) {
            throw .usage(
                "DEST \(destination) is the store file \(opened.path) itself: export to another file")
        }
        var info = stat()
        if stat(resolved, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            throw .usage(
                "DEST \(destination) is not a regular file; give a file path, or no DEST to write to standard output")
        }
        try FileWriter.replace(resolved, with: text)
    }
}
