import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's files: private modes, planted links and files that are never followed or truncated, the
/// symbolic-link policy of the store path, and paths that are not regular files. (Refusing a FIFO or a
/// directory that is already there when the store opens is in ``LoadErrorTests``.)
@Suite struct FileSecurityTests {
    // MARK: Modes

    // umask is per process and other tests run at the same time: only masks that cannot change what they
    // create (the library's 0700 directories and 0600 files) are used.
    @Test(arguments: [0o000, 0o002, 0o022, 0o077] as [mode_t])
    func newStoreFileIsPrivateWhateverTheUmask(mask: mode_t) throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("a/b/settings.json")
        let previous = umask(mask)
        defer { umask(previous) }
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try defaults.save()
        umask(previous)
        #expect(try Self.mode(url.path) == 0o600, "the store file, umask \(String(mask, radix: 8))")
        #expect(try Self.mode(dir.url.appendingPathComponent("a").path) == 0o700, "a created directory")
        #expect(try Self.mode(dir.url.appendingPathComponent("a/b").path) == 0o700, "a created directory")
        #expect(try Self.mode(dir.url.appendingPathComponent("a/b/.settings.json.lock").path) == 0o600)
        #expect(try Self.mode(dir.url.appendingPathComponent("a/b/.settings.json.queue").path) == 0o600)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o400, 0o660] as [mode_t])
    func existingFileModeIsKept(mode: mode_t) throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write("{\"count\": 1}\n", to: url)
        #expect(chmod(url.path, mode) == 0)
        let defaults = try openFresh(url)
        defaults[.count] = 2
        try defaults.save()
        #expect(try Self.mode(url.path) == mode)
        #expect(try openFresh(url)[.count] == 2)
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a file to another user"))
    func existingOwnerIsKeptWhenRootSaves() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write("{\"count\": 1}\n", to: url)
        #expect(chown(url.path, 1234, 1234) == 0)
        #expect(chmod(url.path, 0o600) == 0)
        let defaults = try openFresh(url)
        defaults[.count] = 2
        try defaults.save()
        var info = stat()
        #expect(stat(url.path, &info) == 0)
        // Otherwise `sudo some-tool` locks the user out of their own 0600 settings file.
        #expect(info.st_uid == 1234 && info.st_gid == 1234, "owner \(info.st_uid):\(info.st_gid)")
        #expect(info.st_mode & 0o7777 == 0o600)
    }

    // MARK: Planted files

    @Test func symlinksAndFilesPlantedAtTemporaryNamesAreNeitherFollowedNorTruncated() throws {
        let dir = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        let victim = outside.file("victim")
        try write("secret", to: victim)
        let url = dir.file()
        let defaults = try openFresh(url)

        // Names shaped like the store's temporary files: `.<name>.<pid>.<random>.tmp`.
        let pid = getpid()
        let linkNames = ["0", "1", "a", "zzzzzzzzzzzz", "3w5e11264sgsf"].map { ".settings.json.\(pid).\($0).tmp" }
        for name in linkNames { #expect(symlink(victim.path, dir.file(name).path) == 0) }
        let plantedFile = dir.file(".settings.json.\(pid).planted.tmp")
        try write("planted", to: plantedFile)

        for value in 1...20 {
            defaults[.count] = value
            try defaults.save()
        }
        #expect(try text(victim) == "secret", "the link's target is untouched")
        for name in linkNames {
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file(name).path) == victim.path)
        }
        #expect(try text(plantedFile) == "planted")
        #expect(try Self.isRegularFile(url.path))
        #expect(try openFresh(url)[.count] == 20)

        // The next open removes them as leftovers: the links themselves, never what they point to.
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])
        #expect(try text(victim) == "secret")
        #expect(try outside.contents() == ["victim"])
    }

    @Test(arguments: [".settings.json.lock", ".settings.json.queue"])
    func symlinkPlantedAtTheLockOrQueueFileIsNotFollowed(sidecar: String) throws {
        let dir = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        let victim = outside.file("victim")
        try write("secret", to: victim)
        let url = dir.file()
        let defaults = try openFresh(url)
        #expect(symlink(victim.path, dir.file(sidecar).path) == 0)
        defaults[.count] = 1
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed)
        #expect(error?.errno == ELOOP, "\(String(describing: error))")
        #expect(error?.path == dir.file(sidecar).path)
        #expect(try text(victim) == "secret")
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(defaults.hasStoredValue(for: .count), "the change stays pending")
        // Nothing left for the save at deinit to report.
        defaults.discardUnsavedChanges()
    }

    @Test func directoryAtATemporaryNameDoesNotStopTheStore() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write("{\"count\": 1}\n", to: url)
        let planted = dir.file(".settings.json.1.planted.tmp")
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: false)
        try write("inside", to: planted.appendingPathComponent("file"))

        let store = Store(storage: makeStorage(path: url.path, options: .default), options: .default)
        let log = ErrorLog()
        store.onError = log.handler
        try store.load()
        let defaults = Defaults(store: store, saveMode: .manual, url: url)
        #expect(defaults[.count] == 1)
        defaults[.count] = 2
        try defaults.save()
        #expect(try text(planted.appendingPathComponent("file")) == "inside")
        #expect(try openFresh(url)[.count] == 2)
    }

    // MARK: Symbolic link at the store path

    @Test(arguments: [true, false])
    func symlinkAtTheStorePathIsFollowedAndStaysALink(relative: Bool) throws {
        let dir = try TemporaryDirectory()
        let real = dir.file("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        let target = real.appendingPathComponent("settings.json")
        try write("{\"count\": 1}\n", to: target)
        #expect(chmod(target.path, 0o640) == 0)
        let link = dir.file("link.json")
        let destination = relative ? "real/settings.json" : target.path
        #expect(symlink(destination, link.path) == 0)

        let defaults = try Defaults(url: link, saveMode: .manual)
        #expect(defaults[.count] == 1)
        defaults[.count] = 2
        try defaults.save()

        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == destination)
        #expect(try openFresh(target)[.count] == 2, "the target is written")
        #expect(try Self.mode(target.path) == 0o640)
        #expect(try dir.contents() == ["link.json", "real"], "nothing is written beside the link")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: real.path).sorted() == [
                ".settings.json.history", ".settings.json.lock", ".settings.json.queue", "settings.json",
            ])
        // The history holds past values: only its owner reads it, whatever the store file's mode.
        #expect(try Self.mode(real.appendingPathComponent(".settings.json.history").path) == 0o600)
    }

    @Test func chainOfSymlinksIsFollowedToTheEnd() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("target.json")
        try write("{}\n", to: target)
        #expect(symlink(target.path, dir.file("middle.json").path) == 0)
        #expect(symlink("middle.json", dir.file("first.json").path) == 0)
        let defaults = try Defaults(url: dir.file("first.json"), saveMode: .manual)
        defaults[.count] = 3
        try defaults.save()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file("first.json").path) == "middle.json")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir.file("middle.json").path) == target.path)
        #expect(try openFresh(target)[.count] == 3)
    }

    @Test func danglingSymlinkAtTheStorePathStaysALink() throws {
        let dir = try TemporaryDirectory()
        let real = dir.file("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        let target = real.appendingPathComponent("settings.json")
        let link = dir.file("link.json")
        #expect(symlink(target.path, link.path) == 0)

        let defaults = try Defaults(url: link, saveMode: .manual)
        defaults[.count] = 4
        // Creating the target through the link and refusing with an error are both acceptable; replacing the
        // link with a regular file is not.
        let flushed: Bool
        do {
            try defaults.save()
            flushed = true
        } catch {
            flushed = false
        }
        var info = stat()
        #expect(lstat(link.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK, "the link stays a link")
        if flushed { #expect(try openFresh(target)[.count] == 4, "the link's target is created") }
    }

    // MARK: Paths that are not regular files

    @Test func deviceBehindASymlinkIsRefused() throws {
        let dir = try TemporaryDirectory()
        let link = dir.file("settings.json")
        #expect(symlink("/dev/null", link.path) == 0)
        let error = #expect(throws: DefaultsError.self) { try openFresh(link) }
        #expect(error?.code == .notARegularFile)
        #expect(error?.path == link.path)
        #expect(error.map { "\($0)".contains("not a regular file") } == true)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "/dev/null")
        #expect(try Self.isCharacterDevice("/dev/null"))
    }

    @Test func deviceNodeIsRefused() throws {
        let dir = try TemporaryDirectory()
        let node = dir.file("settings.json")
        // A character device like /dev/null (1, 3); needs root and CAP_MKNOD.
        guard mknod(node.path, S_IFCHR | 0o600, dev_t((1 << 8) | 3)) == 0 else {
            testLog("deviceNodeIsRefused: mknod is not allowed here (errno \(errno)); tested through /dev/null only")
            return
        }
        let error = #expect(throws: DefaultsError.self) { try openFresh(node) }
        #expect(error?.code == .notARegularFile)
        #expect(try Self.isCharacterDevice(node.path))
    }

    @Test func fifoAppearingAfterOpeningIsRefusedAndLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 5
        #expect(mkfifo(url.path, 0o600) == 0)
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .notARegularFile, "\(String(describing: error))")
        #expect(error?.path == url.path)
        var info = stat()
        #expect(lstat(url.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the FIFO is still there")
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])

        unlink(url.path)
        try defaults.save()
        #expect(try openFresh(url)[.count] == 5, "the change stayed pending")
    }

    @Test func directoryAppearingAfterOpeningIsRefusedAndLeftAlone() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 6
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        try write("keep me", to: url.appendingPathComponent("inside"))
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .notARegularFile, "\(String(describing: error))")
        #expect(try text(url.appendingPathComponent("inside")) == "keep me")
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])

        try FileManager.default.removeItem(at: url)
        try defaults.save()
        #expect(try openFresh(url)[.count] == 6)
    }

    // MARK: Helpers

    /// The permission bits of the file at `path` (not following a symbolic link).
    static func mode(_ path: String) throws -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw ChildProcessError(description: "lstat \(path): errno \(errno)") }
        return info.st_mode & 0o7777
    }

    /// Whether `path` is a regular file (not following a symbolic link).
    static func isRegularFile(_ path: String) throws -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw ChildProcessError(description: "lstat \(path): errno \(errno)") }
        return (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether `path` is a character device.
    static func isCharacterDevice(_ path: String) throws -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ChildProcessError(description: "stat \(path): errno \(errno)") }
        return (info.st_mode & S_IFMT) == S_IFCHR
    }
}
