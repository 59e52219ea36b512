import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A directory made for one case (or one run) under the run's temporary root, removed by ``remove()``.
struct TempDirectory: Sendable {
    /// The absolute path, without a trailing slash.
    let path: String

    /// Makes a new, empty directory with a unique name starting with `prefix`.
    init(in parent: String, prefix: String) throws {
        var template = Array("\(parent)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw BenchmarkError.system("mkdtemp", "\(parent)/\(prefix).XXXXXX") }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A directory that already exists (to remove it).
    init(existing path: String) {
        self.path = path
    }

    /// The path of `name` inside the directory.
    func file(_ name: String) -> String { "\(path)/\(name)" }

    /// The URL of `name` inside the directory.
    func url(_ name: String) -> URL { URL(fileURLWithPath: file(name)) }

    /// Removes the directory and everything in it.
    func remove() throws {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw BenchmarkError("cannot remove the temporary directory \(path): \(error)")
        }
    }
}

/// The values the benchmark stores put under their keys: a mix of the shapes settings take.
enum SampleValue {
    case integer(Int)
    case text(String)
    case object(count: Int, name: String, tags: [String])
    case list([Int])

    /// The value for the key at `index`: an integer for every index divisible by 4 (so typed `Int` reads
    /// can pick one), then a sentence, an object and an array.
    static func make(_ index: Int) -> SampleValue {
        switch index % 4 {
        case 0: return .integer(index * 7)
        case 1: return .text("preference value \(index), a sentence of ordinary length for a stored setting")
        case 2: return .object(count: index, name: "item \(index)", tags: ["alpha", "beta"])
        default: return .list(Array(index..<index + 8))
        }
    }

    /// The key name for `index`: zero-padded so that the names sort as the numbers do.
    static func key(_ index: Int) -> String {
        let digits = String(index)
        return "key" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    /// The value as compact JSON with sorted keys, as the store writes it.
    var json: String {
        switch self {
        case .integer(let value): return String(value)
        case .text(let value): return "\"\(value)\""
        case .object(let count, let name, let tags):
            let list = tags.map { "\"\($0)\"" }.joined(separator: ",")
            return "{\"count\":\(count),\"name\":\"\(name)\",\"tags\":[\(list)]}"
        case .list(let values): return "[" + values.map(String.init).joined(separator: ",") + "]"
        }
    }

    /// The value as property-list objects, for UserDefaults.
    var propertyList: Any {
        switch self {
        case .integer(let value): return value
        case .text(let value): return value
        case .object(let count, let name, let tags):
            return ["count": count, "name": name, "tags": tags] as [String: Any]
        case .list(let values): return values
        }
    }

    /// The value for the naive pattern's dictionary.
    var naive: AnyJSON {
        switch self {
        case .integer(let value): return .integer(value)
        case .text(let value): return .string(value)
        case .object(let count, let name, let tags):
            return .object(["count": .integer(count), "name": .string(name), "tags": .array(tags.map(AnyJSON.string))])
        case .list(let values): return .array(values.map(AnyJSON.integer))
        }
    }
}

/// Store contents made from ``SampleValue``: the same data for every contender.
enum Fixture {
    /// A store file in CodableDefaults' format (members sorted, one per line) holding keys `0..<count`.
    static func storeFile(keys count: Int) -> [UInt8] {
        guard count > 0 else { return Array("{}\n".utf8) }
        var text = "{\n"
        text.reserveCapacity(count * 80)
        for index in 0..<count {
            if index > 0 { text += ",\n" }
            text += "  \"\(SampleValue.key(index))\": \(SampleValue.make(index).json)"
        }
        text += "\n}\n"
        return Array(text.utf8)
    }

    /// How many keys make a store file of about `bytes` bytes (at most one member more).
    static func keys(forBytes bytes: Int) -> Int {
        var total = 4  // "{\n" and "\n}\n"
        var count = 0
        while total < bytes {
            // `  "key": value` plus ",\n" (the last member has none, so this rounds up by two bytes).
            total += 2 + SampleValue.key(count).utf8.count + 4 + SampleValue.make(count).json.utf8.count + 2
            count += 1
        }
        return count
    }

    /// The same contents as a property-list dictionary, for UserDefaults.
    static func propertyList(keys count: Int) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        dictionary.reserveCapacity(count)
        for index in 0..<count { dictionary[SampleValue.key(index)] = SampleValue.make(index).propertyList }
        return dictionary
    }

    /// The same contents for the naive pattern.
    static func naiveDictionary(keys count: Int) -> [String: AnyJSON] {
        var dictionary: [String: AnyJSON] = [:]
        dictionary.reserveCapacity(count)
        for index in 0..<count { dictionary[SampleValue.key(index)] = SampleValue.make(index).naive }
        return dictionary
    }
}

/// Small file helpers that fail loudly.
enum Files {
    /// Writes `bytes` to `path` (plainly: this is setup, not a measured save).
    static func write(_ bytes: [UInt8], to path: String) throws {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw BenchmarkError("cannot write \(path): \(error)")
        }
    }

    /// The contents of `path`.
    static func read(_ path: String) throws -> [UInt8] {
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw BenchmarkError("cannot read \(path): \(error)")
        }
    }

    /// The size of `path` in bytes.
    static func size(_ path: String) throws -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { throw BenchmarkError.system("stat", path) }
        return Int(info.st_size)
    }

    /// The absolute path of the running executable.
    static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw BenchmarkError.system("readlink", "/proc/self/exe") }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
