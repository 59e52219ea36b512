#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A keyed container of `Codable` values, kept in memory and persisted in one JSON file.
///
/// ```swift
/// extension Defaults.Keys {
///     static let volume = Defaults.Key<Double>("volume", default: 0.5)
/// }
///
/// let defaults = try Defaults(url: settingsURL)
/// defaults[.volume] = 0.8          // in memory at once, on disk after 500 ms of quiet
/// try defaults.save()              // on disk, durably, now
/// ```
///
/// ## Threads
/// `Defaults` is a `Sendable` final class: every member may be called from any thread or task, with no
/// actor or main-thread requirement. Reads and writes are serialized by an internal lock held only for
/// in-memory work; file I/O and your types' `Codable` code run outside it.
///
/// ## Persistence
/// Every `Defaults` opened on the same file in one process shares one in-memory store, so a write through
/// one is visible through the other at once. A change schedules a save according to the ``SaveMode`` of the
/// `Defaults` it was made through, and every save writes all of the store's unsaved changes (so a save
/// triggered through one `Defaults` also writes changes made through a `.manual` one). Unsaved changes are
/// also written by `save()`, when the last `Defaults` on the file goes away, and at normal process
/// exit. Writes are atomic (the file always holds a complete old or new version) and durable once
/// `save()` returns. A save merges into the file what other processes saved
/// meanwhile, key by key, under a lock on the sidecar file `.<name>.lock`.
///
/// ## Errors
/// A file that exists but cannot be read or parsed makes the initializer throw, and is never written over.
/// Failures that cannot be thrown to you (a background save, a stored value that does not decode for the
/// subscript) go to ``onError``, which by default prints them to standard error.
public final class Defaults: Sendable {
    /// When changes made through a `Defaults` are written to its file.
    public enum SaveMode: Sendable, Hashable {
        /// Written once the store has been idle for the duration (one write after a burst of changes), and at
        /// the latest five seconds (or the duration, if longer) after the first unsaved change. The save runs on
        /// the store's queue (see <doc:ObservingChanges#Where-handlers-run>); its failures go to ``Defaults/onError``.
        ///
        /// Any duration is accepted: a negative one counts as zero (the save is made at once, on the store's
        /// queue), and one longer than 24 hours counts as 24 hours.
        case afterIdle(Duration)
        /// Written, durably, before each change returns. The slowest mode; failures go to ``Defaults/onError``.
        case immediate
        /// No save is scheduled: changes are written by `save()`, by any save of the same store
        /// made through another `Defaults`, when the last `Defaults` on the file goes away, and at normal
        /// process exit.
        case manual

        /// The default mode: ``afterIdle(_:)`` with 500 milliseconds.
        public static let `default` = SaveMode.afterIdle(.milliseconds(500))
    }

    package let store: Store

    /// When changes made through this `Defaults` are written.
    public let saveMode: SaveMode

    /// The store file's URL, or `nil` for a store made by ``inMemory()``.
    public let url: URL?

    /// Opens the store kept in the JSON file at `url`, reading the file if it exists.
    ///
    /// A missing file is an empty store; the file (and its directory, mode 0700) are created by the first
    /// save, with mode 0600. If the file is already open in this process, the new `Defaults` shares its
    /// in-memory state (and the options it was opened with). Two threads opening the same file at once get
    /// the same store, and the file is read once.
    ///
    /// ```swift
    /// let defaults = try Defaults(url: settingsURL, options: .init(unreadableFile: .moveAside)) { error in
    ///     if error.code == .fileMovedAside { print("settings were reset; the old file is at \(error.path ?? "")") }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - url: A file URL. A symbolic link is followed: the store reads and writes the file it points to.
    ///     The path is resolved as the kernel resolves it: `..` goes up from where a link led (with
    ///     `link -> real/sub`, `link/../s.json` is `real/s.json`), it is not removed as text. A `..` after a
    ///     directory that does not exist names no file: the store is empty and a save fails (`writeFailed`).
    ///   - saveMode: When changes made through this `Defaults` are written. The default writes 500 ms after
    ///     the last of a burst of changes.
    ///   - arguments: Command-line arguments to take an argument domain from (`-key value` pairs; see
    ///     <doc:ComingFromUserDefaults>), usually `CommandLine.arguments`; `nil` for none. The argument domain
    ///     belongs to the file's store, shared by every `Defaults` on the file.
    ///   - options: Limits, the policy for an unreadable file, and migrations; see ``Options``.
    ///   - overrides: Read-only layers whose values win over the stored ones (such as
    ///     `.environment(prefix: "MYSERVICE_")`), in order; `nil` keeps the store's (none for a new store). See
    ///     ``Layer`` and ``setLayers(overrides:fallbacks:)``.
    ///   - fallbacks: Read-only layers read when nothing is stored (such as `/etc` files and secret
    ///     directories), in order; `nil` keeps the store's.
    ///   - onError: If not `nil`, becomes the store's ``onError`` handler before the file is read, so it also
    ///     receives what opening reports without throwing (the `fileMovedAside` notice of
    ///     ``UnreadableFilePolicy/moveAside``, a failure to remove a crashed writer's temporary files). Like
    ///     setting ``onError``, it replaces the handler of every `Defaults` on the file; when the file is
    ///     already open in this process, it was read before, so only later errors reach it.
    /// - Throws: ``DefaultsError`` when the URL is not a file URL or an option is out of range
    ///   (`invalidArgument`), or the file exists but cannot be read (`readFailed`, `notARegularFile`,
    ///   `fileTooLarge`) or parsed (`invalidJSON`, with line and column), or a migration fails
    ///   (`migrationFailed`, `unsupportedSchemaVersion`; `invalidArgument` when a migration step opens the
    ///   store it is migrating, or a store whose opening on another thread waits for this one; see
    ///   <doc:Migrations>). Nothing is ever written to a file that failed to load. What
    ///   ``setLayers(overrides:fallbacks:)`` throws for a layer that cannot be read.
    public convenience init(
        url: URL, saveMode: SaveMode = .default, arguments: [String]? = nil, options: Options = .default,
        overrides: [Layer]? = nil, fallbacks: [Layer]? = nil, onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) throws(DefaultsError) {
        try self.init(
            url: url, saveMode: saveMode, arguments: arguments, options: options, onError: onError,
            toleratingLoadFailure: false)
        if overrides != nil || fallbacks != nil {
            try store.setLayers(overrides: overrides, fallbacks: fallbacks)
        }
    }

    /// Opens a store; with `toleratingLoadFailure`, a file that fails to load gives an empty store that
    /// reports the error (see ``loadError``) instead of throwing.
    convenience init(
        url: URL, saveMode: SaveMode = .default, arguments: [String]?, options: Options = .default,
        onError: (@Sendable (DefaultsError) -> Void)? = nil, toleratingLoadFailure: Bool
    ) throws(DefaultsError) {
        let path = try Self.resolve(url)
        try options.check(path: path)
        var opened = false
        let store = try StoreRegistry.store(for: path) { () throws(DefaultsError) -> Store in
            opened = true
            let store = Store(storage: makeStorage(path: path, options: options), options: options)
            if let onError { store.onError = onError }
            do throws(DefaultsError) {
                try store.load()
            } catch {
                guard toleratingLoadFailure else { throw error }
                store.setLoadError(error)
                store.report(error)
            }
            return store
        }
        if let onError, !opened { store.onError = onError }
        if !opened, let key = options.encryptionKey { try store.adoptEncryptionKey(key) }
        self.init(store: store, saveMode: saveMode, url: URL(fileURLWithPath: path))
        if let arguments { store.setArguments(ArgumentDomain.parse(arguments)) }
    }

    package init(store: Store, saveMode: SaveMode, url: URL?) {
        self.store = store
        self.saveMode = saveMode
        self.url = url
    }

    /// Makes a store that lives in memory only and never touches the disk: for tests and previews.
    ///
    /// Each call makes a new, empty, independent store, with ``SaveMode/manual``. It behaves as a store on a
    /// file whose writes go to memory: `save()` encodes the unsaved values and keeps them as the store's
    /// saved state (so a value that cannot be encoded is thrown as `encodingFailed`, as it would be for a
    /// file), ``discardUnsavedChanges()`` goes back to that state, and ``reload()-4e93u`` reads it again.
    public static func inMemory() -> Defaults {
        Defaults(store: Store(storage: MemoryStorage(), options: .default), saveMode: .manual, url: nil)
    }

    /// An absolute, symlink-free path for a file URL, resolved as the kernel resolves it (see ``KernelPath``).
    private static func resolve(_ url: URL) throws(DefaultsError) -> String {
        guard url.isFileURL else {
            throw DefaultsError(.invalidArgument, "the store's URL is not a file URL: \(url)")
        }
        // Not `standardizedFileURL`: it removes `..` as text, which names another file after a symbolic link.
        let path = KernelPath.of(url, currentDirectory: FileManager.default.currentDirectoryPath)
        guard !(url.relativePath.isEmpty && url.baseURL == nil), !path.hasSuffix("/") else {
            throw DefaultsError(.invalidArgument, "the store's URL names a directory, not a file", path: path)
        }
        return DurableFile.canonicalPath(path)
    }

    /// Receives the errors that cannot be thrown to a caller: a failed background or `.immediate` save, a
    /// stored value that does not decode for the subscript.
    ///
    /// Shared by every `Defaults` on the same file. Called on the thread where the error happened (the
    /// store's own queue for background saves), never while the store's lock is held, so it may use the
    /// store. The default prints the error to standard error. Which errors arrive on which thread:
    /// <doc:ObservingChanges#Where-handlers-run>.
    public var onError: @Sendable (DefaultsError) -> Void {
        get { store.onError }
        set { store.onError = newValue }
    }

    /// The value for `key`: the stored value, or the key's default when nothing is stored.
    ///
    /// Reading a value already read is a lock and a lookup; a stored value is decoded at most once per key
    /// object until it changes. Setting stores the value in memory at once and writes it according to
    /// ``saveMode``; setting `nil` for an optional key removes the stored value.
    ///
    /// If the stored value does not decode as `Value`, the getter returns the key's default and reports the
    /// error to ``onError`` (once per stored value); the stored value stays in the file untouched until the
    /// key is set or removed. Use ``value(for:)`` to get the error thrown instead.
    public subscript<Value>(key: Key<Value>) -> Value {
        get { store.value(for: key) }
        set {
            if !admits(key) { return store.report(refusal(key.name)) }
            do { try store.set(newValue, for: key, mode: saveMode) } catch { store.report(error) }
        }
    }

    /// The value for `key`, throwing when the stored value does not decode (the loud read).
    ///
    /// - Returns: The stored value, or the key's default when nothing is stored.
    /// - Throws: ``DefaultsError/Code-swift.struct/decodingFailed`` with the key and what did not match.
    ///   The stored value is left untouched.
    public func value<Value>(for key: Key<Value>) throws(DefaultsError) -> Value {
        try store.checkedValue(for: key)
    }

    /// Stores `value` for `key`, encoding it now so an encoding failure is thrown (the loud write).
    ///
    /// The subscript encodes lazily, at the next save; use this when a value's `encode(to:)` can fail.
    /// The value is written according to ``saveMode``; with `.immediate` a failed save is thrown too.
    ///
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` when the value cannot be encoded or its JSON
    ///   nests deeper than ``Options/maximumDepth`` allows in the file (nothing is stored), or with
    ///   `.immediate` the save's error (the value stays stored in memory and pending; for
    ///   ``DefaultsError/Code-swift.struct/notDurable`` it is written but its durability is not confirmed).
    public func set<Value>(_ value: Value, for key: Key<Value>) throws(DefaultsError) {
        if !admits(key) { throw refusal(key.name) }
        if key.isNil(value) {
            if key.isSecret { store.markSecret([key.name]) }
            return try store.remove(key.name, mode: saveMode)
        }
        if key.hasConstraints, let violation = key.violation(of: value, stored: false, path: store.path) {
            throw violation
        }
        let fragment = try Codec.encode(value, key: key.name, encoder: Codec.makeEncoder(), maxDepth: store.maxDepth)
        try store.set(fragment: fragment, value: value, for: key, mode: saveMode)
    }

    /// Removes the stored values for `keys`: reads return the keys' defaults again.
    ///
    /// - Parameter keys: The keys to reset.
    public func reset(_ keys: AnyKey...) {
        reset(keys)
    }

    /// Removes the stored values for `keys`: reads return the keys' defaults again.
    ///
    /// - Parameter keys: The keys to reset.
    public func reset(_ keys: [AnyKey]) {
        var names: [String] = []
        for key in keys {
            if admits(key) { names.append(key.name) } else { store.report(refusal(key.name)) }
        }
        let secret = keys.filter(\.isSecret).map(\.name)
        if !secret.isEmpty { store.markSecret(secret) }
        do { try store.remove(names, mode: saveMode) } catch { store.report(error) }
    }

    /// Whether the store holds a value for `key` (rather than serving its default).
    public func hasStoredValue(for key: AnyKey) -> Bool {
        store.hasStoredValue(key.name)
    }

    /// The names of the stored keys, sorted as in the file (by UTF-8 bytes).
    public var keys: [String] { store.keys }

    /// Removes every stored value; reads return defaults. Written according to ``saveMode``.
    public func removeAll() {
        do { try store.removeAll(mode: saveMode) } catch { store.report(error) }
    }

    /// Re-reads the file, so changes other processes saved become visible. Unsaved changes made in this
    /// process are kept on top.
    ///
    /// - Throws: ``DefaultsError`` when the file cannot be read or parsed; the store then keeps its current
    ///   state, and no save writes over the file until it reads correctly again.
    public func reload() throws(DefaultsError) {
        try store.reload()
    }

    /// Forgets every change not yet written: each changed key goes back to what the file held when the
    /// store last read or wrote it. Observers of keys whose values change are notified.
    ///
    /// For a program that must leave the file as it was after a failed `save()` (otherwise the changes
    /// stay pending and are written by a later save, when the store goes away, or at exit).
    public func discardUnsavedChanges() {
        store.discardUnsavedChanges()
    }

    // MARK: Which keys a store takes: one rule, for every call that sets, removes or changes a key (the typed API,
    // the string API, batches, registration, modify, revert, and the command-line tool).

    /// Whether a set or removal of `key` is taken: it is not the reserved member and its name is within the
    /// store's lengths. The typed API's check, made from what the key knows of itself (no string is looked at);
    /// ``refusalIfAny(_:)`` is the same rule for a name.
    @inline(__always)
    func admits(_ key: AnyKey) -> Bool { !key.isReserved && store.takesKeyLength(key.nameLength) }

    /// Why a set or removal of `name` is refused, or `nil` when it is taken: the reserved member, a key over
    /// the length limit, or a key shorter than the storage can hold (``StorageFacts/minimumNameLength``).
    package func refusalIfAny(_ name: String) -> DefaultsError? {
        if let refusal = Self.refusalIfAny(name, maximumLength: store.maxKeyLength, path: url?.path) {
            return refusal
        }
        if name.utf8.count < store.minKeyLength {
            let what =
                store.minKeyLength == 1 ? "the empty key" : "a key shorter than \(store.minKeyLength) bytes of UTF-8"
            return DefaultsError(
                .invalidArgument, "the store's storage cannot hold \(what) (it has no such key); nothing was stored",
                path: store.path, key: name)
        }
        return nil
    }

    /// The part of the rule that needs no store: why a set or removal of `name` is refused in any store whose keys
    /// are at most `maximumLength` bytes (the reserved member, a key over the limit), or `nil`. The command-line
    /// tool asks it of a KEY argument before it opens the store.
    package static func refusalIfAny(
        _ name: String, maximumLength: Int, path: @autoclosure () -> String? = nil
    ) -> DefaultsError? {
        if name == schemaVersionKey {
            return DefaultsError(
                .reservedKey, "the key is reserved for the file's schema version and cannot be set or removed",
                key: name)
        }
        if name.utf8.count > maximumLength {
            return Store.keyTooLong(name, limit: maximumLength, path: path())
        }
        return nil
    }

    /// The error for a key that ``refusalIfAny(_:)`` refuses.
    func refusal(_ name: String) -> DefaultsError {
        refusalIfAny(name) ?? DefaultsError(.invalidArgument, "the key cannot be set", key: name)
    }
}
