#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Defaults {
    /// The environment variable that moves the directory of ``standard`` and of suites (for tests and
    /// sandboxes): `CODABLE_DEFAULTS_DIRECTORY`. When set to a non-empty path, ``standardDirectory`` is that
    /// path.
    public static let directoryEnvironmentVariable = "CODABLE_DEFAULTS_DIRECTORY"

    /// The directory of this program's ``standard`` store and its suites.
    ///
    /// - The value of ``directoryEnvironmentVariable`` when it is set and not empty;
    /// - on Linux, `$XDG_CONFIG_HOME/<app id>` (when `XDG_CONFIG_HOME` holds an absolute path), else
    ///   `~/.config/<app id>`;
    /// - on Apple platforms, `Application Support/<app id>` in the user's domain: inside the app's container
    ///   on iOS, tvOS, watchOS and visionOS and for a sandboxed Mac app
    ///   (`~/Library/Containers/<bundle id>/Data/Library/Application Support/<app id>`), else
    ///   `~/Library/Application Support/<app id>`.
    ///
    /// `<app id>` is the main bundle's identifier where there is one, else the executable's name. See
    /// <doc:ApplePlatforms> for what the container means for an app and its extensions.
    public static var standardDirectory: URL {
        standardDirectory(
            environment: ProcessInfo.processInfo.environment, applicationIdentifier: applicationIdentifier)
    }

    /// The directory where the program with application identifier `identifier` keeps its ``standard``
    /// store and suites (by the rules of ``standardDirectory``, in this process's environment). For tools
    /// that inspect another program's settings.
    ///
    /// On macOS, when ``directoryEnvironmentVariable`` is not set and the sandbox container of `identifier`
    /// exists (`~/Library/Containers/<identifier>`), the directory is the one that sandboxed app uses:
    /// `~/Library/Containers/<identifier>/Data/Library/Application Support/<identifier>`. Otherwise it is
    /// `~/Library/Application Support/<identifier>`, as for an app outside the sandbox. (A process that is
    /// itself sandboxed cannot read another app's container.)
    ///
    /// - Parameter identifier: The other program's bundle identifier or executable name.
    public static func standardDirectory(forApplication identifier: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        #if os(macOS)
            // Not compiled here (no Apple SDK on the Linux builder); the rule itself is tested on Linux through
            // `sandboxContainerDirectory(home:applicationIdentifier:isDirectory:)`.
            if environment[directoryEnvironmentVariable]?.isEmpty ?? true,
                let container = sandboxContainerDirectory(
                    home: NSHomeDirectory(), applicationIdentifier: identifier, isDirectory: isDirectory)
            {
                return container
            }
        #endif
        return standardDirectory(environment: environment, applicationIdentifier: identifier)
    }

    /// The standard directory of the sandboxed Mac app `identifier` in the home directory `home`, when its
    /// container (`home/Library/Containers/<identifier>`) is a directory, else `nil`.
    static func sandboxContainerDirectory(
        home: String, applicationIdentifier identifier: String, isDirectory: (String) -> Bool
    ) -> URL? {
        let container = (home.hasSuffix("/") ? home : home + "/") + "Library/Containers/" + identifier
        guard isDirectory(container) else { return nil }
        return URL(fileURLWithPath: container, isDirectory: true).appendingPathComponent(
            "Data/Library/Application Support/" + identifier, isDirectory: true)
    }

    /// Whether `path` names a directory (links followed).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return Syscalls.live.stat(path, &info) == 0 && Platform.isDirectory(info.st_mode)
    }

    /// ``standardDirectory`` for a given environment and application identifier.
    static func standardDirectory(environment: [String: String], applicationIdentifier: String) -> URL {
        if let override = environment[directoryEnvironmentVariable], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        #if canImport(Darwin)
            // Every Apple platform has the user domain's Application Support directory (the app container's
            // on iOS, tvOS, watchOS, visionOS and in the Mac sandbox). `homeDirectoryForCurrentUser` is
            // macOS-only; `NSHomeDirectory()` (the container on those platforms) exists on all of them.
            // Written against Apple's documentation; not compiled here (no Apple SDK on the Linux builder).
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true).appendingPathComponent(
                    "Library/Application Support", isDirectory: true)
        #else
            let base: URL
            if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
                base = URL(fileURLWithPath: config, isDirectory: true)
            } else {
                let home = environment["HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
                base = (home ?? FileManager.default.homeDirectoryForCurrentUser).appendingPathComponent(".config")
            }
        #endif
        return base.appendingPathComponent(applicationIdentifier, isDirectory: true)
    }

    /// The name of this program's directory: the main bundle's identifier, else the executable's name.
    static var applicationIdentifier: String {
        #if canImport(Darwin)
            if let identifier = Bundle.main.bundleIdentifier { return identifier }
        #endif
        let name = ProcessInfo.processInfo.processName
        return name.isEmpty ? "codable-defaults" : name
    }

    /// The program's shared store: `defaults.json` in ``standardDirectory``, with the process's command-line
    /// arguments as its argument domain.
    ///
    /// Never throws and never crashes: if the file cannot be read or parsed, `standard` serves registered and
    /// default values, reports the error to its ``onError`` handler and through ``loadError``, and never
    /// writes over that file (saves fail until it reads correctly again). Saved with the default
    /// ``SaveMode``.
    public static let standard: Defaults = {
        let url = standardDirectory.appendingPathComponent("defaults.json")
        return open(tolerating: url, arguments: CommandLine.arguments)
    }()

    /// Opens the store named `suiteName` beside ``standard``: `<suiteName>.json` in ``standardDirectory``.
    ///
    /// Suites let a program (or a group of programs) keep several stores. Unlike ``standard`` it has no
    /// argument domain unless you pass `arguments`.
    ///
    /// - Parameters:
    ///   - suiteName: The suite's name: not empty, not `.` or `..`, no `/` or NUL, at most 250 bytes of UTF-8
    ///     (so its file name fits 255 bytes).
    ///   - saveMode: When changes made through this `Defaults` are written.
    ///   - arguments: Command-line arguments to read an argument domain from (`-key value` pairs), or `nil`.
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidArgument`` for a bad name, or what
    ///   ``init(url:saveMode:arguments:options:overrides:fallbacks:onError:)`` throws.
    public convenience init(
        suiteName: String, saveMode: SaveMode = .default, arguments: [String]? = nil
    ) throws(DefaultsError) {
        let url = try Self.suiteURL(named: suiteName)
        try self.init(url: url, saveMode: saveMode, arguments: arguments)
    }

    /// The file of the suite `name`: `<name>.json` in ``standardDirectory`` (or in the directory of the
    /// program `application`, see ``standardDirectory(forApplication:)``), after checking that the name
    /// cannot leave that directory.
    ///
    /// - Parameters:
    ///   - name: The suite's name (rules as for ``init(suiteName:saveMode:arguments:)``).
    ///   - application: Another program's identifier, or `nil` for this program.
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidArgument`` for a bad name.
    public static func suiteURL(named name: String, application: String? = nil) throws(DefaultsError) -> URL {
        try checkName(name, what: "suite name", limit: 250)
        guard let application else { return standardDirectory.appendingPathComponent(name + ".json") }
        try checkName(application, what: "application identifier", limit: 255)
        return standardDirectory(forApplication: application).appendingPathComponent(name + ".json")
    }

    /// The suite file of `name` in this program's directory.
    static func suiteURL(_ name: String) throws(DefaultsError) -> URL {
        try suiteURL(named: name)
    }

    /// Refuses a name that is empty, `.` or `..`, holds `/` or NUL, or is longer than `limit` bytes.
    static func checkName(_ name: String, what: String, limit: Int) throws(DefaultsError) {
        func refuse(_ why: String) -> DefaultsError {
            DefaultsError(.invalidArgument, "invalid \(what) \"\(name)\": \(why)")
        }
        if name.isEmpty { throw refuse("it is empty") }
        if name == "." || name == ".." { throw refuse("it names a directory") }
        if name.contains("/") { throw refuse("it contains '/'") }
        if name.utf8.contains(0) { throw refuse("it contains a NUL character") }
        if name.utf8.count > limit { throw refuse("it is longer than \(limit) bytes") }
    }

    /// The error that kept the file from loading, for a store opened without throwing (``standard``); `nil`
    /// once the file has been read correctly.
    public var loadError: DefaultsError? { store.loadError }

    /// Opens a store without throwing: a file that fails to load gives an empty store that reports the error
    /// (to `onError` when given, installed before the file is read) and never writes over the file.
    static func open(
        tolerating url: URL, arguments: [String]?, onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) -> Defaults {
        do {
            return try Defaults(url: url, arguments: arguments, onError: onError, toleratingLoadFailure: true)
        } catch {
            // Only a URL that is not a file URL gets here; `standard` always builds one. Serve memory only.
            let defaults = Defaults(store: Store(path: nil, options: .default), saveMode: .manual, url: nil)
            if let onError { defaults.onError = onError }
            defaults.store.setLoadError(error)
            defaults.store.report(error)
            return defaults
        }
    }
}

/// The argument domain: `-key value` pairs from a command line.
enum ArgumentDomain {
    /// Reads `-key value` pairs from `arguments` (the first element, the program, is skipped). A value is
    /// parsed as JSON when it is valid JSON, else taken as a string. `--` ends the pairs; arguments starting
    /// with `--` and a lone `-` are not keys.
    static func parse(_ arguments: [String]) -> [MemberName: [UInt8]] {
        var result: [MemberName: [UInt8]] = [:]
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            guard argument.count > 1, argument.hasPrefix("-"), !argument.hasPrefix("--"),
                index + 1 < arguments.count
            else {
                index += 1
                continue
            }
            result[MemberName(String(argument.dropFirst()))] = fragment(arguments[index + 1])
            index += 2
        }
        return result
    }

    /// The JSON fragment for an argument's value.
    static func fragment(_ text: String) -> [UInt8] {
        do {
            return try JSONParser.compactValue(Array(text.utf8))
        } catch {
            // Not JSON: the value is the text itself, as a string. This is the documented rule, not a
            // hidden error.
            var bytes: [UInt8] = []
            JSONParser.appendQuoted(text, to: &bytes)
            return bytes
        }
    }
}
