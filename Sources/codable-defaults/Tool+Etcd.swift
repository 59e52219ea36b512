import CodableDefaults
import CodableDefaultsEtcd
import Foundation

extension Tool {
    /// Opens the store kept in etcd at `endpoints` under `prefix`, with the `.manual` save mode.
    ///
    /// The library's initializer is `async`; the tool waits for it on its thread (`Defaults.openingEtcd`).
    ///
    /// - Throws: ``DefaultsError`` (`invalidArgument` for an endpoint that is not a URL; what the initializer
    ///   throws when etcd cannot be read).
    func openEtcd(_ endpoints: [String], prefix: String) throws(DefaultsError) -> Defaults {
        var urls: [URL] = []
        for endpoint in endpoints {
            guard let url = URL(string: endpoint) else {
                throw DefaultsError(.invalidArgument, "--etcd: \(shellQuoted(endpoint)) is not a URL")
            }
            urls.append(url)
        }
        let defaults = try Defaults.openingEtcd(urls, prefix: prefix, saveMode: .manual)
        etcdLocations[ObjectIdentifier(defaults)] = .etcd(endpoints: endpoints, prefix: prefix)
        return defaults
    }
}
