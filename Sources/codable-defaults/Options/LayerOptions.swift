import CodableDefaults
import Foundation

/// The read-only layers a command reads around the store (`--env-prefix`, `--override`, `--fallback`...), in
/// the order given on the command line, and whether secret values may be printed.
///
/// Without layer options a command reads the stored values only, as it always did. With them, it reads what a program
/// opening the store with these layers reads (``CodableDefaults/Defaults/Layer``): the overrides, the stored value,
/// then the fallbacks, first found wins.
struct LayerOptions: Sendable, Equatable {
    /// One layer as given on the command line; a path as written (made absolute when the store is opened).
    enum Layer: Sendable, Equatable {
        /// `--env-prefix PREFIX` or, secret, `--secret-env-prefix PREFIX`: the tool's own environment.
        case environment(prefix: String, secret: Bool)
        /// `--override FILE` or `--fallback FILE` (or, secret, `--secret-override FILE` or `--secret-fallback FILE`):
        /// a JSON file.
        case file(String, secret: Bool)
        /// `--fallback-dir DIR` or, secret, `--secret-dir DIR`: a directory of one file per key.
        case directory(String, secret: Bool)
    }

    /// The layers read before the stored value, in order.
    var overrides: [Layer] = []
    /// The layers read after the stored value, in order.
    var fallbacks: [Layer] = []
    /// `--show-secrets`: print secret values instead of refusing or hiding them.
    var showSecrets = false

    /// Whether no layer is given: the command reads the stored values only.
    var isEmpty: Bool { overrides.isEmpty && fallbacks.isEmpty }

    /// The options, as each command that reads layers lists them in its help.
    static let options = [
        OptionDeclaration(
            name: "env-prefix", valueName: "PREFIX", repeatable: true,
            summary: "Override with the environment (KEY server.port: PREFIXSERVER_PORT)."),
        OptionDeclaration(
            name: "override", valueName: "FILE", repeatable: true, summary: "Override with the JSON object in FILE."),
        OptionDeclaration(
            name: "fallback", valueName: "FILE", repeatable: true,
            summary: "Fall back to the JSON object in FILE when nothing is stored."),
        OptionDeclaration(
            name: "fallback-dir", valueName: "DIR", repeatable: true,
            summary: "Fall back to DIR's files: one per key, its contents the value."),
        OptionDeclaration(
            name: "secret-dir", valueName: "DIR", repeatable: true,
            summary: "As --fallback-dir, its values secret (not printed)."),
        OptionDeclaration(
            name: "secret-env-prefix", valueName: "PREFIX", repeatable: true,
            summary: "As --env-prefix, its values secret (not printed)."),
        OptionDeclaration(
            name: "secret-override", valueName: "FILE", repeatable: true,
            summary: "As --override, its values secret (not printed)."),
        OptionDeclaration(
            name: "secret-fallback", valueName: "FILE", repeatable: true,
            summary: "As --fallback, its values secret (not printed)."),
        OptionDeclaration(name: "show-secrets", valueName: nil, summary: "Print secret values."),
    ]

    /// The layers of the layer options the command line gives, in the order given, and `--show-secrets`.
    ///
    /// - Throws: A usage error for an empty PREFIX, FILE or DIR.
    init(parsing arguments: ScannedArguments) throws(ToolError) {
        showSecrets = arguments.flag("show-secrets")
        for (name, value) in arguments.repeated {
            if value.isEmpty {
                let valueName = Self.options.first { $0.name == name }?.valueName ?? "value"
                throw .usage("--\(name) \(valueName) is empty")
            }
            switch name {
            case "env-prefix": overrides.append(.environment(prefix: value, secret: false))
            case "secret-env-prefix": overrides.append(.environment(prefix: value, secret: true))
            case "override": overrides.append(.file(value, secret: false))
            case "secret-override": overrides.append(.file(value, secret: true))
            case "fallback": fallbacks.append(.file(value, secret: false))
            case "secret-fallback": fallbacks.append(.file(value, secret: true))
            case "fallback-dir": fallbacks.append(.directory(value, secret: false))
            case "secret-dir": fallbacks.append(.directory(value, secret: true))
            default: continue
            }
        }
    }

    /// The paragraph on layer options, in the help of each command that takes them.
    static let helpParagraph =
        "Layer options read values around the store, as a program opening it with layers does (they are never "
        + "written, created or locked): overrides win over the stored value (--env-prefix, --secret-env-prefix, "
        + "--override, --secret-override), fallbacks are read when nothing is stored (--fallback, "
        + "--secret-fallback, --fallback-dir, --secret-dir). "
        + "Each may be given more than once; overrides are read in the order given, then the stored value, then "
        + "the fallbacks in the order given. A variable is named PREFIX and KEY with letters uppercased and "
        + "other characters made '_'. A value from the environment or a directory's file is JSON when it parses, "
        + "else a string. A fallback or override file that is not a JSON object exits with 4, naming its "
        + "path:line:column; a missing one is empty."

    /// No layers.
    init() {}

    /// The library's layers for `layers`: paths made absolute against the current directory.
    static func libraryLayers(_ layers: [Layer]) -> [Defaults.Layer] {
        layers.map { layer in
            switch layer {
            case .environment(let prefix, let secret): .environment(prefix: prefix, secret: secret)
            case .file(let path, let secret): .file(URL(fileURLWithPath: ArgumentPath.absolute(path)), secret: secret)
            case .directory(let path, let secret):
                .directory(URL(fileURLWithPath: ArgumentPath.absolute(path)), secret: secret)
            }
        }
    }
}
