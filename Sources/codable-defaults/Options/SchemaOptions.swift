import CodableDefaults

/// Which JSON Schema a command checks values against: `--schema FILE`, the store's own (the default), or none
/// (`--no-schema`).
///
/// The store's own schema is the one a program keeps with it (`Defaults.publishSchema(for:)`): for a store file,
/// the file beside it named after it (`settings.json` → `settings.schema.json`); for an etcd prefix, the prefix's
/// reserved schema key. Without one, nothing is checked.
struct SchemaOptions: Sendable, Equatable {
    /// `--schema FILE`: the schema file to use instead of the store's own.
    var file: String?
    /// `--no-schema`: check nothing, not even against the store's own schema.
    var isOff = false

    /// The options, as each command that checks values lists them.
    static let options = [
        OptionDeclaration(
            name: "schema", valueName: "FILE",
            summary: "Check values against the JSON Schema in FILE instead of the store's own."),
        OptionDeclaration(
            name: "no-schema", valueName: nil, summary: "Check no schema, not even the store's own."),
    ]

    /// The paragraph on schemas, in the help of each command that writes values.
    static let writeParagraph =
        "Values are checked against the store's JSON Schema, when it has one: the file beside the store named "
        + "after it (settings.json: settings.schema.json; a program writes it with Defaults.publishSchema), on etcd "
        + "the prefix's schema key, or the file --schema names. A value the schema refuses exits with 2, naming "
        + "each rule it breaks (/volume: 1.5 must be at most 1 (schema keyword \"maximum\")), and nothing is "
        + "written. Only the values the command writes are checked (and a removal, against \"required\"); "
        + "'check' checks the whole store. The keywords checked: " + schemaKeywords + ". A schema with any other "
        + "keyword (pattern, $ref, oneOf...) is refused (exit 4) rather than half checked; --no-schema skips it."

    /// The keywords the tool checks, for help texts.
    static var schemaKeywords: String {
        Defaults.Schema.checkedKeywords.joined(separator: ", ")
    }

    /// Takes `--schema FILE` and `--no-schema`.
    ///
    /// - Throws: A usage error for both at once, or an empty FILE.
    init(parsing arguments: ScannedArguments) throws(ToolError) {
        file = arguments.value("schema")
        isOff = arguments.flag("no-schema")
        if file != nil && isOff { throw .usage("give either --schema or --no-schema, not both") }
        if file?.isEmpty == true { throw .usage("--schema FILE is empty") }
    }
}
