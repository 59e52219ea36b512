import CodableDefaults
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh temporary directory for one test, removed when the value is deinitialized.
package final class TemporaryDirectory: @unchecked Sendable {
    /// The directory, canonical (see ``init()``).
    package let url: URL
    /// The directory's path, canonical.
    package var path: String { url.path }

    /// Makes the directory. Its URL is canonical (no symbolic link), as the paths a store reports are: on Apple
    /// systems the temporary directory is under `/var`, a link to `/private/var`.
    package init() throws {
        let made = FileManager.default.temporaryDirectory
            .appendingPathComponent("CodableDefaultsTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        url = URL(fileURLWithPath: canonicalPath(made.path), isDirectory: true)
    }

    deinit {
        // A test that made something unremovable must not fail the others; leftovers live in the temp dir.
        do { try FileManager.default.removeItem(at: url) } catch {}
    }

    /// A path inside the directory.
    package func file(_ name: String = "settings.json") -> URL { url.appendingPathComponent(name) }

    /// The names in the directory, sorted.
    package func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }
}

/// Collects what a store reports to its error handler.
package final class ErrorLog: Sendable {
    private let storage = Locked<[DefaultsError]>([])

    /// An empty log.
    package init() {}

    /// The errors reported so far, in order.
    package var errors: [DefaultsError] { storage.withLock { $0 } }

    /// A handler that appends to the log, for `onError`.
    package var handler: @Sendable (DefaultsError) -> Void {
        { error in self.storage.withLock { $0.append(error) } }
    }
}

/// Opens a store on `url` that is not shared with other `Defaults` in this process, as another process
/// would: a fresh read of the file.
package func openFresh(_ url: URL, saveMode: Defaults.SaveMode = .manual, options: Defaults.Options = .default) throws
    -> Defaults
{
    let store = Store(storage: makeStorage(path: url.path, options: options), options: options)
    try store.load()
    return Defaults(store: store, saveMode: saveMode, url: url)
}

/// Writes an encryption key file only its owner may read or write (mode 0600), holding `hex` (64 hexadecimal
/// digits), as `openssl rand -hex 32 > FILE && chmod 600 FILE` makes one.
///
/// - Throws: An error naming the file when it cannot be made.
package func writeKeyFile(_ url: URL, hex: String) throws {
    guard
        FileManager.default.createFile(
            atPath: url.path, contents: Data((hex + "\n").utf8), attributes: [.posixPermissions: 0o600])
    else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
}

/// The bytes of a file.
package func bytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }

/// The text of a file.
package func text(_ url: URL) throws -> String { String(decoding: try Data(contentsOf: url), as: UTF8.self) }

/// Writes text to a file the way a well-behaved other program does: to a temporary file, then renamed into
/// place. A store watching the file never sees it half-written (a writer that truncates and rewrites in place
/// can be seen empty or cut short, which a watching store reads as such).
package func write(_ text: String, to url: URL) throws { try Data(text.utf8).write(to: url, options: .atomic) }

/// Waits until `condition` holds, up to `timeout` seconds. Returns whether it held.
///
/// `timeout` guards against a hang; it is not a time the condition is expected to take. In a full `swift test` on
/// two cores, every task (the one that would make `condition` true included) may wait long for a thread of the
/// cooperative pool: give a wait minutes, not seconds.
package func eventually(timeout: Double = 120, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// A `Codable` struct value, for the keys of the tests.
package struct Profile: Codable, Equatable, Sendable {
    /// A name.
    package var name: String
    /// An age.
    package var age: Int

    /// A profile of `name` and `age`.
    package init(name: String, age: Int) {
        self.name = name
        self.age = age
    }
}

extension Defaults.Keys {
    package static let volume = Defaults.Key<Double>("volume", default: 0.5)
    package static let profile = Defaults.Key<Profile>("profile", default: Profile(name: "Guest", age: 0))
    package static let token = Defaults.Key<String?>("token")
    package static let count = Defaults.Key<Int>("count", default: 0)
}

#if CODABLE_DEFAULTS_TESTING
    /// Waits until a save of `defaults` has found the file lock held and is waiting for it: the positive sign that
    /// a save waits for the lock. Returns whether that was seen within `timeout` seconds. Debug builds only (the
    /// counter is a test hook, compiled with `CODABLE_DEFAULTS_TESTING`).
    package func waitForLockWaiter(_ defaults: Defaults, timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if defaults.store.lockWaitCount > 0 { return true }
            usleep(1000)
        } while Date() < deadline
        return false
    }
#endif

/// Prints a line about what a test measured (crash and fault-injection summaries) when the environment
/// variable `CODABLE_DEFAULTS_TEST_LOG` is set, so that `swift test` stays quiet when it passes.
package func testLog(_ line: @autoclosure () -> String) {
    guard ProcessInfo.processInfo.environment["CODABLE_DEFAULTS_TEST_LOG"] != nil else { return }
    print(line())
}

/// The canonical form of `path` (`realpath`), or `path` itself when it cannot be resolved.
package func canonicalPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// Whether this is Linux with `/proc` mounted, for the tests that read a process's descriptors in
/// `/proc/PID/fd`: Apple platforms have no `/proc`.
package let hasProcFileSystem: Bool = {
    #if os(Linux)
        return FileManager.default.fileExists(atPath: "/proc/self/fd")
    #else
        return false
    #endif
}()

/// Whether the tests run on Linux: the tests of Linux tools and file systems (strace, util-linux, e2fsprogs,
/// tmpfs) are skipped elsewhere, with the reason.
package let isLinux: Bool = {
    #if os(Linux)
        return true
    #else
        return false
    #endif
}()
