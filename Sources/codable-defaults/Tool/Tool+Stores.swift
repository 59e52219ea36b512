import CodableDefaults
import CodableDefaultsEtcd
import Foundation

/// The stores of a run: opened for the run, saved explicitly, read as JSON values.
extension Tool {
    /// Opens the store at `location` for this run, with the `.manual` save mode and the layers of `layers`; with
    /// `schema`, reads the schema it names (``loadSchema(for:_:)``) for the command's checks.
    ///
    /// The layers are read-only: the library reads their files and directories, and never writes or locks them.
    /// A command that does not write (`writes` false), and any under `--dry-run`, opens the store only to read
    /// (``Tool/readingOptions``): it takes no lock and leaves a crashed writer's temporary files alone.
    func open(
        _ location: StoreLocation, layers: LayerOptions = LayerOptions(), schema: SchemaOptions? = nil,
        writes: Bool = false
    ) throws(ToolError) -> Defaults {
        let defaults: Defaults
        let options = writes && !isDryRun ? Defaults.Options.default : Self.readingOptions
        do {
            switch location {
            case .path(let path):
                defaults = try Defaults(
                    url: URL(fileURLWithPath: ArgumentPath.absolute(path)), saveMode: .manual, options: options)
            case .suite(let name, application: nil):
                defaults = try Defaults(url: Defaults.suiteURL(named: name), saveMode: .manual, options: options)
            case .suite(let name, let application?):
                defaults = try Defaults(
                    url: Defaults.suiteURL(named: name, application: application), saveMode: .manual,
                    options: options)
            case .standard(let application):
                // An app's standard store is `defaults.json` in its directory: the suite named "defaults".
                defaults = try Defaults(
                    url: Defaults.suiteURL(named: "defaults", application: application), saveMode: .manual,
                    options: options)
            case .etcd(let endpoints, let prefix, let user, let cache):
                defaults = try openEtcd(endpoints, prefix: prefix, user: user, cache: cache)
            }
        } catch {
            throw ToolError(opening: error)
        }
        keep(defaults)
        if !layers.isEmpty {
            do {
                try defaults.setLayers(
                    overrides: LayerOptions.libraryLayers(layers.overrides),
                    fallbacks: LayerOptions.libraryLayers(layers.fallbacks))
            } catch {
                throw ToolError(opening: error)
            }
        }
        if let schema { try loadSchema(for: defaults, schema) }
        try learnSecrets(of: defaults, schema: schema)
        if isDryRun { dryRunSnapshots[ObjectIdentifier(defaults)] = try storedOnlyMembers(defaults) }
        return defaults
    }

    /// Keeps a store open until the process exits, and routes its unthrowable errors to the reporter. An etcd
    /// store with a local copy (`--etcd-cache`) reports its outage and its conflicts as notes instead: while no
    /// member answers, the command answers from the copy and keeps its writes there, and a conflict concerns an
    /// earlier write, not this command.
    func keep(_ defaults: Defaults) {
        if case .etcd(_, _, _, _?) = etcdLocations[ObjectIdentifier(defaults)] {
            let reporter = reporter.handler
            defaults.onError = { [weak defaults] error in
                let offline = (defaults?.etcd?.isStale ?? false) || (defaults?.etcd?.unsentChangeCount ?? 0) > 0
                if error.code == .conflict || (offline && [.readFailed, .writeFailed].contains(error.code)) {
                    Output.printError("codable-defaults: note: \(error)\n")
                } else {
                    reporter(error)
                }
            }
        } else {
            // A line the history skips (a record a crash cut short, a hand edit) is a note: it stops nothing (a
            // revert that needs it refuses, and says so), so it does not fail the command.
            let reporter = reporter.handler
            defaults.onError = { error in
                if Self.isHistoryNotice(error) {
                    Output.printError("codable-defaults: note: \(error)\n")
                } else {
                    reporter(error)
                }
            }
        }
        openStores.append(defaults)
    }

    /// The options of a store opened only to read (``CodableDefaults/Defaults/Options/readsOnly``): a reading
    /// command's, a dry run's, `diff`'s OTHER and `import`'s SOURCE.
    static let readingOptions: Defaults.Options = {
        var options = Defaults.Options.default
        options.readsOnly = true
        return options
    }()

    /// Whether `error` is the library's notice of a line its history file skipped (`invalidJSON` naming the
    /// history file, `.NAME.history` beside the store file).
    static func isHistoryNotice(_ error: DefaultsError) -> Bool {
        guard error.code == .invalidJSON, let path = error.path else { return false }
        let name = path.split(separator: "/").last ?? ""
        return name.hasPrefix(".") && name.hasSuffix(".history")
    }

    /// Writes the store's changes durably; under `--dry-run`, prints them instead (``printDryRun(_:)``).
    func save(_ defaults: Defaults) throws(ToolError) {
        if isDryRun { return try printDryRun(defaults) }
        do {
            try defaults.save()
            if let connection = defaults.etcd, connection.unsentChangeCount > 0,
                case .etcd(_, _, _, let cache?) = etcdLocations[ObjectIdentifier(defaults)]
            {
                Output.printError(
                    "codable-defaults: note: no etcd member answered: the change is kept in the local copy "
                        + "\(cache) and sent by the next command or program that reaches the cluster with it\n")
            }
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
        if case .etcd(let endpoints, let prefix, _, _) = etcdLocations[ObjectIdentifier(defaults)] {
            return "etcd \(endpoints.joined(separator: ",")) \(prefix)"
        }
        return "(in memory)"
    }

    /// The stored value of `key` (no registered or argument values: the tool sets none).
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

    /// Refuses the reserved schema-version member as a KEY to change, by the library's rule of which keys a store
    /// takes (`Defaults.refusalIfAny`).
    func refuseReserved(_ key: String) throws(ToolError) {
        let limit = Defaults.Options.default.maximumKeyLength
        guard Defaults.refusalIfAny(key, maximumLength: limit)?.code == .reservedKey else { return }
        throw .usage("\(key) is reserved for the file's schema version (set by migrations); it cannot be changed")
    }

    /// Runs one atomic update of `keys` (``CodableDefaults/Defaults/modify(forKeys:_:)-l5vt``): `body` gets their
    /// stored values under the file's lock and what it leaves is written durably before the lock is released. What
    /// `body` throws is thrown as it is; nothing is written then. The values `body` changed are checked against the
    /// store's schema (``checkSchema(_:changes:discarding:)``) before anything is written.
    ///
    /// Under `--dry-run`, the lock is not taken and nothing is written: `body` gets the stored values as this run
    /// read them (``currentStoredValue(_:key:)``), what it leaves is set in memory, and ``save(_:)`` prints the
    /// difference and discards it.
    func update(
        _ defaults: Defaults, keys: [String], _ body: (inout [JSONValue?]) throws(ToolError) -> Void
    ) throws(ToolError) {
        if isDryRun {
            var values: [JSONValue?] = []
            for key in keys { values.append(try currentStoredValue(defaults, key: key)) }
            let before = values
            try body(&values)
            try checkSchema(defaults, changes: Self.changed(keys, from: before, to: values))
            for (key, value) in zip(keys, values) {
                if let value { defaults.set(value, forKey: key) } else { defaults.removeValue(forKey: key) }
            }
            return try save(defaults)
        }
        do {
            try defaults.modify(forKeys: keys) { values in
                let before = values
                try body(&values)
                try checkSchema(defaults, changes: Self.changed(keys, from: before, to: values), discarding: false)
            }
        } catch let error as ToolError {
            throw error
        } catch let error as DefaultsError {
            throw ToolError(error)
        } catch {
            throw ToolError(.failure, "\(path(of: defaults)): \(error)")
        }
    }

    /// The keys whose values differ between `before` and `after`, with their new values.
    private static func changed(_ keys: [String], from before: [JSONValue?], to after: [JSONValue?]) -> [(
        key: String, value: JSONValue?
    )] {
        zip(keys, zip(before, after)).compactMap { key, pair in pair.0 == pair.1 ? nil : (key, pair.1) }
    }
}
