import CodableDefaults
import CodableDefaultsEtcd
import Foundation

extension Tool {
    /// Opens the store kept in etcd at `endpoints` under `prefix`, with the `.manual` save mode, as `user` when
    /// given.
    ///
    /// The library's initializer is `async`; the tool waits for it on its thread (`Defaults.openingEtcd`).
    ///
    /// - Throws: ``DefaultsError`` (`invalidArgument` for an endpoint that is not a URL; `readFailed` naming the
    ///   password file when it cannot be read or is not UTF-8; what the initializer throws when etcd cannot be read
    ///   or refuses the user).
    func openEtcd(_ endpoints: [String], prefix: String, user: EtcdUser?) throws(DefaultsError) -> Defaults {
        var urls: [URL] = []
        for endpoint in endpoints {
            guard let url = URL(string: endpoint) else {
                throw DefaultsError(.invalidArgument, "--etcd: \(shellQuoted(endpoint)) is not a URL")
            }
            urls.append(url)
        }
        var password: String?
        if let user { password = try self.password(in: user.passwordFile) }
        let defaults = try Defaults.openingEtcd(
            urls, prefix: prefix, saveMode: .manual, username: user?.name, password: password)
        etcdLocations[ObjectIdentifier(defaults)] = .etcd(endpoints: endpoints, prefix: prefix, user: user)
        return defaults
    }

    /// The password in the file at `path`: its UTF-8 text without one trailing newline (`\n` or `\r\n`), as
    /// `echo secret > FILE` and mounted secrets leave it. Its text is never quoted in an error.
    ///
    /// - Throws: ``DefaultsError`` (`readFailed`) naming the file.
    private func password(in path: String) throws(DefaultsError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: KernelPath.absolute(path)))
        } catch {
            throw DefaultsError(
                .readFailed, "--etcd-password-file: cannot read the file: \((error as NSError).localizedDescription)",
                path: path)
        }
        guard var text = String(data: data, encoding: .utf8) else {
            throw DefaultsError(.readFailed, "--etcd-password-file: the file is not UTF-8 text", path: path)
        }
        if text.hasSuffix("\n") { text.removeLast() }  // "\r\n" is one Character: removed whole.
        return text
    }
}
