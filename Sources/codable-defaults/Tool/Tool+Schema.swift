import CodableDefaults
import Foundation

/// A JSON Schema in effect for a store of the run, and where it was read from (for messages).
struct SchemaInEffect {
    /// The schema.
    let schema: Defaults.Schema
    /// Its file's path, or the etcd key it was read from.
    let location: String
}

/// The schemas the run's stores are checked against (``SchemaOptions``).
extension Tool {
    /// Reads the schema `options` name for `defaults`, for ``checkSchema(_:changes:discarding:)``: the file `--schema`
    /// names, else the store's own (beside its file, under its etcd prefix), else none.
    ///
    /// - Throws: Status 4 when the schema cannot be read, is not JSON (with line and column) or uses a keyword
    ///   the tool cannot check; a missing `--schema FILE` too.
    func loadSchema(for defaults: Defaults, _ options: SchemaOptions) throws(ToolError) -> SchemaInEffect? {
        if options.isOff { return nil }
        let loaded: SchemaInEffect?
        do {
            if let file = options.file {
                let path = ArgumentPath.absolute(file)
                loaded = SchemaInEffect(
                    schema: try Defaults.Schema(contentsOf: URL(fileURLWithPath: path)), location: path)
            } else {
                loaded = try defaults.publishedSchema().map {
                    SchemaInEffect(schema: $0, location: defaults.schemaLocation)
                }
            }
        } catch {
            var message = error.description
            if options.file == nil { message += " (the store's schema; --no-schema goes on without it)" }
            throw ToolError(.badFile, message)
        }
        return loaded
    }

    /// Refuses `changes` (each key's new value; `nil` for a removal) when the schema in effect for `store`
    /// refuses one: status 2, each broken rule on a line of its own, nothing written (the store's unsaved
    /// changes are discarded, unless `discarding` is false: inside an update, which writes nothing when it throws).
    func checkSchema(
        _ store: OpenedStore, changes: [(key: String, value: JSONValue?)], discarding: Bool = true
    ) throws(ToolError) {
        guard let inEffect = store.schema else { return }
        var broken: [Defaults.Schema.Violation] = []
        for (key, value) in changes where key != Defaults.schemaVersionKey {
            broken += inEffect.schema.violations(of: value, forKey: key)
        }
        guard !broken.isEmpty else { return }
        if discarding { store.defaults.discardUnsavedChanges() }
        throw .refused(refusal(broken, store, inEffect))
    }

    /// ``checkSchema(_:changes:discarding:)`` of the values `keys` hold now in `store` (set and not yet saved), as
    /// they will be written; a key without a stored value is a removal.
    func checkSchema(_ store: OpenedStore, keys: [String]) throws(ToolError) {
        guard store.schema != nil else { return }
        var changes: [(key: String, value: JSONValue?)] = []
        for key in keys { changes.append((key, try currentStoredValue(store, key: key))) }
        try checkSchema(store, changes: changes)
    }

    /// The message of a refused change.
    private func refusal(_ broken: [Defaults.Schema.Violation], _ store: OpenedStore, _ inEffect: SchemaInEffect)
        -> String
    {
        "\(store.path): the schema \(inEffect.location) refuses the change; nothing was written:\n"
            + broken.map { "  \(KeyText.line($0.description))" }.joined(separator: "\n")
    }
}
