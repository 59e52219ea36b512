/// An error from a ``Defaults`` store: what went wrong, and where.
///
/// Every failure of the library reaches you as a `DefaultsError`, either thrown or passed to the store's
/// error handler (``Defaults/onError``). It carries the context needed to act on it: the file's path, the key,
/// the line and column in the file, and the operating system's error number, each where it applies.
///
/// Compare errors by ``code``; new codes may be added in later versions, so a `switch` over codes needs a
/// `default` case.
///
/// ```swift
/// do {
///     let defaults = try Defaults(url: url)
///     // …
/// } catch {
///     if error.code == .invalidJSON {
///         print("\(error.path ?? "?"):\(error.line ?? 0):\(error.column ?? 0): \(error.message)")
///     }
/// }
/// ```
public struct DefaultsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of a ``DefaultsError``.
    ///
    /// A struct rather than an enum so that codes can be added without breaking existing `switch` statements.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, for logs and scripts.
        public let rawValue: String

        /// Creates a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's name.
        public var description: String { rawValue }

        /// The store file exists but could not be opened or read (see ``DefaultsError/errno``).
        public static let readFailed = Code(rawValue: "readFailed")
        /// The store file is not valid JSON, or its top level is not an object; line and column say where.
        public static let invalidJSON = Code(rawValue: "invalidJSON")
        /// The store file is larger than the configured limit.
        public static let fileTooLarge = Code(rawValue: "fileTooLarge")
        /// The store path names something that is not a regular file (a directory, FIFO or device).
        public static let notARegularFile = Code(rawValue: "notARegularFile")
        /// Writing the store file failed; the old file is unchanged and the changes stay pending.
        public static let writeFailed = Code(rawValue: "writeFailed")
        /// A rename in the store's directory happened, but flushing the directory after it failed, so it may not
        /// survive a power loss: the changes were written (the new file is in place and they count as saved), or
        /// an unreadable file was moved aside. The store retries the directory flush at the next save or
        /// `save()`, which throws this again until it succeeds.
        public static let notDurable = Code(rawValue: "notDurable")
        /// Another process held the sidecar lock file (``DefaultsError/path``) longer than
        /// ``Defaults/Options/lockTimeout``; nothing was written and the changes stay pending.
        public static let lockTimeout = Code(rawValue: "lockTimeout")
        /// A stored value is not valid for the type it was read as; the stored value is kept untouched.
        public static let decodingFailed = Code(rawValue: "decodingFailed")
        /// A value could not be encoded as JSON, or its JSON nests deeper than
        /// ``Defaults/Options/maximumDepth`` allows in the file; it was not stored.
        public static let encodingFailed = Code(rawValue: "encodingFailed")
        /// An unreadable store file was renamed aside (``DefaultsError/path`` is its new path): at opening, as
        /// ``Defaults/UnreadableFilePolicy/moveAside`` asks, the store then starts empty; by
        /// ``Defaults/moveAsideUnreadableFile()``, the store keeps its state and writes it in the file's place.
        public static let fileMovedAside = Code(rawValue: "fileMovedAside")
        /// A migration step threw; the file is untouched and the store did not open.
        public static let migrationFailed = Code(rawValue: "migrationFailed")
        /// The file's schema version is newer than this program's migrations know; it is not touched.
        public static let unsupportedSchemaVersion = Code(rawValue: "unsupportedSchemaVersion")
        /// The key is reserved by the library (``Defaults/schemaVersionKey``) and cannot be set or removed.
        public static let reservedKey = Code(rawValue: "reservedKey")
        /// A key is longer than ``Defaults/Options/maximumKeyLength``: in the file (which is then not opened)
        /// or given to a setter (which then stores nothing).
        public static let keyTooLong = Code(rawValue: "keyTooLong")
        /// An argument given to the API is not acceptable: a URL that is not a file URL or names no file, an
        /// invalid suite name, a negative limit in ``Defaults/Options``, migrations with a version below 1 or
        /// two with one version, or a migration step that opens the store it is migrating.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// A closure given to ``Defaults/modify(_:_:)-78wz9`` called what needs the store's save lock, which the
        /// update holds while the closure runs (`save()`, an `.immediate` save, `reload()`, a nested `modify`
        /// of the same store): the call is refused instead of waiting forever, and nothing it would do is done.
        public static let reentrantCall = Code(rawValue: "reentrantCall")
        /// A revert or undo needs history the store does not have: it keeps none (in memory, or
        /// ``Defaults/HistoryLimit/off``), nothing was recorded yet, the records before the revision asked for were
        /// dropped by the bound ("history before revision N is gone"), or a secret key's value would have to be
        /// restored (the history keeps none). Nothing is written.
        public static let historyUnavailable = Code(rawValue: "historyUnavailable")
        /// A value breaks a rule of its key (see ``Defaults/Constraint``): a set of it is refused and nothing is
        /// stored; a stored one reads as the key's default and is kept. The message names the rule.
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A change made while the store could not reach its data (an etcd store kept it in its local copy) met a
        /// newer change another writer made meanwhile: the other writer's value is kept, and the message quotes
        /// both (a secret key's, neither).
        public static let conflict = Code(rawValue: "conflict")
        /// A secret key's value is stored encrypted (``Defaults/Options/encryptionKey``) and the store has no key:
        /// reading it fails (the subscript gives the default), and setting a secret key whose stored value is
        /// encrypted is refused; the encrypted value is kept as it is.
        public static let encryptionKeyMissing = Code(rawValue: "encryptionKeyMissing")
        /// A secret key's value was encrypted with another key than the store's (the message gives both keys'
        /// ids): reading it fails, and the value is kept as it is.
        public static let encryptionKeyMismatch = Code(rawValue: "encryptionKeyMismatch")
    }

    /// What went wrong.
    public var code: Code
    /// A sentence a person can act on. ``description`` adds the path, key and position to it.
    public var message: String
    /// The store file's path, when the error concerns a file.
    public var path: String?
    /// The key concerned, when the error concerns one key.
    public var key: String?
    /// The 1-based line in the file where the problem is, for parse errors.
    public var line: Int?
    /// The 1-based column (in characters) in the file where the problem is, for parse errors.
    public var column: Int?
    /// The operating system's error number (`errno`), when a system call failed.
    public var errno: Int32?

    /// Creates an error. The library creates these; the initializer is public so tests and wrappers can too.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: A sentence a person can act on.
    ///   - path: The file concerned, if any.
    ///   - key: The key concerned, if any.
    ///   - line: The 1-based line in the file, if known.
    ///   - column: The 1-based column in the file, if known.
    ///   - errno: The system error number, if a system call failed.
    public init(
        _ code: Code, _ message: String, path: String? = nil, key: String? = nil, line: Int? = nil,
        column: Int? = nil, errno: Int32? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.key = key
        self.line = line
        self.column = column
        self.errno = errno
    }

    /// The error as one line: `path:line:column: key "k": message (errno N)`, leaving out what does not apply.
    ///
    /// The key is written as a JSON string (a quote, backslash or control character in it is escaped); a key
    /// of more than 64 characters is shortened to its first 40, `…` and its length in bytes. ``key`` itself
    /// always holds the whole key.
    public var description: String {
        var text = ""
        if let path {
            text += path
            if let line {
                text += ":\(line)"
                if let column { text += ":\(column)" }
            }
            text += ": "
        }
        if let key { text += "key \(KeyDescription.quoted(key)): " }
        text += message
        if let errno { text += " (errno \(errno))" }
        return text
    }
}
