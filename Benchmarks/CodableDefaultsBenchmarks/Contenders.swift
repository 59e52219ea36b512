import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Any JSON value: the `Value` of the naive pattern's `[String: Value]` dictionary.
enum AnyJSON: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int)
    case double(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Each shape is tried in turn: a mismatch is the expected answer "not this shape", not an error.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([AnyJSON].self) {
            self = .array(value)
        } else {
            // The last shape: its error, if any, is the one thrown.
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// The physical reference for a read: a `Dictionary` behind the same kind of lock the library uses.
final class LockedDictionary<Value>: @unchecked Sendable {
    private let lock = BenchLock()
    private var storage: [String: Value]

    /// Creates the dictionary with its contents.
    init(_ contents: [String: Value]) {
        storage = contents
    }

    /// The value for `key`, looked up under the lock.
    @inline(__always)
    subscript(key: String) -> Value? {
        get { lock.withLock { storage[key] } }
        set { lock.withLock { storage[key] = newValue } }
    }
}

/// The naive pattern many apps use: a `[String: Value]` dictionary encoded whole with `JSONEncoder` and
/// written with `Data.write(options: .atomic)` after every set.
final class NaiveStore {
    /// The values.
    private(set) var values: [String: AnyJSON]
    private let url: URL
    private let encoder = JSONEncoder()

    /// A store at `path` holding `values` (nothing is written until the first set).
    init(path: String, values: [String: AnyJSON]) {
        self.url = URL(fileURLWithPath: path)
        self.values = values
    }

    /// Sets a value and writes the whole dictionary, as the naive pattern does.
    func set(_ value: AnyJSON, forKey key: String) throws {
        values[key] = value
        let data: Data
        do {
            data = try encoder.encode(values)
        } catch {
            throw BenchmarkError("naive pattern: JSONEncoder failed: \(error)")
        }
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw BenchmarkError("naive pattern: cannot write \(url.path): \(error)")
        }
    }
}

/// The physical reference for a save: the bytes written to a temporary file, `fsync`ed, renamed over the
/// target, and the directory `fsync`ed — what a durable atomic save cannot avoid doing.
enum RawDurableWrite {
    /// Writes `bytes` durably and atomically to `directory/name`.
    static func save(_ bytes: [UInt8], directory: String, name: String) throws {
        let target = "\(directory)/\(name)"
        let temporary = "\(directory)/.\(name).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BenchmarkError.system("open", temporary) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(fd, buffer.baseAddress! + written, buffer.count - written)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let error = BenchmarkError.system("write", temporary)
                close(fd)
                throw error
            }
            written += count
        }
        guard fsync(fd) == 0 else {
            let error = BenchmarkError.system("fsync", temporary)
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw BenchmarkError.system("close", temporary) }
        guard rename(temporary, target) == 0 else { throw BenchmarkError.system("rename", temporary) }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw BenchmarkError.system("open", directory) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw BenchmarkError.system("fsync", directory) }
    }
}

/// A fresh `UserDefaults` suite whose property list lives in the run's temporary `XDG_CONFIG_HOME`.
///
/// swift-corelibs-foundation keeps a suite named `name` in `$XDG_CONFIG_HOME/name.plist`, reads it on first
/// use, and writes it (in place) only on `synchronize()`. It takes `XDG_CONFIG_HOME` from the environment
/// the process started with: `setenv` later is ignored (it then writes to `~/.config`), which is why `main`
/// re-executes the program with the variable set. ``verifyPersisted(key:value:)`` checks that the file
/// really is where the figures assume it is.
final class UserDefaultsSuite {
    /// The suite.
    let defaults: UserDefaults
    /// The suite's name.
    let name: String
    /// Where Foundation keeps the suite's property list.
    let plistPath: String

    /// Opens a suite with a new name, first writing `contents` as its property list when given.
    init(name: String, contents: [String: Any]? = nil) throws {
        self.name = name
        self.plistPath = try Self.plistPath(forSuite: name)
        if FileManager.default.fileExists(atPath: plistPath) {
            throw BenchmarkError("UserDefaults suite \(name) is not fresh: \(plistPath) exists")
        }
        if let contents {
            let data: Data
            do {
                data = try PropertyListSerialization.data(fromPropertyList: contents, format: .xml, options: 0)
            } catch {
                throw BenchmarkError("cannot make the property list for suite \(name): \(error)")
            }
            try Files.write([UInt8](data), to: plistPath)
        }
        guard let defaults = UserDefaults(suiteName: name) else {
            throw BenchmarkError("UserDefaults(suiteName: \(name)) returned nil")
        }
        self.defaults = defaults
        if let contents, let (key, _) = contents.first, defaults.object(forKey: key) == nil {
            throw BenchmarkError("UserDefaults suite \(name) did not load \(plistPath) (key \(key) missing)")
        }
    }

    /// Where Foundation keeps the property list of the suite `name`: `$XDG_CONFIG_HOME/name.plist`.
    static func plistPath(forSuite name: String) throws -> String {
        guard let home = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"] else {
            throw BenchmarkError("XDG_CONFIG_HOME is not set: refusing to let UserDefaults write to ~/.config")
        }
        return "\(home)/\(name).plist"
    }

    /// Checks that the suite's file on disk holds `value` for `key`: proof that `synchronize()` wrote the
    /// file the benchmark thinks it wrote.
    func verifyPersisted(key: String, value: Int) throws {
        let bytes = try Files.read(plistPath)
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            throw BenchmarkError("UserDefaults wrote an unreadable \(plistPath): \(error)")
        }
        guard let dictionary = object as? [String: Any], dictionary[key] as? Int == value else {
            throw BenchmarkError("UserDefaults did not persist \(key) = \(value) to \(plistPath)")
        }
    }

    /// Deletes the suite's file. (Not `removePersistentDomain(forName:)`: on Linux it removes the keys one
    /// by one, at a cost that grows with the pending changes — 5.7 s for 10k keys.)
    func remove() throws {
        if FileManager.default.fileExists(atPath: plistPath) {
            do {
                try FileManager.default.removeItem(atPath: plistPath)
            } catch {
                throw BenchmarkError("cannot remove \(plistPath): \(error)")
            }
        }
    }
}
