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

/// A value a layer supplies for a name: its compact JSON, where it came from, and whether it is secret.
struct LayerValue: Sendable, Equatable {
    /// The value, compact JSON.
    var bytes: [UInt8]
    /// The variable or file it was read from.
    var source: Defaults.Source
    /// Whether it must be kept out of error descriptions.
    var isSecret: Bool
}

/// One layer as last read: its values by name (the environment's are looked up by name instead), and what tells
/// whether it changed since.
struct LoadedLayer: Sendable {
    /// The layer as given.
    let layer: Defaults.Layer
    /// The values of a file, directory or values layer, by name (empty for the environment).
    private(set) var values: [MemberName: LayerValue] = [:]
    /// The environment's variables, for an environment layer.
    private var variables: [String: String] = [:]
    /// The file's identity when it was read (a file layer), so a watch event that changed nothing reads nothing.
    private(set) var identity: FileIdentity?
    /// The identity of each file of a directory layer that supplied a value, to tell a file rewritten in place
    /// (the same file, emptied for a moment) from another file put in its place.
    private var fileIdentities: [MemberName: FileIdentity] = [:]

    /// What watchers must watch for this layer, each a directory and a name in it (`""`: every entry).
    ///
    /// A file: every entry of its directory, not only its name, because a file behind a symbolic link changes
    /// when another entry does (Kubernetes mounts a config map as `name -> ..data/name` and updates it by
    /// renaming `..data`); and, when the path leads elsewhere through links, the file it leads to now. A
    /// directory: its every entry. A watch event only makes the layer be read again (a file whose identity did
    /// not change is not), so watching wide costs a `stat`.
    var watched: [(directory: String, name: String)] {
        switch layer.kind {
        case .file(let path):
            let url = URL(fileURLWithPath: path)
            var watched = [(url.deletingLastPathComponent().path, "")]
            if let resolved = realpath(path, nil) {
                defer { free(resolved) }
                let target = URL(fileURLWithPath: String(cString: resolved))
                if target.deletingLastPathComponent().path != url.deletingLastPathComponent().path {
                    watched.append((target.deletingLastPathComponent().path, target.lastPathComponent))
                }
            }
            return watched
        case .directory(let path): return [(path, "")]
        case .environment, .values: return []
        }
    }

    /// Reads `layer` with the store's limits.
    ///
    /// A file that is empty but is the same file (device and inode) that supplied values when the layer was read
    /// before (`previous`) is one being rewritten in place (`echo 9091 > file` truncates it, then writes): what
    /// it supplied then is kept until it holds data again, so that reads never see a key's value vanish for that
    /// moment. An empty file read for the first time, or put in the place of another (an editor's or a
    /// Kubernetes volume's atomic swap), supplies nothing.
    ///
    /// - Throws: ``DefaultsError`` when its file or directory exists but cannot be read or parsed.
    init(_ layer: Defaults.Layer, options: Defaults.Options, previous: LoadedLayer? = nil) throws(DefaultsError) {
        self.layer = layer
        switch layer.kind {
        case .environment(_, let given, _):
            variables = given ?? ProcessInfo.processInfo.environment
        case .file(let path):
            try readFile(path, options: options, previous: previous)
        case .directory(let path):
            try readDirectory(path, options: options, previous: previous)
        case .values(let given, let label):
            for (name, value) in given where name != Defaults.schemaVersionKey {
                let bytes = try JSONValueBytes.fragment(value, key: name, maxDepth: options.maximumDepth)
                values[MemberName(name)] = LayerValue(bytes: bytes, source: .values(label: label), isSecret: false)
            }
        }
        if layer.isSecret {
            for name in values.keys { values[name]?.isSecret = true }
        }
    }

    /// Reads the layer again if it may have changed (a file whose identity is the same is not read again).
    /// Returns `nil` when it has not changed.
    ///
    /// - Throws: ``DefaultsError`` as ``init(_:options:previous:)`` does; the layer is then unchanged.
    func reread(options: Defaults.Options) throws(DefaultsError) -> LoadedLayer? {
        if case .file(let path) = layer.kind, try DurableFile(path: path).currentIdentity() == identity,
            identity != nil
        {
            return nil
        }
        let again = try LoadedLayer(layer, options: options, previous: self)
        let isSame = again.values == values && again.identity == identity && again.fileIdentities == fileIdentities
        return isSame ? nil : again
    }

    /// The value this layer supplies for `name`, or `nil`.
    func value(named name: String) -> LayerValue? {
        guard case .environment(let prefix, _, let names) = layer.kind else { return values[MemberName(name)] }
        let variable = names[name] ?? Defaults.Layer.environmentVariableName(for: name, prefix: prefix)
        guard let text = variables[variable] else { return nil }
        return LayerValue(
            bytes: Self.value(ofText: Array(text.utf8)), source: .environment(variable: variable),
            isSecret: layer.isSecret)
    }

    /// Text read as a value: JSON when it parses as a JSON value, else a JSON string of the text.
    static func value(ofText bytes: [UInt8]) -> [UInt8] {
        do {
            return try JSONParser.compactValue(bytes)
        } catch {
            // Not JSON: the text is a string (this is the documented rule, not a swallowed failure).
            var quoted: [UInt8] = []
            JSONParser.appendQuoted(String(decoding: bytes, as: UTF8.self), to: &quoted)
            return quoted
        }
    }

    // MARK: Reading

    /// A layer's file read as the store reads its own (`nil` when missing), its errors speaking of a layer's file.
    private static func read(
        _ path: String, maxSize: Int
    ) throws(DefaultsError) -> (bytes: [UInt8], identity: FileIdentity)? {
        try DurableFile(path: path, role: "layer's").read(maxSize: maxSize)
    }

    /// Reads a JSON file layer: a missing file is empty; an empty one supplies what it did when `previous` was
    /// read.
    private mutating func readFile(
        _ path: String, options: Defaults.Options, previous: LoadedLayer?
    ) throws(DefaultsError) {
        guard let (bytes, identity) = try Self.read(path, maxSize: options.maximumFileSize) else { return }
        self.identity = identity
        guard !bytes.isEmpty else {
            if let previous, let before = previous.identity, before.isSameFile(as: identity) {
                values = previous.values
            }
            return
        }
        let index: JSONIndex
        do {
            index = try JSONIndex(bytes: bytes, maxDepth: options.maximumDepth)
        } catch {
            // A secret file's parse error says where, not what it found there (which may be the secret's bytes).
            let message =
                layer.isSecret
                ? "the file is not a valid JSON object (details withheld: the layer is secret)"
                : error.message
            throw DefaultsError(
                .invalidJSON, message, path: path, key: error.key, line: error.line, column: error.column)
        }
        for position in 0..<index.count {
            let name = index.key(at: position)
            // The store's reserved schema member is the store's own: a layer does not supply it.
            if name == Defaults.schemaVersionKey { continue }
            if name.utf8.count > options.maximumKeyLength {
                throw Store.keyTooLong(name, limit: options.maximumKeyLength, path: path)
            }
            values[MemberName(name)] = LayerValue(
                bytes: index.value(at: position), source: .file(path: path), isSecret: layer.isSecret)
        }
    }

    /// Reads a directory layer: one file per key; a missing directory is empty; an empty file supplies what it
    /// did when `previous` was read.
    private mutating func readDirectory(
        _ path: String, options: Defaults.Options, previous: LoadedLayer?
    ) throws(DefaultsError) {
        let system = DurableFile(path: path).system
        guard let names = system.directoryEntries(path) else {
            let code = Platform.errno
            if code == ENOENT { return }
            if code == ENOTDIR {
                throw DefaultsError(.notARegularFile, "the layer's path is not a directory", path: path)
            }
            throw DefaultsError(.readFailed, "the directory cannot be listed", path: path, errno: code)
        }
        for name in names.sorted() where !name.hasPrefix(".") && name != Defaults.schemaVersionKey {
            let file = path.hasSuffix("/") ? path + name : path + "/" + name
            let read: (bytes: [UInt8], identity: FileIdentity)?
            do throws(DefaultsError) {
                read = try Self.read(file, maxSize: options.maximumFileSize)
            } catch  where error.code == .notARegularFile {
                continue  // A subdirectory or a device: not a key (the documented rule).
            }
            // Removed since the listing: no value. Empty: a writer that creates or truncates the file and then
            // writes it (`echo v > f`) would otherwise hand observers an empty value (or none) for a moment, so an
            // empty file is no value of its own: it keeps the value it had, if any.
            guard let read else { continue }
            var bytes = read.bytes
            guard !bytes.isEmpty else {
                if let before = previous?.fileIdentities[MemberName(name)], before.isSameFile(as: read.identity),
                    let kept = previous?.values[MemberName(name)]
                {
                    values[MemberName(name)] = kept
                    fileIdentities[MemberName(name)] = read.identity
                }
                continue
            }
            if name.utf8.count > options.maximumKeyLength {
                throw Store.keyTooLong(name, limit: options.maximumKeyLength, path: file)
            }
            if bytes.last == 0x0A { bytes.removeLast() }
            guard String(utf8Validating: bytes) != nil else {
                throw DefaultsError(.invalidJSON, "the file's contents are not UTF-8 text", path: file, key: name)
            }
            values[MemberName(name)] = LayerValue(
                bytes: Self.value(ofText: bytes), source: .file(path: file), isSecret: layer.isSecret)
            fileIdentities[MemberName(name)] = read.identity
        }
    }
}

/// The overrides and fallbacks of a store, as last read, with a generation that changes at each
/// ``Store/setLayers(overrides:fallbacks:)``.
struct LayerStack: Sendable {
    var overrides: [LoadedLayer] = []
    var fallbacks: [LoadedLayer] = []
    /// Bumped when the layers are replaced, so that a reload of a replaced layer is dropped.
    var generation = 0

    var isEmpty: Bool { overrides.isEmpty && fallbacks.isEmpty }

    /// The first override's value for `name`.
    func override(for name: String) -> LayerValue? {
        for layer in overrides { if let value = layer.value(named: name) { return value } }
        return nil
    }

    /// The first fallback's value for `name`.
    func fallback(for name: String) -> LayerValue? {
        for layer in fallbacks { if let value = layer.value(named: name) { return value } }
        return nil
    }

    /// Every name a file, directory or values layer holds (the environment lists none), with repeats.
    func forEachListedName(_ body: (String) -> Void) {
        for layer in overrides + fallbacks {
            for name in layer.values.keys { body(name.string) }
        }
    }
}
