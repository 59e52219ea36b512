import Foundation
import Testing

@testable import CodableDefaults

/// A fresh temporary directory for one test, removed when the value is deinitialized.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("CodableDefaultsTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // A test that made something unremovable must not fail the others; leftovers live in the temp dir.
        do { try FileManager.default.removeItem(at: url) } catch {}
    }

    /// A path inside the directory.
    func file(_ name: String = "settings.json") -> URL { url.appendingPathComponent(name) }

    /// The names in the directory, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }
}

/// Collects what a store reports to its error handler.
final class ErrorLog: Sendable {
    private let storage = Locked<[DefaultsError]>([])

    var errors: [DefaultsError] { storage.withLock { $0 } }

    var handler: @Sendable (DefaultsError) -> Void {
        { error in self.storage.withLock { $0.append(error) } }
    }
}

/// Opens a store on `url` that is not shared with other `Defaults` in this process, as another process
/// would: a fresh read of the file.
func openFresh(_ url: URL, saveMode: Defaults.SaveMode = .manual, options: Defaults.Options = .default) throws
    -> Defaults
{
    let store = Store(path: url.path, options: options)
    try store.load()
    return Defaults(store: store, saveMode: saveMode, url: url)
}

/// The bytes of a file.
func bytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }

/// The text of a file.
func text(_ url: URL) throws -> String { String(decoding: try Data(contentsOf: url), as: UTF8.self) }

/// Writes text to a file the way a well-behaved other program does: to a temporary file, then renamed into
/// place. A store watching the file never sees it half-written (a writer that truncates and rewrites in place
/// can be seen empty or cut short, which a watching store reads as such).
func write(_ text: String, to url: URL) throws { try Data(text.utf8).write(to: url, options: .atomic) }

/// Waits until `condition` holds, up to `timeout` seconds. Returns whether it held.
func eventually(timeout: Double = 10, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

extension Defaults.Keys {
    static let volume = Defaults.Key<Double>("volume", default: 0.5)
    static let profile = Defaults.Key<Profile>("profile", default: Profile(name: "Guest", age: 0))
    static let token = Defaults.Key<String?>("token")
    static let count = Defaults.Key<Int>("count", default: 0)
}

/// Waits until a save of `defaults` has found the file lock held and is waiting for it: the positive sign that
/// a save waits for the lock. Returns whether that was seen within `timeout` seconds.
func waitForLockWaiter(_ defaults: Defaults, timeout: Double = 30) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if defaults.store.lockWaitCount > 0 { return true }
        usleep(1000)
    } while Date() < deadline
    return false
}

/// Prints a line about what a test measured (crash and fault-injection summaries) when the environment
/// variable `CODABLE_DEFAULTS_TEST_LOG` is set, so that `swift test` stays quiet when it passes.
func testLog(_ line: @autoclosure () -> String) {
    guard ProcessInfo.processInfo.environment["CODABLE_DEFAULTS_TEST_LOG"] != nil else { return }
    print(line())
}

/// The built tool: `codable-defaults` in the build directory that holds the test bundle, for the tests that
/// run it as a real process.
let builtTool: URL? = {
    var starts = Bundle.allBundles.map(\.bundleURL)
    if let executable = Bundle.main.executableURL { starts.append(executable) }
    starts.append(URL(fileURLWithPath: CommandLine.arguments[0]))
    for start in starts {
        var directory = start.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("codable-defaults")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
    }
    return nil
}()
