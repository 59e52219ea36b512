#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// How a store file is opened: limits, what to do with a file that cannot be read, and migrations.
    ///
    /// ```swift
    /// let options = Defaults.Options(
    ///     unreadableFile: .moveAside,
    ///     migrations: [
    ///         .init(to: 1) { values in values["volume"] = values.removeValue(forKey: "soundLevel") }
    ///     ])
    /// let defaults = try Defaults(url: url, options: options)
    /// ```
    ///
    /// Options belong to the file's store: the first `Defaults` to open a file in a process sets them, and
    /// later ones on the same file share that store.
    public struct Options: Sendable {
        /// Files larger than this many bytes are refused (`fileTooLarge`). Default: 64 MiB. A negative limit
        /// makes opening throw `invalidArgument`. Whatever the limit, a store file over 2 GiB (2³¹ − 1 bytes) is
        /// refused with `fileTooLarge`: the index opening builds holds 31-bit offsets into the file.
        public var maximumFileSize: Int
        /// Files whose arrays and objects nest deeper than this are refused (`invalidJSON`); the file's
        /// top-level object is level 1. A value that would nest deeper in the file is refused before it is
        /// written (``DefaultsError/Code-swift.struct/encodingFailed``), so a store never writes a file it
        /// would refuse to open. Default: 512. A limit under 1 makes opening throw `invalidArgument`.
        public var maximumDepth: Int
        /// Keys longer than this many bytes of UTF-8 are refused, in the file (opening fails with
        /// ``DefaultsError/Code-swift.struct/keyTooLong``) and when set (the set is refused with that error).
        /// Default: 1024. A negative limit makes opening throw `invalidArgument`.
        public var maximumKeyLength: Int
        /// What opening does with a file that exists but does not parse or is too large.
        public var unreadableFile: UnreadableFilePolicy
        /// Versioned steps run over the file's values before the first read; see ``Migration``.
        public var migrations: [Migration]
        /// How long a save (or a migration, a move aside, the clean-up of leftover temporary files) waits for
        /// another process to release the sidecar lock file before it fails with
        /// ``DefaultsError/Code-swift.struct/lockTimeout``; the changes then stay pending for the next save.
        /// Any duration is accepted: zero or less tries the lock once, without waiting; a duration too long to
        /// represent in nanoseconds waits without bound. Default: 10 seconds.
        public var lockTimeout: Duration
        /// How much history the store keeps of its saves (see ``Defaults/history()-29g0``): by default the last 100
        /// saves or 1 MiB, whichever is less; ``HistoryLimit/off`` keeps none.
        public var history: HistoryLimit
        /// Whether the store is opened only to read (the command-line tool's reading commands and dry runs):
        /// opening neither takes the sidecar lock file nor removes temporary files a crashed writer left (a
        /// writer's next open or save does), and a save fails with
        /// ``DefaultsError/Code-swift.struct/invalidArgument``, writing nothing. Default: false.
        package var readsOnly = false

        /// The key a store encrypts its secret keys' values with at rest (keys made with `secret: true`, and names
        /// whose stored value is encrypted), in the file, its history's neighbours, a migration's backup, an etcd
        /// store's values and local copy: each value is sealed on its own (AES-256-GCM, its name bound to it), so
        /// names stay readable. Read when the store opens (opening fails when it cannot be). `nil` (the default):
        /// secret values are stored in clear, only kept out of texts and history, and an encrypted one does not
        /// read (``DefaultsError/Code-swift.struct/encryptionKeyMissing``). See <doc:KeysAndValues>.
        public var encryptionKey: EncryptionKey?
        /// Creates options; every parameter has the default described on its property.
        ///
        /// - Parameters:
        ///   - maximumFileSize: The size limit in bytes.
        ///   - maximumDepth: The nesting limit.
        ///   - maximumKeyLength: The key length limit in bytes of UTF-8.
        ///   - unreadableFile: What to do with a file that exists but does not parse or is too large.
        ///   - migrations: Versioned steps over the file's values.
        ///   - lockTimeout: The longest wait for another process's lock on the file.
        ///   - history: How much history of its saves the store keeps.
        ///   - encryptionKey: The key of the secret values at rest, or `nil`.
        public init(
            maximumFileSize: Int = 64 << 20, maximumDepth: Int = 512, maximumKeyLength: Int = 1024,
            unreadableFile: UnreadableFilePolicy = .throw, migrations: [Migration] = [],
            lockTimeout: Duration = .seconds(10), history: HistoryLimit = .default, encryptionKey: EncryptionKey? = nil
        ) {
            self.encryptionKey = encryptionKey
            self.maximumFileSize = maximumFileSize
            self.maximumDepth = maximumDepth
            self.maximumKeyLength = maximumKeyLength
            self.unreadableFile = unreadableFile
            self.migrations = migrations
            self.lockTimeout = lockTimeout
            self.history = history
        }

        /// The default options.
        public static let `default` = Options()

        /// Refuses limits no file could meet (a negative one, or a depth under 1), naming the option and the file.
        func check(path: String) throws(DefaultsError) {
            // The file's top-level object is level 1, so a depth limit under 1 would refuse every file.
            let limits = [
                ("maximumFileSize", maximumFileSize, 0), ("maximumDepth", maximumDepth, 1),
                ("maximumKeyLength", maximumKeyLength, 0), ("history.maximumSaves", history.maximumSaves, 0),
                ("history.maximumBytes", history.maximumBytes, 0),
            ]
            for (name, value, least) in limits where value < least {
                throw DefaultsError(
                    .invalidArgument, "the option \(name) is \(value); it must be \(least) or more", path: path)
            }
        }
    }

    /// How much history a store keeps of its saves: at most ``maximumSaves`` saves and ``maximumBytes`` bytes.
    ///
    /// When a save takes the history past either bound, its oldest records are dropped at once down to three
    /// quarters of both (so the history is rewritten once every quarter of the bound, not at every save): it holds
    /// between three quarters and all of the bound. A single save's record larger than ``maximumBytes`` is kept
    /// alone until the next save. Either bound at 0 keeps no history; the history already kept is left as it is.
    public struct HistoryLimit: Sendable, Hashable {
        /// The most saves kept.
        public var maximumSaves: Int
        /// The most bytes the records take (the file beside a store file; on etcd, the records' values).
        public var maximumBytes: Int

        /// A limit of `maximumSaves` saves and `maximumBytes` bytes. A negative bound makes opening throw
        /// `invalidArgument`.
        public init(maximumSaves: Int = 100, maximumBytes: Int = 1 << 20) {
            self.maximumSaves = maximumSaves
            self.maximumBytes = maximumBytes
        }

        /// The last 100 saves or 1 MiB, whichever is less.
        public static let `default` = HistoryLimit()
        /// No history: saves record nothing.
        public static let off = HistoryLimit(maximumSaves: 0, maximumBytes: 0)

        /// Whether saves are recorded (both bounds above 0).
        public var isEnabled: Bool { maximumSaves > 0 && maximumBytes > 0 }
    }

    /// What opening a store does with a file that exists but does not parse or is over the size limit.
    public enum UnreadableFilePolicy: Sendable, Hashable {
        /// Opening throws the error (path, line, column); the file is never written over. The default.
        case `throw`
        /// The file is renamed to `<name>.corrupt-<timestamp>` beside it (never deleted), the store starts
        /// empty, and a ``DefaultsError/Code-swift.struct/fileMovedAside`` error naming both files goes to the
        /// error handler (pass `onError:` to ``Defaults/init(url:saveMode:arguments:options:overrides:fallbacks:onError:)`` to
        /// receive it: opening reports it before the initializer returns).
        case moveAside
    }

    /// One versioned step over a store file's values, run when the file's schema version is older.
    ///
    /// The file keeps its schema version in the reserved member ``Defaults/schemaVersionKey``. On opening,
    /// every step whose ``version`` is above the file's runs in order over all the file's values, as
    /// ``JSONValue``s by key. Then, under the file's lock, the original file is copied durably to
    /// `<name>.v<old version>.bak` beside it, and the migrated values are written with the new version. A
    /// step that throws leaves the file untouched and makes opening fail with
    /// ``DefaultsError/Code-swift.struct/migrationFailed``. A file with a version newer than the last step
    /// is refused (``DefaultsError/Code-swift.struct/unsupportedSchemaVersion``), never downgraded or
    /// overwritten. A file without the member has version 0; a new file gets the last step's version.
    public struct Migration: Sendable {
        /// The schema version the step produces: 1 or more, different for every step (checked on opening).
        public let version: Int
        /// The step.
        let body: @Sendable (inout [String: JSONValue]) throws -> Void

        /// Creates a step that brings values to `version`.
        ///
        /// - Parameters:
        ///   - version: The schema version after this step.
        ///   - body: Changes the values in place; throw to refuse the file.
        public init(to version: Int, _ body: @escaping @Sendable (inout [String: JSONValue]) throws -> Void) {
            self.version = version
            self.body = body
        }
    }

    /// The reserved member that holds a file's schema version: `"$schemaVersion"`.
    ///
    /// It is not a key: it never appears in ``keys`` or ``dictionaryRepresentation()``, and setting or
    /// removing it through the API is refused with ``DefaultsError/Code-swift.struct/reservedKey`` (thrown by
    /// the throwing API, reported to ``onError`` otherwise) rather than silently mixing with the version.
    public static let schemaVersionKey = "$schemaVersion"

    /// Moves a store file that no longer parses out of the way and writes the store's current state in its
    /// place: the explicit recovery after an outside edit broke the file.
    ///
    /// The broken file is renamed to `<name>.corrupt-<timestamp>` beside it (never deleted), a
    /// ``DefaultsError/Code-swift.struct/fileMovedAside`` notice naming both files goes to ``onError``, and
    /// the store's state is written in its place. If the file parses, nothing is moved and this is a
    /// `save()`.
    ///
    /// Once the rename succeeded the file counts as moved, even if flushing its directory then fails: the
    /// store keeps its state and writes it, and that write flushes the directory again. Only if that flush
    /// fails too does this throw ``DefaultsError/Code-swift.struct/notDurable`` (the file is moved and the
    /// state written, but a power loss may undo them); later saves retry the flush, as after any
    /// `notDurable`.
    ///
    /// - Returns: The URL the broken file was moved to, or `nil` when nothing was moved.
    /// - Throws: ``DefaultsError``: `writeFailed` when the rename fails (the file is where it was, the state
    ///   unchanged), `notDurable` as above, or what `save()` throws when writing the state fails (the file
    ///   is then moved, and the state stays pending).
    @discardableResult
    public func moveAsideUnreadableFile() throws(DefaultsError) -> URL? {
        let moved = try store.moveAsideUnreadableFile()
        try store.save()
        return moved.map { URL(fileURLWithPath: $0) }
    }
}
