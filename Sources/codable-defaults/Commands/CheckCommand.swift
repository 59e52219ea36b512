import CodableDefaults
import Foundation

/// `check FILE [--strict]`: whether FILE is a valid store file, and whether its values follow its schema.
struct CheckCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "check",
        origin: .added(),
        abstract: "Check that FILE is a valid store file whose values follow its schema.",
        store: [.etcd, .schema],
        options: [
            OptionDeclaration(
                name: "strict", valueName: nil, summary: "Also report the keys the schema does not list.")
        ],
        discussion: [
            "Prints 'FILE: valid (N keys)' and exits with 0, or prints the error with its line and column and "
                + "exits with 4. A missing file is an error here (exit 4).",
            "With a schema (the store's own: settings.schema.json beside settings.json, or on etcd the prefix's "
                + "schema key; or the file --schema names), every stored value is checked against it, and "
                + "'checked against SCHEMA' follows the count. Each rule a value breaks is printed on a line of "
                + "its own (FILE: /volume: 1.5 must be at most 1 (schema keyword \"maximum\")), a secret key's "
                + "value left out, and the exit status is 4. The keywords checked: " + SchemaOptions.schemaKeywords
                + "; a schema with another keyword exits with 4 (--no-schema skips the store's own). "
                + "--strict also reports each stored key the schema does not list (FILE: key \"name\" is not in "
                + "the schema), as a failure; it needs a schema (else exit 2).",
        ],
        examples: [
            "codable-defaults check settings.json",
            "codable-defaults check settings.json --strict",
            "codable-defaults check settings.json --schema app.schema.json",
        ],
        exitCases: [
            .missingFile("a missing file for check"), .invalidFile("values that break the schema, for check"),
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// `--strict`: keys the schema does not list are failures.
    let strict: Bool

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        strict = arguments.flag("strict")
        if strict && store.schema?.isOff == true {
            throw .usage("--strict reports the keys the schema does not list; --no-schema has none")
        }
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        let path = opened.path
        if opened.defaults.url != nil {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ToolError(.badFile, "\(path): no such file")
            }
        }
        // Text that is not JSON in etcd is no stored member, yet it is there: the store is not valid.
        let unreadable = opened.defaults.unreadableValues().map(\.description)
        if !unreadable.isEmpty { throw ToolError(.badFile, unreadable.joined(separator: "\n")) }
        let members = try tool.storedMembers(opened, includingReserved: false)
        let counted = "\(members.count) \(members.count == 1 ? "key" : "keys")"
        guard let inEffect = opened.schema else {
            if strict {
                throw .usage(
                    "--strict reports the keys the schema does not list, and \(path) has no schema "
                        + "(\(opened.defaults.schemaLocation) is missing); give --schema FILE")
            }
            return try Output.print("\(path): valid (\(counted))\n")
        }
        var object: [String: JSONValue] = [:]
        for (key, value) in members { object[key] = value }
        var violations = inEffect.schema.violations(of: .object(object))
        if object.count != members.count {
            // Two keys whose names differ only in Unicode normalization are one in a dictionary: each key alone.
            violations = members.flatMap { inEffect.schema.violations(of: $0.value, forKey: $0.key) }
            for key in inEffect.schema.keyNames where !members.contains(where: { $0.key.utf8.elementsEqual(key.utf8) })
            {
                violations += inEffect.schema.violations(of: nil, forKey: key)
            }
        }
        var problems = violations.map { "\(path): \($0)" }
        if strict {
            for (key, _) in members where !inEffect.schema.lists(key) {
                problems.append("\(path): key \(KeyText.message(key)) is not in the schema")
            }
        }
        guard problems.isEmpty else {
            throw ToolError(
                .badFile,
                problems.map(KeyText.line).joined(separator: "\ncodable-defaults: ")
                    + "\ncodable-defaults: \(path): \(problems.count) \(problems.count == 1 ? "problem" : "problems") "
                    + "against the schema \(inEffect.location)")
        }
        try Output.print("\(path): valid (\(counted)), checked against \(inEffect.location)\n")
    }
}
