import CodableDefaultsEtcd
import Foundation

/// The etcd user a command authenticates as: `--etcd-user NAME --etcd-password-file FILE`. The password is read
/// from the file when the store opens; it is never taken on the command line (where other users see it) and never
/// printed.
struct EtcdUser: Sendable, Equatable {
    /// The user's name.
    let name: String
    /// The path of the file that holds the password.
    let passwordFile: String
}

/// The TLS files a command reaches an `https://` cluster with: `--cacert FILE --cert FILE --key FILE`, etcdctl's
/// own options, or where one is not given, etcdctl's environment variables `ETCDCTL_CACERT`, `ETCDCTL_CERT` and
/// `ETCDCTL_KEY` (an empty one is not given). Paths as written (made absolute when the store is opened).
struct EtcdTLSFiles: Sendable, Equatable {
    /// The authority that signs the members' certificates, or `nil` for the system's trust store.
    var certificateAuthorities: String?
    /// The client certificate, or `nil` for none.
    var certificate: String?
    /// The client certificate's key.
    var key: String?

    /// Whether no file is given.
    var isEmpty: Bool { certificateAuthorities == nil && certificate == nil && key == nil }

    /// The environment variables read where an option is not given, by option name.
    static let environmentVariables = [("cacert", "ETCDCTL_CACERT"), ("cert", "ETCDCTL_CERT"), ("key", "ETCDCTL_KEY")]

    /// The files the options in `arguments` give, else the variables of `environment`.
    ///
    /// - Throws: A usage error for an empty FILE option, or a certificate without its key (or a key without its
    ///   certificate), naming where each came from.
    init(parsing arguments: ScannedArguments, environment: [String: String]) throws(ToolError) {
        var found: [String: (path: String, source: String)] = [:]
        for (option, variable) in Self.environmentVariables {
            if let path = arguments.value(option) {
                if path.isEmpty { throw .usage("--\(option) FILE is empty") }
                found[option] = (path, "--\(option)")
            } else if let path = environment[variable], !path.isEmpty {
                found[option] = (path, variable)
            }
        }
        switch (found["cert"], found["key"]) {
        case (let certificate?, nil):
            throw .usage("\(certificate.source) gives a client certificate without its key: give --key FILE too")
        case (nil, let key?):
            throw .usage("\(key.source) gives a client key without its certificate: give --cert FILE too")
        default: break
        }
        certificateAuthorities = found["cacert"]?.path
        certificate = found["cert"]?.path
        key = found["key"]?.path
    }

    /// No file.
    init() {}

    /// The library's value of the files: paths made absolute against the current directory.
    var library: EtcdTLS? {
        if isEmpty { return nil }
        func url(_ path: String?) -> URL? { path.map { URL(fileURLWithPath: ArgumentPath.absolute($0)) } }
        return EtcdTLS(
            certificateAuthorities: url(certificateAuthorities), certificate: url(certificate), key: url(key))
    }
}

/// How a command connects to an etcd cluster: the TLS files, and the timeouts of `--dial-timeout DURATION` and
/// `--command-timeout DURATION` (etcdctl's, with its defaults: 2 s and 5 s).
struct EtcdConnectionSettings: Sendable, Equatable {
    /// The TLS files.
    var tls = EtcdTLSFiles()
    /// The timeouts.
    var timeouts = EtcdTimeouts()

    /// The timeouts the options in `arguments` give, and the TLS files (``EtcdTLSFiles/init(parsing:environment:)``).
    ///
    /// - Throws: A usage error for a DURATION that is not one, or not more than zero; what the TLS files' parsing
    ///   throws.
    init(parsing arguments: ScannedArguments, environment: [String: String]) throws(ToolError) {
        tls = try EtcdTLSFiles(parsing: arguments, environment: environment)
        if let text = arguments.value("dial-timeout") { timeouts.connect = try Self.duration(text, "dial-timeout") }
        if let text = arguments.value("command-timeout") {
            timeouts.request = try Self.duration(text, "command-timeout")
        }
    }

    /// The options that say these settings, for a command line: none for the defaults.
    var commandLineSpelling: String {
        var spelled = ""
        for (option, path) in [("cacert", tls.certificateAuthorities), ("cert", tls.certificate), ("key", tls.key)] {
            if let path { spelled += " --\(option) \(shellQuoted(path))" }
        }
        let defaults = EtcdTimeouts()
        if timeouts.connect != defaults.connect { spelled += " --dial-timeout \(Self.spelling(timeouts.connect))" }
        if timeouts.request != defaults.request { spelled += " --command-timeout \(Self.spelling(timeouts.request))" }
        return spelled
    }

    /// A duration as etcdctl writes one: a number and a unit (`ms`, `s`, `m`, `h`), or several (`1m30s`); the
    /// number may have a fraction (`1.5s`).
    static func duration(_ text: String, _ option: String) throws(ToolError) -> Duration {
        let units: [(String, Double)] = [
            ("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("h", 3600), ("m", 60), ("s", 1),
        ]
        var seconds = 0.0
        var rest = Substring(text)
        repeat {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            rest = rest.dropFirst(number.count)
            guard let value = Double(number), let unit = units.first(where: { rest.hasPrefix($0.0) }) else {
                throw .usage(
                    "--\(option) \(shellQuoted(text)) is not a duration: give a number and a unit, as 500ms, 2s or 1m")
            }
            rest = rest.dropFirst(unit.0.count)
            seconds += value * unit.1
        } while !rest.isEmpty
        guard seconds > 0, seconds < 1e9 else {
            throw .usage("--\(option) \(shellQuoted(text)) must be more than zero")
        }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// `duration` as ``duration(_:_:)`` reads it: whole milliseconds.
    static func spelling(_ duration: Duration) -> String {
        let parts = duration.components
        return "\(parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000)ms"
    }
}

/// The options that open a store kept in etcd instead of a file, for the commands that declare them.
extension StoreLocation {
    /// Whether the store is kept in etcd.
    var isEtcd: Bool {
        if case .etcd = self { return true }
        return false
    }

    /// The local copy of a store kept in etcd (`--etcd-cache FILE`), or `nil`.
    var etcdCache: String? {
        if case .etcd(_, _, _, let cache, _) = self { return cache }
        return nil
    }

    /// `--etcd URLS --prefix P [--etcd-user NAME --etcd-password-file FILE] [--etcd-cache FILE]
    /// [--cacert FILE] [--cert FILE --key FILE]`.
    static let etcdOptions = [
        OptionDeclaration(
            name: "etcd", valueName: "URLS",
            summary: "Use the store on the etcd cluster at URLS (http://host:port, comma-separated) instead of FILE."),
        OptionDeclaration(
            name: "prefix", valueName: "P", summary: "With --etcd: the store's keys are the etcd keys P + KEY."),
        OptionDeclaration(
            name: "etcd-user", valueName: "NAME",
            summary: "With --etcd: authenticate as the etcd user NAME (needs --etcd-password-file)."),
        OptionDeclaration(
            name: "etcd-password-file", valueName: "FILE",
            summary: "With --etcd-user: the user's password is the text of FILE (one trailing newline dropped)."),
        OptionDeclaration(
            name: "etcd-cache", valueName: "FILE",
            summary:
                "With --etcd: keep a local copy of the prefix in FILE; with no member answering, read it and keep writes in it."
        ),
        OptionDeclaration(
            name: "cacert", valueName: "FILE",
            summary: "With --etcd: trust the authority in FILE (PEM), not the system's (else $ETCDCTL_CACERT)."),
        OptionDeclaration(
            name: "cert", valueName: "FILE",
            summary: "With --etcd: present the client certificate in FILE (PEM; else $ETCDCTL_CERT)."),
        OptionDeclaration(
            name: "key", valueName: "FILE",
            summary: "With --cert: the certificate's private key is in FILE (PEM; else $ETCDCTL_KEY)."),
        OptionDeclaration(
            name: "dial-timeout", valueName: "DURATION",
            summary: "With --etcd: try the next member after DURATION connecting to one (default 2s)."),
        OptionDeclaration(
            name: "command-timeout", valueName: "DURATION",
            summary: "With --etcd: try the next member after DURATION without its answer (default 5s)."),
    ]

    /// The etcd store of `--etcd URLS --prefix P`, or `nil` without `--etcd`.
    ///
    /// - Throws: A usage error: an etcd option without `--etcd`, `--etcd` with `--suite` or `--standard` or
    ///   FILE, no `--prefix`, no URL, a user without a password file or a password file without a user.
    static func etcd(parsing arguments: ScannedArguments) throws(ToolError) -> StoreLocation? {
        guard let etcd = arguments.value("etcd") else {
            for option in [
                "prefix", "etcd-user", "etcd-password-file", "etcd-cache", "cacert", "cert", "key", "dial-timeout",
                "command-timeout",
            ]
            where arguments.value(option) != nil {
                throw .usage("--\(option) is for a store in etcd; it needs --etcd")
            }
            return nil
        }
        if arguments.value("suite") != nil || arguments.value("standard") != nil {
            throw .usage("give either --etcd or --suite/--standard, not both")
        }
        guard let prefix = arguments.value("prefix") else {
            throw .usage("--etcd needs --prefix P (the store's keys are the etcd keys P + KEY)")
        }
        let endpoints = etcd.split(separator: ",").map(String.init)
        if endpoints.isEmpty { throw .usage("--etcd URLS is empty") }
        var user: EtcdUser?
        switch (arguments.value("etcd-user"), arguments.value("etcd-password-file")) {
        case (nil, nil): break
        case (let name?, let file?):
            if name.isEmpty { throw .usage("--etcd-user NAME is empty") }
            user = EtcdUser(name: name, passwordFile: file)
        case (_?, nil):
            throw .usage(
                "--etcd-user needs --etcd-password-file FILE (a password on the command line is seen by other users)")
        case (nil, _?):
            throw .usage("--etcd-password-file is the password of --etcd-user NAME; it needs --etcd-user")
        }
        let cache = arguments.value("etcd-cache")
        if cache?.isEmpty == true { throw .usage("--etcd-cache FILE is empty") }
        let connection = try EtcdConnectionSettings(
            parsing: arguments, environment: ProcessInfo.processInfo.environment)
        let location = StoreLocation.etcd(
            endpoints: endpoints, prefix: prefix, user: user, cache: cache, connection: connection)
        try refuseFile(arguments, option: location.commandLineSpelling)
        return location
    }
}
