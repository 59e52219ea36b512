import CodableDefaults
import CodableDefaultsEtcd
import Foundation

/// The stores of a run: opened for the run, saved explicitly, read as JSON values.
extension Tool {
    /// Opens the store `store` names for this run, with the `.manual` save mode and its layers, and reads the
    /// schema its changes are checked against (``loadSchema(for:_:)``) and which of its keys are secret
    /// (``learnSecrets(of:schema:)``). The store stays open until the process exits.
    ///
    /// The layers are read-only: the library reads their files and directories, and never writes or locks them.
    /// A command that does not write (`writes` false), and any under `--dry-run`, opens the store only to read
    /// (``Tool/readingOptions``): it takes no lock and leaves a crashed writer's temporary files alone.
    func open(_ store: StoreArguments, writes: Bool = false) throws(ToolError) -> OpenedStore {
        let defaults: Defaults
        var options = writes && !store.isDryRun ? Defaults.Options.default : Self.readingOptions
        options.encryptionKey = store.libraryEncryptionKey
        do {
            switch store.location {
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
            case .etcd(let endpoints, let prefix, let user, let cache, let connection):
                defaults = try openEtcd(
                    endpoints, prefix: prefix, user: user, cache: cache, connection: connection,
                    encryptionKey: store.libraryEncryptionKey)
            }
        } catch {
            throw ToolError(opening: error)
        }
        routeErrors(of: defaults, withLocalCopy: store.location.etcdCache != nil)
        if !store.layers.isEmpty {
            do {
                try defaults.setLayers(
                    overrides: LayerOptions.libraryLayers(store.layers.overrides),
                    fallbacks: LayerOptions.libraryLayers(store.layers.fallbacks))
            } catch {
                throw ToolError(opening: error)
            }
        }
        let schema = try store.schema.flatMap { options throws(ToolError) in try loadSchema(for: defaults, options) }
        var opened = OpenedStore(
            defaults: defaults, location: store.location, schema: schema, isDryRun: store.isDryRun,
            membersAsOpened: [], showsSecrets: store.layers.showSecrets)
        try learnSecrets(of: opened, schema: store.schema)
        if store.isDryRun { opened.membersAsOpened = try storedOnlyMembers(opened) }
        openStores.append(opened)
        return opened
    }

    /// Opens the JSON file at `path` only to read, as a source of values (`diff`'s OTHER, `import`'s SOURCE): no
    /// layers, no schema, its secret keys not learned (a command that prints its values learns them:
    /// ``learnSecrets(of:schema:)``). The store stays open until the process exits.
    ///
    /// - Throws: Status 4 when there is no file at `path` (a missing source is not an empty store); the library's error
    ///   when it cannot be read.
    func openToRead(_ path: String, encryptionKey: Defaults.EncryptionKey?) throws(ToolError) -> OpenedStore {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError(.badFile, "\(path): no such file")
        }
        let defaults: Defaults
        var options = Self.readingOptions
        options.encryptionKey = encryptionKey
        do {
            defaults = try Defaults(
                url: URL(fileURLWithPath: ArgumentPath.absolute(path)), saveMode: .manual, options: options)
        } catch {
            throw ToolError(opening: error)
        }
        routeErrors(of: defaults, withLocalCopy: false)
        let opened = OpenedStore(
            defaults: defaults, location: .path(path), schema: nil, isDryRun: false, membersAsOpened: [],
            showsSecrets: false)
        openStores.append(opened)
        return opened
    }

    /// Routes the errors `defaults` cannot throw to the reporter. An etcd store with a local copy (`--etcd-cache`)
    /// reports its outage and its conflicts as notes instead: while no member answers, the command answers from the
    /// copy and keeps its writes there, and a conflict concerns an earlier write, not this command.
    private func routeErrors(of defaults: Defaults, withLocalCopy: Bool) {
        let reporter = reporter.handler
        if withLocalCopy {
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
            defaults.onError = { error in
                if Self.isHistoryNotice(error) {
                    Output.printError("codable-defaults: note: \(error)\n")
                } else {
                    reporter(error)
                }
            }
        }
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
    func save(_ store: OpenedStore) throws(ToolError) {
        let defaults = store.defaults
        if store.isDryRun { return try printDryRun(store) }
        do {
            try defaults.save()
            if let connection = defaults.etcd, connection.unsentChangeCount > 0, let cache = store.location.etcdCache {
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

    /// The stored value of `key` (no registered or argument values: the tool sets none).
    func storedValue(_ store: OpenedStore, key: String) throws(ToolError) -> JSONValue {
        // An encrypted value is its encrypted text, which stored again under its name is the same value, unless the
        // command shows secrets: then it is decrypted, and without the key that is an error.
        if !store.showsSecrets, let sealed = store.defaults.encryptedText(forKey: key) { return .string(sealed) }
        let reported = reporter.count
        guard let value = store.defaults.value(JSONValue.self, forKey: key) else {
            // The store reported why (and the reporter printed it), unless the value vanished meanwhile.
            let message = "\(store.path): key \(KeyText.message(key)): the stored value cannot be read"
            throw ToolError(.badFile, reporter.count > reported ? nil : message)
        }
        return value
    }

    /// Every stored key and value of the store, with the reserved schema-version member when the file has
    /// one (so an export keeps the file's schema version), sorted as in the file (by UTF-8 bytes).
    ///
    /// A list, not a `[String: JSONValue]`: `String` keys compare by canonical equivalence, so a dictionary
    /// would merge two members whose names differ only in Unicode normalization.
    func storedMembers(_ store: OpenedStore, includingReserved: Bool = true) throws(ToolError)
        -> [(key: String, value: JSONValue)]
    {
        var members: [(key: String, value: JSONValue)] = []
        for key in store.defaults.keys { members.append((key, try storedValue(store, key: key))) }
        if includingReserved, let version = store.defaults.object(forKey: Defaults.schemaVersionKey) {
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
    ///
    /// An encrypted value reaches `body` decrypted, which needs the key (else status 4, nothing written), unless
    /// `asEncryptedText`: then as its encrypted text, which `body` may leave as it is (`edit`).
    func update(
        _ store: OpenedStore, keys: [String], asEncryptedText: Bool = false,
        _ body: (inout [JSONValue?]) throws(ToolError) -> Void
    ) throws(ToolError) {
        let defaults = store.defaults
        if store.isDryRun {
            var values: [JSONValue?] = []
            for key in keys {
                if let text = defaults.encryptedText(forKey: key) {
                    if asEncryptedText {
                        values.append(.string(text))
                        continue
                    }
                    if !defaults.hasEncryptionKey { throw Self.noEncryptionKey(store, key: key) }
                }
                values.append(try currentStoredValue(store, key: key))
            }
            let before = values
            try body(&values)
            try checkSchema(store, changes: Self.changed(keys, from: before, to: values))
            for (key, value) in zip(keys, values) {
                if let value { defaults.set(value, forKey: key) } else { defaults.removeValue(forKey: key) }
            }
            return try save(store)
        }
        do {
            func transform(_ values: inout [JSONValue?]) throws {
                let before = values
                try body(&values)
                try checkSchema(store, changes: Self.changed(keys, from: before, to: values), discarding: false)
            }
            if asEncryptedText {
                try defaults.modifyShowingEncryptedText(forKeys: keys, transform)
            } else {
                try defaults.modify(forKeys: keys, transform)
            }
        } catch let error as ToolError {
            throw error
        } catch let error as DefaultsError {
            throw ToolError(error)
        } catch {
            throw ToolError(.failure, "\(store.path): \(error)")
        }
    }

    /// The keys whose values differ between `before` and `after`, with their new values.
    private static func changed(_ keys: [String], from before: [JSONValue?], to after: [JSONValue?]) -> [(
        key: String, value: JSONValue?
    )] {
        zip(keys, zip(before, after)).compactMap { key, pair in pair.0 == pair.1 ? nil : (key, pair.1) }
    }
}
