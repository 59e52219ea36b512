import CodableDefaults
import Foundation

/// A store this run opened (``Tool/open(_:writes:)``): the library's store with what the run knows of it, which
/// the library does not keep: where it is, as the command line named it (an etcd store has no file to name), the
/// schema its changes are checked against, and for a dry run the stored members as they were opened.
struct OpenedStore {
    /// The library's store, opened with the `.manual` save mode.
    let defaults: Defaults
    /// Where the store is, as the command line named it.
    let location: StoreLocation
    /// The JSON Schema the command checks the store's changes against, when it has one (``SchemaOptions``).
    let schema: SchemaInEffect?
    /// Whether the command runs dry (``DryRun``): ``Tool/save(_:)`` prints the changes and discards them.
    let isDryRun: Bool
    /// Under `--dry-run`, the stored members as the store was opened (``Tool/storedOnlyMembers(_:)``); empty
    /// otherwise.
    var membersAsOpened: [(key: String, value: JSONValue)]
    /// Whether the command was given `--show-secrets`: an encrypted value is then read as its value (which needs
    /// the key), not as its encrypted text (``Tool/storedValue(_:key:)``).
    var showsSecrets: Bool

    /// The store for messages: its file's path, or the etcd endpoints and prefix.
    var path: String {
        if let url = defaults.url { return url.path }
        if case .etcd(let endpoints, let prefix, _, _, _) = location {
            return "etcd \(endpoints.joined(separator: ",")) \(prefix)"
        }
        return "(in memory)"
    }
}
