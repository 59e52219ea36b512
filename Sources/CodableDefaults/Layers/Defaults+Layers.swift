#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// A read-only source of values around the store: the environment, a JSON file, a directory of files (as
    /// Kubernetes and Docker mount secrets), or values given in code.
    ///
    /// Layers are given to a store as *overrides*, which win over the stored value, or *fallbacks*, which are
    /// read when nothing is stored. The whole lookup order of a read, first found wins:
    ///
    /// 1. the argument domain (`-key value` on the command line);
    /// 2. the overrides, in the order given;
    /// 3. the stored value (the store file, or whatever engine keeps the writable values);
    /// 4. the fallbacks, in the order given;
    /// 5. the registered values (``register(defaults:)``);
    /// 6. the key's default.
    ///
    /// ```swift
    /// let defaults = try Defaults(
    ///     url: URL(fileURLWithPath: "/var/lib/myservice/settings.json"),
    ///     overrides: [.environment(prefix: "MYSERVICE_")],
    ///     fallbacks: [
    ///         .file(URL(fileURLWithPath: "/etc/myservice/defaults.json")),
    ///         .directory(URL(fileURLWithPath: "/run/secrets/myservice"), secret: true),
    ///     ])
    /// ```
    ///
    /// A layer is never written and never locked. Files and directories are read when the layers are set and
    /// again whenever they change (they are watched like the store file), and the layers' values are merged into
    /// each name's effective value then, not searched at each read: a read of a layered key is the same cached
    /// read as of a stored one. Setting a key that an override shadows still writes the store; reads keep
    /// giving the override's value while it is there. Text read from the environment or a directory's file is
    /// taken as JSON when it parses as a JSON value, else as a string, so `MYSERVICE_NAME=Guest`,
    /// `MYSERVICE_VOLUME=0.9` and `MYSERVICE_TAGS=["a","b"]` all work.
    ///
    /// A *secret* layer's values (and those of a key made with `secret: true`) never appear in an error's
    /// description or the command-line tool's output (unless it is run with `--show-secrets`).
    public struct Layer: Sendable, CustomStringConvertible, CustomReflectable {
        enum Kind: Sendable {
            case environment(prefix: String, variables: [String: String]?, names: [String: String])
            case file(path: String)
            case directory(path: String)
            case values([String: JSONValue], label: String)
        }

        let kind: Kind

        /// Whether the layer's values are secret: kept out of every error description and of the tool's output.
        public let isSecret: Bool

        /// Environment variables: the key `volume` is read from `<prefix>VOLUME` and `server.port` from
        /// `<prefix>SERVER_PORT` (the rule of ``environmentVariableName(for:prefix:)``), or from the variable
        /// `names` gives for it.
        ///
        /// The variables are `variables`, or when it is `nil` the process's environment, read once when the
        /// layers are set. The environment names no keys, so a variable supplies a value only for a name the store
        /// is asked about (a read, a registered default, a stored value); ``Defaults/keys`` and
        /// ``Defaults/dictionaryRepresentation()`` do not list names found only in the environment.
        ///
        /// The mapping is data, not a closure, so that no code of yours runs while the store holds its lock.
        ///
        /// ```swift
        /// let layer = Defaults.Layer.environment(prefix: "MYSERVICE_", names: ["log.level": "LOG_LEVEL"])
        /// ```
        ///
        /// - Parameters:
        ///   - variables: The variables, or `nil` for the process's environment.
        ///   - prefix: What every variable's name starts with under the rule, e.g. `"MYSERVICE_"`.
        ///   - names: Variables for particular keys, by key name, used as they are (no prefix added); these keys
        ///     are read only from their variable.
        ///   - secret: Whether the values are secret.
        public static func environment(
            _ variables: [String: String]? = nil, prefix: String, names: [String: String] = [:], secret: Bool = false
        ) -> Layer {
            Layer(kind: .environment(prefix: prefix, variables: variables, names: names), isSecret: secret)
        }

        /// The name of the variable that holds `key` under `prefix` in ``environment(_:prefix:names:secret:)``: the
        /// prefix, then the key with ASCII letters uppercased and every character other than an ASCII letter or
        /// digit replaced by `_` (`server.port` → `SERVER_PORT`, `maxConnections` → `MAXCONNECTIONS`).
        ///
        /// Two keys can map to one variable (`server.port` and `server_port`); each then reads its value.
        public static func environmentVariableName(for key: String, prefix: String) -> String {
            var name = prefix
            for scalar in key.unicodeScalars {
                switch scalar {
                case "a"..."z": name.unicodeScalars.append(Unicode.Scalar(UInt8(scalar.value - 32)))
                case "A"..."Z", "0"..."9": name.unicodeScalars.append(scalar)
                default: name.append("_")
                }
            }
            return name
        }

        /// A JSON file holding an object of values, such as `/etc/myservice/defaults.json`.
        ///
        /// Parsed by the store's own strict parser: a file that does not parse is an error with its path, line
        /// and column (thrown when the layers are set; after an edit, passed to ``Defaults/onError`` while the
        /// layer keeps its last good values). A missing file is an empty layer, until it appears.
        ///
        /// - Parameters:
        ///   - url: The file's URL. A symbolic link is followed.
        ///   - secret: Whether the values are secret.
        public static func file(_ url: URL, secret: Bool = false) -> Layer {
            Layer(kind: .file(path: url.path), isSecret: secret)
        }

        /// A directory with one file per key (the way Kubernetes and Docker mount secrets and config maps): the
        /// file's name is the key, its contents the value with a single trailing newline dropped, taken as JSON
        /// when it parses, else as a string.
        ///
        /// Names starting with `.` (such as Kubernetes's `..data`) and entries that are not regular files (after
        /// following symbolic links) are skipped. A file whose contents are not UTF-8 is an error naming it. A
        /// missing directory is an empty layer, until it appears.
        ///
        /// - Parameters:
        ///   - url: The directory's URL.
        ///   - secret: Whether the values are secret.
        public static func directory(_ url: URL, secret: Bool = false) -> Layer {
            Layer(kind: .directory(path: url.path), isSecret: secret)
        }

        /// Values given in code, such as a service's built-in overrides for a test.
        ///
        /// - Parameters:
        ///   - values: The values by key name.
        ///   - label: What ``Defaults/Source/values(label:)`` calls the layer.
        ///   - secret: Whether the values are secret.
        public static func values(_ values: [String: JSONValue], label: String = "values", secret: Bool = false)
            -> Layer
        {
            Layer(kind: .values(values, label: label), isSecret: secret)
        }

        /// What the layer reads, never its values: `environment MYSERVICE_*`, `file /etc/…`, `directory /run/…`,
        /// `values "label"`, with ` (secret)` for a secret layer.
        public var description: String {
            let text: String
            switch kind {
            case .environment(let prefix, let variables, let names):
                text =
                    "environment \(prefix)*" + (names.isEmpty ? "" : " and \(names.count) named")
                    + (variables == nil ? "" : " (given variables)")
            case .file(let path): text = "file \(path)"
            case .directory(let path): text = "directory \(path)"
            case .values(_, let label): text = "values \(KeyDescription.quoted(label))"
            }
            return isSecret ? text + " (secret)" : text
        }

        /// What the layer reads, without its values (a `.values` layer's are left out, secret or not).
        public var customMirror: Mirror {
            Mirror(self, children: ["layer": description, "isSecret": isSecret])
        }
    }

    /// Where a key's effective value comes from (see ``Layer`` for the lookup order).
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// The argument domain: `-key value` on the command line.
        case argument
        /// An environment variable of an ``Layer/environment(_:prefix:names:secret:)`` layer.
        case environment(variable: String)
        /// A layer's file: a ``Layer/file(_:secret:)`` layer, or a file of a ``Layer/directory(_:secret:)``.
        case file(path: String)
        /// A ``Layer/values(_:label:secret:)`` layer.
        case values(label: String)
        /// The store: its file's path, or `nil` in memory.
        case stored(path: String?)
        /// The registration domain (``Defaults/register(defaults:)``).
        case registered
        /// Nothing has a value: a read gives the key's default.
        case `default`

        /// `argument`, `environment MYSERVICE_VOLUME`, `file /etc/…`, `values "label"`, `stored /var/…`,
        /// `registered` or `default`.
        public var description: String {
            switch self {
            case .argument: "argument"
            case .environment(let variable): "environment \(variable)"
            case .file(let path): "file \(path)"
            case .values(let label): "values \(KeyDescription.quoted(label))"
            case .stored(let path): path.map { "stored \($0)" } ?? "stored (in memory)"
            case .registered: "registered"
            case .default: "default"
            }
        }
    }

    /// Replaces the store's layers (see ``Layer``): the overrides read before the stored value, the fallbacks
    /// after it. Reads the files and directories (and the environment) now, starts watching them, and tells
    /// observers of each name whose effective value changed.
    ///
    /// Layers belong to the file's store, shared by every `Defaults` on the file, as the argument domain is. Pass
    /// empty lists to remove every layer. Thread-safe; blocks on reading the layers' files.
    ///
    /// ```swift
    /// try Defaults.standard.setLayers(
    ///     overrides: [.environment(prefix: "MYSERVICE_")],
    ///     fallbacks: [.file(URL(fileURLWithPath: "/etc/myservice/defaults.json"))])
    /// ```
    ///
    /// - Throws: ``DefaultsError`` when a layer's file or directory exists but cannot be read (`readFailed`,
    ///   `fileTooLarge`, `notARegularFile`) or does not parse (`invalidJSON`, with path, line and column); the
    ///   store's layers are then unchanged.
    public func setLayers(overrides: [Layer] = [], fallbacks: [Layer] = []) throws(DefaultsError) {
        try store.setLayers(overrides: overrides, fallbacks: fallbacks)
    }

    /// Which domain or layer supplies `key`'s effective value now.
    ///
    /// Thread-safe. Within a ``batch(_:)``, this is what the store holds, not the batch's own changes.
    public func source<Value>(for key: Key<Value>) -> Source {
        store.source(of: key.name)
    }

    /// Which domain or layer supplies the effective value of the key `name` now.
    ///
    /// - Parameter name: The key's name.
    public func source(forKey name: String) -> Source {
        store.source(of: name)
    }

    /// One domain's or layer's value for a key, as ``layeredValues(forKey:)`` lists them.
    ///
    /// Its `description` (and `dump`) show a secret value as `<secret>`; read ``value`` to get it.
    public struct LayeredValue: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// Where the value is.
        public let source: Source
        /// The value.
        public let value: JSONValue
        /// Whether the value is secret (it comes from a secret layer): show it only when asked to.
        public let isSecret: Bool
        /// Whether this is the value reads give (the first in lookup order).
        public let isEffective: Bool

        /// `<source>: <value>`, then ` (effective)` for the value reads give; a secret value is `<secret>`.
        public var description: String {
            "\(source): \(isSecret ? "<secret>" : value.description)" + (isEffective ? " (effective)" : "")
        }

        /// The fields, with a secret value left out.
        public var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "source": source, "value": isSecret ? "<secret>" : value.description, "isSecret": isSecret,
                    "isEffective": isEffective,
                ])
        }
    }

    /// Every value the key `name` has, in lookup order (argument, each override layer, stored, each fallback
    /// layer, registered), the first being the one reads give: to explain a value, as the command-line tool's
    /// `explain` does. Empty when only the key's default is left. Layers that hold no value for the name are left
    /// out; every layer that does is listed, not only the first.
    ///
    /// Thread-safe. Encodes a stored value set and not yet saved (your `Encodable` code runs on this thread).
    ///
    /// - Throws: ``DefaultsError`` when an unsaved value does not encode (`encodingFailed`), or a value is an
    ///   object with two names that `JSONValue` cannot tell apart (`decodingFailed`).
    public func layeredValues(forKey name: String) throws(DefaultsError) -> [LayeredValue] {
        try layeredValues(of: name, secret: store.isSecret(name))
    }

    /// Every value `key` has, in lookup order, as ``layeredValues(forKey:)`` lists them; when the key is secret
    /// (``AnyKey/isSecret``), every value is marked secret, the stored one included.
    ///
    /// - Throws: What ``layeredValues(forKey:)`` throws.
    public func layeredValues<Value>(for key: Key<Value>) throws(DefaultsError) -> [LayeredValue] {
        try layeredValues(of: key.name, secret: key.isSecret)
    }

    private func layeredValues(of name: String, secret: Bool) throws(DefaultsError) -> [LayeredValue] {
        var result: [LayeredValue] = []
        for (source, bytes, layerIsSecret) in try store.layeredValues(of: name) {
            let isSecret = layerIsSecret || secret
            let value = try Codec.decode(JSONValue.self, from: bytes, key: name, path: url?.path, secret: isSecret)
            result.append(LayeredValue(source: source, value: value, isSecret: isSecret, isEffective: result.isEmpty))
        }
        return result
    }
}
