import CodableDefaults
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One run of the tool: parses the command line, performs the command, and knows how to exit.
///
/// Stores are opened with the `.manual` save mode and saved by an explicit `flush()`, so a failed save is
/// reported and sets the exit status. The stores stay open until the process exits.
final class Tool {
    /// The stores this run opened, kept alive until the process exits.
    private var openStores: [Defaults] = []
    /// Receives the errors the stores cannot throw.
    private let reporter = ErrorReporter()
    /// Where the etcd stores this run opened are, by store (for messages: they have no file).
    var etcdLocations: [ObjectIdentifier: StoreLocation] = [:]

    /// Runs the command given by `arguments` (without the program's name).
    ///
    /// - Parameters:
    ///   - arguments: The arguments.
    ///   - notUTF8: The arguments (by index) whose bytes are not valid UTF-8, shown with `\xNN` escapes.
    /// - Returns: The exit status.
    func run(_ arguments: [String], notUTF8: [Int: String] = [:]) -> ExitStatus {
        var request: Request?
        do throws(ToolError) {
            request = try ArgumentParser.parse(arguments, notUTF8: notUTF8)
            try perform(request!)
        } catch {
            var error = error
            if error.status == .usage && error.command == nil { error.command = request?.command }
            Output.printError(error.rendered)
            return error.status
        }
        return reporter.hasReported ? .failure : .success
    }

    /// Ends the process with `status`.
    func exit(with status: ExitStatus) -> Never {
        Foundation.exit(status.rawValue)
    }

    /// Performs one request.
    private func perform(_ request: Request) throws(ToolError) {
        switch request {
        case .help(nil):
            try Output.print(Help.general + "\n")
        case .help(let command?):
            try Output.print(Help.text(for: command))
        case .version:
            try Output.print("codable-defaults \(Help.version)\n")
        case .read(let location, let key, let layers) where !layers.isEmpty:
            try readLayered(location, key: key, layers: layers)
        case .read(let location, let key, _):
            try read(location, key: key)
        case .readType(let location, let key, let layers):
            try readType(location, key: key, layers: layers)
        case .write(let location, let key, .json(let text), let layers):
            try write(location, key: key, text: text, asString: false, layers: layers)
        case .write(let location, let key, .string(let text), let layers):
            try write(location, key: key, text: text, asString: true, layers: layers)
        case .write(let location, let key, .typed(let flag, let values), let layers):
            try write(location, key: key, typed: try TypedValue(flag, values), layers: layers)
        case .update(let location, let key, let add):
            try update(location, key: key, adding: add)
        case .rename(let location, let old, let new):
            try rename(location, from: old, to: new)
        case .delete(let location, let keys, let all, let force):
            try delete(location, keys: keys, all: all, force: force)
        case .keys(let location, let layers):
            let defaults = try open(location, layers: layers)
            let keys = layers.isEmpty ? defaults.keys : defaults.effectiveKeys
            try Output.print(keys.map { KeyText.line($0) + "\n" }.joined())
        case .check(let location):
            try check(location)
        case .watch(let location, let keys, let initial):
            let defaults = try open(location)
            Watch.run(defaults, keys: keys, initial: initial)
        case .importMembers(let location, let source):
            try importMembers(location, source: source)
        case .export(let location, let destination, let layers):
            try export(location, to: destination, layers: layers)
        case .explain(let location, let key, let layers):
            try explain(location, key: key, layers: layers)
        }
    }

    // MARK: Commands

    /// `read FILE [KEY]`.
    private func read(_ location: StoreLocation, key: String?) throws(ToolError) {
        let defaults = try open(location)
        guard let key else {
            try Output.print(JSONText.pretty(members: try storedMembers(defaults)) + "\n")
            // Text that is not JSON in etcd is no stored member, yet it is there: said, and the read fails.
            let unreadable = defaults.engine.unreadableNames().compactMap {
                defaults.engine.unreadableValue(named: $0, secret: false)?.description
            }
            if !unreadable.isEmpty { throw ToolError(.badFile, unreadable.joined(separator: "\n")) }
            return
        }
        guard defaults.hasStoredValue(forKey: key) else {
            // Text that is not JSON in etcd is not a stored value, yet it is there: a loud read says what it is.
            let reported = reporter.count
            do {
                _ = try defaults.value(for: Defaults.Key<JSONValue?>(key))
            } catch {
                throw ToolError(.badFile, reporter.count > reported ? nil : error.description)
            }
            throw ToolError(.keyNotFound, "\(path(of: defaults)): key \(KeyText.message(key)): no value stored")
        }
        try Output.print(JSONText.compact(try storedValue(defaults, key: key)) + "\n")
    }

    /// `write FILE KEY VALUE`.
    private func write(
        _ location: StoreLocation, key: String, text: String, asString: Bool, layers: LayerOptions
    ) throws(ToolError) {
        try refuseReserved(key, command: .write)
        try KeyText.checkLength(key, command: .write)
        let value: JSONValue
        if asString {
            value = .string(text)
        } else {
            do throws(DefaultsError) {
                value = try JSONValue(parsing: text)
            } catch {
                // A KEY that looks like an option needs `--` before it in the suggested commands.
                let file = "codable-defaults write \(location.commandLineSpelling)"
                let asString =
                    key.hasPrefix("-")
                    ? "\(file) --string -- \(shellQuoted(key))" : "\(file) \(shellQuoted(key)) --string"
                let example = key.hasPrefix("-") ? "\(file) -- \(shellQuoted(key))" : "\(file) \(shellQuoted(key))"
                let quoted = JSONText.compact(.string(text))
                let position = error.line.map { "line \($0), column \(error.column ?? 0): " } ?? ""
                let shown = text.count > 200 ? String(text.prefix(200)) + "…" : text
                throw .usage(
                    """
                    VALUE is not valid JSON (\(position)\(error.message)): \(shown)
                    To store it as a string, use --string or quote it as JSON:
                      \(asString) \(shellQuoted(shown))
                      \(example) \(shellQuoted(text.count > 200 ? "\"…\"" : quoted))
                    """, command: .write)
            }
        }
        let defaults = try open(location, layers: layers)
        try notingShadowing(of: key, in: defaults) { () throws(ToolError) in
            defaults.set(value, forKey: key)
            try save(defaults)
        }
    }

    /// `delete FILE KEY...` and `delete FILE --all`.
    private func delete(_ location: StoreLocation, keys: [String], all: Bool, force: Bool) throws(ToolError) {
        for key in keys {
            try refuseReserved(key, command: .delete)
            try KeyText.checkLength(key, command: .delete)
        }
        let defaults = try open(location)
        if all {
            defaults.removeAll()
        } else {
            if !force, let missing = keys.first(where: { !defaults.hasStoredValue(forKey: $0) }) {
                throw ToolError(
                    .keyNotFound,
                    "\(path(of: defaults)): key \(KeyText.message(missing)): no value stored; nothing was deleted")
            }
            for key in keys { defaults.removeValue(forKey: key) }
        }
        try save(defaults)
    }

    /// `check FILE`.
    private func check(_ location: StoreLocation) throws(ToolError) {
        let defaults = try open(location)
        let path = path(of: defaults)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError(.badFile, "\(path): no such file")
        }
        let count = try storedMembers(defaults, includingReserved: false).count
        try Output.print("\(path): valid (\(count) \(count == 1 ? "key" : "keys"))\n")
    }

    /// `import FILE SOURCE`.
    ///
    /// SOURCE is read by the library itself, opened as a store that is never changed: so it is held to the
    /// store file's strict JSON rules, and its errors carry line and column.
    private func importMembers(_ location: StoreLocation, source: String) throws(ToolError) {
        let defaults = try open(location)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw ToolError(.badFile, "\(source): no such file")
        }
        if PathIdentity(path: KernelPath.absolute(source)) == PathIdentity(path: path(of: defaults)) {
            throw .usage(
                "SOURCE \(source) is the store file \(path(of: defaults)) itself: there is nothing to import",
                command: .import)
        }
        let sourceStore: Defaults
        do {
            sourceStore = try Defaults(url: URL(fileURLWithPath: KernelPath.absolute(source)), saveMode: .manual)
        } catch {
            throw ToolError(opening: error)
        }
        keep(sourceStore)
        for (key, value) in try storedMembers(sourceStore) {
            if key == Defaults.schemaVersionKey {
                // The store's own schema version stays; the source's is not a setting to copy.
                Output.printError("codable-defaults: \(source): skipped \(key), the source's schema version\n")
                continue
            }
            defaults.set(value, forKey: key)
        }
        try save(defaults)
    }

    /// `export FILE [DEST]`: the stored members or, with layers, the effective ones.
    private func export(_ location: StoreLocation, to destination: String?, layers: LayerOptions) throws(ToolError) {
        let defaults = try open(location, layers: layers)
        let members =
            layers.isEmpty
            ? try storedMembers(defaults)
            : try effectiveMembers(defaults, secrets: layers.showSecrets ? .shown : .refused).members
        let text = JSONText.storeFile(members)
        guard let destination else {
            try Output.print(text)
            return
        }
        // A symbolic link is written through (the link stays a link); anything but a regular file is
        // refused rather than replaced (`export FILE /dev/stdout` would otherwise replace the device link).
        // The same file is told by its device and inode (or, for a file not yet made, its directory's and its
        // name), not by the path's text: `here/s.json` with `here -> .` is the store file too.
        let resolved = FileWriter.followingLinks(KernelPath.absolute(destination))
        if PathIdentity(path: resolved) == PathIdentity(path: path(of: defaults)) {
            throw .usage(
                "DEST \(destination) is the store file \(path(of: defaults)) itself: export to another file",
                command: .export)
        }
        var info = stat()
        if stat(resolved, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            throw .usage(
                "DEST \(destination) is not a regular file; give a file path, or no DEST to write to standard output",
                command: .export)
        }
        try FileWriter.replace(resolved, with: text)
    }

    // MARK: Stores

    /// Opens the store at `location` for this run, with the `.manual` save mode and the layers of `layers`.
    ///
    /// The layers are read-only: the library reads their files and directories, and never writes or locks them.
    func open(_ location: StoreLocation, layers: LayerOptions = LayerOptions()) throws(ToolError) -> Defaults {
        let defaults: Defaults
        do {
            switch location {
            case .path(let path):
                defaults = try Defaults(url: URL(fileURLWithPath: KernelPath.absolute(path)), saveMode: .manual)
            case .suite(let name, application: nil):
                defaults = try Defaults(suiteName: name, saveMode: .manual)
            case .suite(let name, let application?):
                defaults = try Defaults(
                    url: Defaults.suiteURL(named: name, application: application), saveMode: .manual)
            case .standard(let application):
                // An app's standard store is `defaults.json` in its directory: the suite named "defaults".
                defaults = try Defaults(
                    url: Defaults.suiteURL(named: "defaults", application: application), saveMode: .manual)
            case .etcd(let endpoints, let prefix, let user):
                defaults = try openEtcd(endpoints, prefix: prefix, user: user)
            }
        } catch {
            throw ToolError(opening: error)
        }
        keep(defaults)
        guard !layers.isEmpty else { return defaults }
        do {
            try defaults.setLayers(
                overrides: LayerOptions.libraryLayers(layers.overrides),
                fallbacks: LayerOptions.libraryLayers(layers.fallbacks))
        } catch {
            throw ToolError(opening: error)
        }
        return defaults
    }

    /// Keeps a store open until the process exits, and routes its unthrowable errors to the reporter.
    private func keep(_ defaults: Defaults) {
        defaults.onError = reporter.handler
        openStores.append(defaults)
    }

    /// Writes the store's changes durably.
    func save(_ defaults: Defaults) throws(ToolError) {
        do {
            try defaults.flush()
        } catch  where error.code == .notDurable {
            // Written, only its directory's flush failed: the file holds the change, nothing is pending.
            throw ToolError(error)
        } catch {
            // A failed command leaves the file as it was: nothing may write these changes later (at exit).
            defaults.discardUnsavedChanges()
            throw ToolError(error)
        }
    }

    /// The store file's path, for messages.
    func path(of defaults: Defaults) -> String {
        if let url = defaults.url { return url.path }
        if case .etcd(let endpoints, let prefix, _) = etcdLocations[ObjectIdentifier(defaults)] {
            return "etcd \(endpoints.joined(separator: ",")) \(prefix)"
        }
        return "(in memory)"
    }

    /// The stored value of `key` (no registered or argument values: the tool sets none).
    ///
    func storedValue(_ defaults: Defaults, key: String) throws(ToolError) -> JSONValue {
        let reported = reporter.count
        guard let value = defaults.value(JSONValue.self, forKey: key) else {
            // The store reported why (and the reporter printed it), unless the value vanished meanwhile.
            let message = "\(path(of: defaults)): key \(KeyText.message(key)): the stored value cannot be read"
            throw ToolError(.badFile, reporter.count > reported ? nil : message)
        }
        return value
    }

    /// Every stored key and value of the store, with the reserved schema-version member when the file has
    /// one (so an export keeps the file's schema version), sorted as in the file (by UTF-8 bytes).
    ///
    /// A list, not a `[String: JSONValue]`: `String` keys compare by canonical equivalence, so a dictionary
    /// would merge two members whose names differ only in Unicode normalization.
    func storedMembers(_ defaults: Defaults, includingReserved: Bool = true) throws(ToolError)
        -> [(key: String, value: JSONValue)]
    {
        var members: [(key: String, value: JSONValue)] = []
        for key in defaults.keys { members.append((key, try storedValue(defaults, key: key))) }
        if includingReserved, let version = defaults.object(forKey: Defaults.schemaVersionKey) {
            members.append((Defaults.schemaVersionKey, version))
            members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        }
        return members
    }

    /// Refuses the reserved schema-version member as a KEY to change.
    func refuseReserved(_ key: String, command: Command) throws(ToolError) {
        guard key == Defaults.schemaVersionKey else { return }
        throw .usage(
            "\(key) is reserved for the file's schema version (set by migrations); it cannot be changed",
            command: command)
    }
}

/// Writes export files: atomically, so a failed export leaves the destination as it was.
enum FileWriter {
    /// The absolute `path` with symbolic links followed, also a link whose target does not exist yet (up to 40
    /// hops), so that writing the result replaces the link's target and the link stays a link. `..` is kept
    /// for the kernel to resolve: as text, it would name another file after a link to a directory.
    static func followingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { break }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : KernelPath.directory(of: current) + "/" + target
        }
        return current
    }

    /// Replaces the file at `path` with `text`: a temporary file beside it, flushed, then renamed over it.
    ///
    /// A new file gets mode 0600 (settings may hold secrets); an existing file keeps its mode.
    static func replace(_ path: String, with text: String) throws(ToolError) {
        func failure(_ what: String, _ code: Int32) -> ToolError {
            ToolError(.failure, "\(path): \(what): \(String(cString: strerror(code))) (errno \(code))")
        }
        let directory = KernelPath.directory(of: path)
        let name = path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...]
        let temporary = directory + "/." + name + ".\(getpid()).export.tmp"
        var mode: mode_t = 0o600
        var info = stat()
        if stat(path, &info) == 0 { mode = info.st_mode & 0o7777 }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw failure("cannot create a temporary file beside it", errno) }
        var error: ToolError?
        if fchmod(descriptor, mode) != 0 {
            error = failure("cannot set the mode of the temporary file", errno)
        } else if let code = Output.writeAll(text, to: descriptor) {
            error = failure("cannot write the temporary file", code)
        } else if fsync(descriptor) != 0 {
            error = failure("cannot flush the temporary file", errno)
        }
        if close(descriptor) != 0 && error == nil { error = failure("cannot close the temporary file", errno) }
        if error == nil && rename(temporary, path) != 0 { error = failure("cannot rename the temporary file", errno) }
        if let error {
            unlink(temporary)
            throw error
        }
    }
}
