/// The etcd user a command authenticates as: `--etcd-user NAME --etcd-password-file FILE`. The password is read
/// from the file when the store opens; it is never taken on the command line (where other users see it) and never
/// printed.
struct EtcdUser: Sendable, Equatable {
    /// The user's name.
    let name: String
    /// The path of the file that holds the password.
    let passwordFile: String
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
        if case .etcd(_, _, _, let cache) = self { return cache }
        return nil
    }

    /// `--etcd URLS --prefix P [--etcd-user NAME --etcd-password-file FILE]`.
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
    ]

    /// The etcd store of `--etcd URLS --prefix P`, or `nil` without `--etcd`.
    ///
    /// - Throws: A usage error: an etcd option without `--etcd`, `--etcd` with `--suite` or `--standard` or
    ///   FILE, no `--prefix`, no URL, a user without a password file or a password file without a user.
    static func etcd(parsing arguments: ScannedArguments) throws(ToolError) -> StoreLocation? {
        guard let etcd = arguments.value("etcd") else {
            for option in ["prefix", "etcd-user", "etcd-password-file", "etcd-cache"]
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
        let location = StoreLocation.etcd(endpoints: endpoints, prefix: prefix, user: user, cache: cache)
        try refuseFile(arguments, option: location.commandLineSpelling)
        return location
    }
}
