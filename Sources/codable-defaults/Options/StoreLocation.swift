/// Where the store of a command is: a path, a suite, an app's standard store, or a prefix in etcd.
///
/// The option group of every command that works on a store: FILE, or `--suite NAME [--app APP]`, or
/// `--standard APP` (``options``), or, for the commands that declare them, `--etcd URLS --prefix P`
/// (``etcdOptions``).
enum StoreLocation: Sendable, Equatable {
    /// A store file given by its path.
    case path(String)
    /// The suite `name`: in the tool's own standard directory (as `Defaults(suiteName:)` resolves it) when
    /// `application` is `nil`, else in the standard directory of the app `application`.
    case suite(String, application: String?)
    /// The standard store (`defaults.json`) of the app `application`.
    case standard(application: String)
    /// The store kept in the etcd cluster at `endpoints`, under the keys that start with `prefix`, as `user` when
    /// the cluster has authentication, with its local copy in the file `cache` (`--etcd-cache`) when given, reached
    /// with the TLS files and timeouts of `connection`.
    case etcd(endpoints: [String], prefix: String, user: EtcdUser?, cache: String?, connection: EtcdConnectionSettings)

    /// The options that say which store a command works on, instead of FILE.
    static let options = [
        OptionDeclaration(name: "suite", valueName: "NAME", summary: "Use the suite NAME instead of FILE."),
        OptionDeclaration(
            name: "standard", valueName: "APP", summary: "Use the standard store of the app APP instead of FILE."),
        OptionDeclaration(name: "app", valueName: "APP", summary: "With --suite: the suite of the app APP."),
        OptionDeclaration(
            name: "encryption-key", valueName: "FILE",
            summary: "Open secret values with the key in FILE (else $CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE)."),
    ]

    /// How the location is written on a command line, quoted for a POSIX shell.
    var commandLineSpelling: String {
        switch self {
        case .path(let path): return shellQuoted(path)
        case .suite(let name, application: nil): return "--suite \(shellQuoted(name))"
        case .suite(let name, let application?):
            return "--suite \(shellQuoted(name)) --app \(shellQuoted(application))"
        case .standard(let application): return "--standard \(shellQuoted(application))"
        case .etcd(let endpoints, let prefix, let user, let cache, let connection):
            var store = "--etcd \(shellQuoted(endpoints.joined(separator: ","))) --prefix \(shellQuoted(prefix))"
            if let cache { store += " --etcd-cache \(shellQuoted(cache))" }
            store += connection.commandLineSpelling
            guard let user else { return store }
            return store
                + " --etcd-user \(shellQuoted(user.name)) --etcd-password-file \(shellQuoted(user.passwordFile))"
        }
    }

    /// Whether an option (`--suite`, `--standard` or `--etcd`) names the store, so that no FILE is given.
    static func isNamedByOption(in arguments: ScannedArguments) -> Bool {
        ["suite", "standard", "etcd"].contains { arguments.value($0) != nil }
    }

    /// The store the command line names: `--etcd`, `--suite`, `--standard`, or FILE, the first positional
    /// argument (which this takes).
    ///
    /// - Throws: A usage error: both FILE and an option, two options that exclude each other, an option that
    ///   needs another, no store at all, an empty FILE.
    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        let suite = arguments.value("suite")
        let standard = arguments.value("standard")
        let application = arguments.value("app")
        if let etcd = try Self.etcd(parsing: arguments) {
            self = etcd
            return
        }
        if suite != nil && standard != nil {
            throw .usage("give either --suite or --standard, not both")
        }
        if application != nil && suite == nil {
            throw .usage("--app names the app whose suite --suite opens; it needs --suite")
        }
        if let option = suite.map({ "--suite \(shellQuoted($0))" }) ?? standard.map({ "--standard \(shellQuoted($0))" })
        {
            try Self.refuseFile(arguments, option: option)
            if let suite {
                self = .suite(suite, application: application)
                return
            }
            if let standard {
                self = .standard(application: standard)
                return
            }
        }
        let path = try arguments.take("FILE (or --suite NAME, or --standard APP)")
        if path.isEmpty { throw .usage("FILE is empty") }
        self = .path(path)
    }

    /// Refuses a FILE given together with `--suite`, `--standard` or `--etcd` (`option`, as written): more
    /// positionals than the command declares, or a first positional that would be a KEY but names a path (it
    /// holds a `/` or ends with `.json`) and came before `--`. Read as a KEY, such a FILE would read or change
    /// another key.
    static func refuseFile(_ arguments: ScannedArguments, option: String) throws(ToolError) {
        guard let first = arguments.positionals.first else { return }
        let declared = arguments.configuration.arguments.filter { $0.kind != .store }
        let takesKey = declared.first?.kind == .key
        let beforeDashes = arguments.positionalsBeforeDashes.map { $0 > 0 } ?? true
        let looksLikePath = first.contains("/") || first.hasSuffix(".json")
        let tooMany: Bool
        if let typeFlag = arguments.typeFlag {
            // The type flag and its values stand for the last argument: the others come before the flag.
            tooMany = typeFlag.position > (declared.firstIndex { $0.arity == .typedValues } ?? declared.count)
        } else {
            var most: Int? = 0
            for argument in declared { most = most.flatMap { sum in argument.most.map { sum + $0 } } }
            tooMany = arguments.positionals.count > (most ?? Int.max)
        }
        if tooMany || (takesKey && beforeDashes && looksLikePath) {
            var message = "\(shellQuoted(first)) is given as FILE together with \(option): "
            message += "give either FILE or \(option), not both"
            if !tooMany {
                message += " (a KEY that looks like a path goes after --)"
            }
            throw .usage(message)
        }
    }
}
