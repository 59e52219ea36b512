import Foundation

/// A command of the tool: the first argument.
enum Command: String, CaseIterable, Sendable {
    case read
    case readType = "read-type"
    case write, update, rename, delete, keys, check, watch, `import`, export, explain, help
}

/// Where the store of a command is: a path, a suite, an app's standard store, or a prefix in etcd.
enum StoreLocation: Sendable, Equatable {
    /// A store file given by its path.
    case path(String)
    /// The suite `name`: in the tool's own standard directory (as `Defaults(suiteName:)` resolves it) when
    /// `application` is `nil`, else in the standard directory of the app `application`.
    case suite(String, application: String?)
    /// The standard store (`defaults.json`) of the app `application`.
    case standard(application: String)
    /// The store kept in the etcd cluster at `endpoints`, under the keys that start with `prefix`, as `user` when
    /// the cluster has authentication.
    case etcd(endpoints: [String], prefix: String, user: EtcdUser?)

    /// How the location is written on a command line, quoted for a POSIX shell.
    var commandLineSpelling: String {
        switch self {
        case .path(let path): return shellQuoted(path)
        case .suite(let name, application: nil): return "--suite \(shellQuoted(name))"
        case .suite(let name, let application?):
            return "--suite \(shellQuoted(name)) --app \(shellQuoted(application))"
        case .standard(let application): return "--standard \(shellQuoted(application))"
        case .etcd(let endpoints, let prefix, let user):
            let store = "--etcd \(shellQuoted(endpoints.joined(separator: ","))) --prefix \(shellQuoted(prefix))"
            guard let user else { return store }
            return store
                + " --etcd-user \(shellQuoted(user.name)) --etcd-password-file \(shellQuoted(user.passwordFile))"
        }
    }
}

/// The etcd user a command authenticates as: `--etcd-user NAME --etcd-password-file FILE`. The password is read
/// from the file when the store opens; it is never taken on the command line (where other users see it) and never
/// printed.
struct EtcdUser: Sendable, Equatable {
    /// The user's name.
    let name: String
    /// The path of the file that holds the password.
    let passwordFile: String
}

/// One fully parsed and checked invocation of the tool.
enum Request: Sendable, Equatable {
    /// `read FILE [KEY]`.
    case read(StoreLocation, key: String?, layers: LayerOptions)
    /// `read-type FILE KEY`.
    case readType(StoreLocation, key: String, layers: LayerOptions)
    /// `write FILE KEY VALUE [--string]` or `write FILE KEY -TYPE VALUE...`.
    case write(StoreLocation, key: String, value: WriteValue, layers: LayerOptions)
    /// `update FILE KEY --add N`.
    case update(StoreLocation, key: String, add: String)
    /// `rename FILE OLD NEW`.
    case rename(StoreLocation, from: String, to: String)
    /// `delete FILE KEY... [--force]` or `delete FILE --all`.
    case delete(StoreLocation, keys: [String], all: Bool, force: Bool)
    /// `keys FILE`.
    case keys(StoreLocation, layers: LayerOptions)
    /// `check FILE`.
    case check(StoreLocation)
    /// `watch FILE [KEY...] [--initial]`.
    case watch(StoreLocation, keys: [String], initial: Bool)
    /// `import FILE SOURCE`.
    case importMembers(StoreLocation, source: String)
    /// `export FILE [DEST]`.
    case export(StoreLocation, destination: String?, layers: LayerOptions)
    /// `explain FILE KEY`.
    case explain(StoreLocation, key: String, layers: LayerOptions)
    /// `--help`, `help [COMMAND]` or `COMMAND --help`.
    case help(Command?)
    /// `--version`.
    case version

    /// The command the request runs, for the usage hint of an error found after parsing.
    var command: Command? {
        switch self {
        case .read: return .read
        case .readType: return .readType
        case .write: return .write
        case .update: return .update
        case .rename: return .rename
        case .delete: return .delete
        case .keys: return .keys
        case .check: return .check
        case .watch: return .watch
        case .importMembers: return .import
        case .export: return .export
        case .explain: return .explain
        case .help, .version: return nil
        }
    }
}
