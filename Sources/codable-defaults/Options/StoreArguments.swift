import CodableDefaults
import Foundation

/// The option groups a command that works on a store takes besides where the store is (FILE, `--suite`,
/// `--standard`), declared once in its ``CommandConfiguration``: its usage line, its help, the lists of the tool's
/// help and the scanner get the groups' options from it, and ``StoreArguments/init(parsing:)`` takes them.
struct StoreGroups: OptionSet, Sendable, Hashable {
    let rawValue: Int

    /// `--etcd URLS --prefix P` and the other options of a store kept in etcd (``StoreLocation/etcdOptions``).
    static let etcd = StoreGroups(rawValue: 1 << 0)
    /// The read-only layers read around the store (``LayerOptions``).
    static let layers = StoreGroups(rawValue: 1 << 1)
    /// The JSON Schema the command checks against (``SchemaOptions``).
    static let schema = StoreGroups(rawValue: 1 << 2)
    /// `--dry-run` (``DryRun``): only for a command that writes the store.
    static let dryRun = StoreGroups(rawValue: 1 << 3)

    /// The options of the groups, in the order of a command's help: where the store is first, `--dry-run` last
    /// (after the command's own options, `own`).
    func options(around own: [OptionDeclaration]) -> [OptionDeclaration] {
        var options = StoreLocation.options
        if contains(.etcd) { options += StoreLocation.etcdOptions }
        if contains(.layers) { options += LayerOptions.options }
        if contains(.schema) { options += SchemaOptions.options }
        options += own
        if contains(.dryRun) { options.append(DryRun.option) }
        return options
    }
}

/// The store a command works on and how, as its command line gives it: where the store is (``StoreLocation``), and
/// of the groups the command declares (``StoreGroups``), the layers read around it, the schema its values are
/// checked against and `--dry-run`. A command takes them all with one ``init(parsing:)`` and hands them to
/// ``Tool/open(_:writes:)``.
struct StoreArguments: Sendable, Equatable {
    /// Where the store is.
    let location: StoreLocation
    /// The layers read around the store: none when the command does not declare ``StoreGroups/layers``.
    let layers: LayerOptions
    /// The schema the command checks values against, or `nil` when it does not declare ``StoreGroups/schema``.
    let schema: SchemaOptions?
    /// Whether the command was given `--dry-run` (only one that declares ``StoreGroups/dryRun`` can be).
    let isDryRun: Bool
    /// The file of the key secret values are encrypted with (`--encryption-key FILE`, else the environment
    /// variable ``encryptionKeyVariable``), as written; `nil` for none.
    let encryptionKey: String?

    /// The environment variable that names the key file when `--encryption-key` is not given.
    static let encryptionKeyVariable = "CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE"

    /// Takes the store (FILE, the first positional argument, or the option naming it) and the options of the
    /// groups the command's configuration declares.
    ///
    /// - Throws: A usage error naming what is wrong (``StoreLocation/init(parsing:)``,
    ///   ``LayerOptions/init(parsing:)``, ``SchemaOptions/init(parsing:)``).
    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        let groups = arguments.configuration.store ?? []
        location = try StoreLocation(parsing: &arguments)
        layers = groups.contains(.layers) ? try LayerOptions(parsing: arguments) : LayerOptions()
        schema = groups.contains(.schema) ? try SchemaOptions(parsing: arguments) : nil
        isDryRun = groups.contains(.dryRun) && arguments.flag(DryRun.option.name)
        encryptionKey = try Self.encryptionKey(parsing: arguments)
    }

    /// The key file `--encryption-key FILE` names, else the environment's ``encryptionKeyVariable`` (when not
    /// empty), else `nil`.
    ///
    /// - Throws: A usage error for an empty FILE.
    static func encryptionKey(parsing arguments: ScannedArguments) throws(ToolError) -> String? {
        if let path = arguments.value("encryption-key") {
            if path.isEmpty { throw .usage("--encryption-key FILE is empty") }
            return path
        }
        let fromEnvironment = ProcessInfo.processInfo.environment[encryptionKeyVariable]
        return fromEnvironment?.isEmpty == false ? fromEnvironment : nil
    }

    /// The library's key of ``encryptionKey``: its path made absolute against the current directory.
    var libraryEncryptionKey: Defaults.EncryptionKey? {
        encryptionKey.map { .file(URL(fileURLWithPath: ArgumentPath.absolute($0))) }
    }
}
