import CodableDefaults
import CodableDefaultsEtcd
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Tool {
    /// Opens the store kept in etcd at `endpoints` under `prefix`, with the `.manual` save mode, as `user` when
    /// given, with the TLS files and timeouts of `connection`.
    ///
    /// The library's initializer is `async`; the tool waits for it on its thread (`Defaults.openingEtcd`).
    ///
    /// - Throws: ``CodableDefaults/DefaultsError`` (`invalidArgument` for an endpoint that is not a URL; `readFailed`
    ///   naming the password file when it cannot be read or is not UTF-8; what the initializer throws when etcd
    ///   cannot be read or refuses the user).
    func openEtcd(
        _ endpoints: [String], prefix: String, user: EtcdUser?, cache: String?, connection: EtcdConnectionSettings,
        encryptionKey: Defaults.EncryptionKey?
    ) throws(DefaultsError) -> Defaults {
        var urls: [URL] = []
        for endpoint in endpoints {
            guard let url = URL(string: endpoint) else {
                throw DefaultsError(.invalidArgument, "--etcd: \(shellQuoted(endpoint)) is not a URL")
            }
            urls.append(url)
        }
        var password: String?
        if let user { password = try readPassword(from: user.passwordFile) }
        let localCopy = cache.map { URL(fileURLWithPath: ArgumentPath.absolute($0)) }
        return try Defaults.openingEtcd(
            urls, prefix: prefix, saveMode: .manual, username: user?.name, password: password,
            tls: connection.tls.library, timeouts: connection.timeouts,
            options: Defaults.Options(encryptionKey: encryptionKey), localCopy: localCopy,
            onError: { notice in
                // Opening from the local copy is a note, not a failure: the command answers from it.
                Output.printError("codable-defaults: note: \(notice.description)\n")
            })
    }
}

/// The password in the file at `path`: its UTF-8 text without one trailing newline (`\n` or `\r\n`), as
/// `echo secret > FILE` and mounted secrets leave it. A pipe works too (`--etcd-password-file <(pass show etcd)`);
/// a directory is refused, and so is anything over 64 KiB. Its text is never quoted in an error.
///
/// - Throws: ``CodableDefaults/DefaultsError`` (`readFailed`) naming the file.
private func readPassword(from path: String) throws(DefaultsError) -> String {
    func failure(_ reason: String) -> DefaultsError {
        DefaultsError(.readFailed, "--etcd-password-file: \(reason)", path: path)
    }
    let descriptor = open(ArgumentPath.absolute(path), O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw failure("cannot open the file: \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw failure(String(cString: strerror(errno))) }
    guard status.st_mode & S_IFMT != S_IFDIR else { throw failure("a directory, not a file") }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { throw failure("cannot read the file: \(String(cString: strerror(errno)))") }
        if count == 0 { break }
        bytes += buffer[..<count]
        guard bytes.count <= 64 << 10 else { throw failure("the file is over 64 KiB: not a password") }
    }
    guard var text = String(utf8Validating: bytes) else { throw failure("the file is not UTF-8 text") }
    // One line break, "\n" or "\r\n" (a single Character in Swift), as `echo` and editors leave it.
    if let last = text.last, last == "\n" || last == "\r\n" { text.removeLast() }
    return text
}
