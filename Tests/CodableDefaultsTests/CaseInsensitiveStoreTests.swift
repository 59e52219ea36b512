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

/// One store per file where a directory ignores case: the registry's key, with the directories' answers
/// given by the test, and the system's answers for real directories.
@Suite struct CaseInsensitiveStoreTests {
    /// Answers as a file system whose case-insensitive directories are `insensitive` and whose missing
    /// directories are `missing` (paths compared ignoring case, as such a file system would resolve them).
    func system(insensitive: [String], missing: [String] = []) -> (String) -> NameComparison {
        { directory in
            let folded = directory.lowercased()
            if missing.contains(where: { $0.lowercased() == folded }) { return .missing }
            return insensitive.contains(where: { $0.lowercased() == folded }) ? .caseInsensitive : .caseSensitive
        }
    }

    func key(_ path: String, _ comparison: (String) -> NameComparison) -> String {
        DurableFile.registryKey(forCanonicalPath: path, comparison: comparison)
    }

    @Test func onACaseSensitiveFileSystemTheKeyIsThePath() {
        let sensitive = system(insensitive: [])
        #expect(key("/home/Me/Settings.json", sensitive) == "/home/Me/Settings.json")
        #expect(key("/home/Me/Settings.json", sensitive) != key("/home/Me/settings.json", sensitive))
        #expect(key("/", sensitive) == "/")
    }

    @Test func onACaseInsensitiveVolumeEverySpellingIsOneKey() {
        // macOS's default APFS volume: every directory ignores case.
        let volume = system(insensitive: ["/", "/Users", "/Users/me", "/Users/me/Library"])
        let spellings = [
            "/Users/me/Library/Settings.json", "/users/ME/library/settings.json", "/USERS/me/Library/SETTINGS.JSON",
        ]
        let keys = Set(spellings.map { key($0, volume) })
        #expect(keys == ["/users/me/library/settings.json"])
    }

    @Test func onlyTheNamesInACaseInsensitiveDirectoryAreFolded() {
        // Linux: `/srv/Shared` has the casefold flag (and its subdirectories inherit it); `/srv` does not.
        let linux = system(insensitive: ["/srv/Shared", "/srv/Shared/Apps"])
        #expect(key("/srv/Shared/Apps/Settings.json", linux) == "/srv/Shared/apps/settings.json")
        #expect(key("/srv/shared/Apps/Settings.json", linux) != key("/srv/Shared/Apps/Settings.json", linux))
        // A case-sensitive volume mounted inside a case-insensitive one.
        let mounted = system(insensitive: ["/", "/Volumes"])
        #expect(key("/Volumes/Data/Settings.json", mounted) == "/volumes/data/Settings.json")
    }

    @Test func aFileNotYetCreatedHasTheKeyItWillHave() {
        // The key never depends on the file, only on its directories: before and after the first save, and
        // whichever spelling made the file, the key is the same.
        let volume = system(insensitive: ["/", "/data"])
        #expect(key("/data/Settings.json", volume) == key("/data/settings.json", volume))
    }

    @Test func aMissingDirectoryComparesAsItsParent() {
        let comparison = system(insensitive: ["/", "/data"], missing: ["/data/New", "/data/New/Deeper"])
        #expect(key("/data/New/Deeper/Settings.json", comparison) == "/data/new/deeper/settings.json")
        let sensitive = system(insensitive: [], missing: ["/data/New"])
        #expect(key("/data/New/Settings.json", sensitive) == "/data/New/Settings.json")
    }

    @Test func foldingIsNeverCoarserThanLowercasing() {
        // Joining two names the file system keeps apart would write two files through one store; the key
        // folds by lowercasing only (`ß` stays apart from `ss`, as a stricter file system might keep them).
        #expect(DurableFile.foldedName("Straße.JSON") == "straße.json")
        #expect(DurableFile.foldedName("Straße.json") != DurableFile.foldedName("STRASSE.json"))
    }

    @Test func theSystemSaysHowARealDirectoryComparesNames() throws {
        let dir = try TemporaryDirectory()
        // The temporary directory here is on a case-sensitive file system (Linux without casefold).
        #expect(Platform.nameComparison(ofDirectory: dir.path) == .caseSensitive)
        #expect(Platform.nameComparison(ofDirectory: dir.path + "/missing") == .missing)
        try write("{}", to: dir.file("plain"))
        #expect(Platform.nameComparison(ofDirectory: dir.path + "/plain") == .missing)
    }

    @Test func twoSpellingsInACaseSensitiveDirectoryAreTwoStores() throws {
        let dir = try TemporaryDirectory()
        let upper = try Defaults(url: dir.file("Settings.json"))
        let lower = try Defaults(url: dir.file("settings.json"))
        #expect(upper.store !== lower.store)
    }

    @Test(
        .enabled(
            if: CaseFoldMount.isPossible,
            Comment(
                rawValue: "needs root, mkfs.ext4, chattr, mount with loop devices and a kernel with ext4 casefold "
                    + "(/sys/fs/ext4/features/casefold, CONFIG_UNICODE)")))
    func inALinuxCasefoldDirectoryTheSpellingsAreOneStore() throws {
        let mount = try CaseFoldMount()
        defer { mount.remove() }
        let directory = mount.directory
        #expect(Platform.nameComparison(ofDirectory: directory.path) == .caseInsensitive)
        let upper = try Defaults(url: directory.appendingPathComponent("Settings.json"), saveMode: .manual)
        let lower = try Defaults(url: directory.appendingPathComponent("settings.json"), saveMode: .manual)
        #expect(upper.store === lower.store)
        upper[.count] = 5
        try upper.save()
        let shouted = try Defaults(url: directory.appendingPathComponent("SETTINGS.JSON"), saveMode: .manual)
        #expect(shouted.store === upper.store)
        #expect(shouted[.count] == 5)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).contains("Settings.json"))
    }
}

/// A small ext4 file system made with `-O casefold` in a loop file, mounted in a temporary directory, with
/// one `chattr +F` directory: a real case-insensitive directory on Linux.
final class CaseFoldMount {
    /// Whether this machine can make one: root, the kernel's ext4 casefold feature, and the tools.
    static let isPossible: Bool = {
        #if os(Linux)
            let tools = ["/sbin/mkfs.ext4", "/usr/sbin/mkfs.ext4", "/usr/bin/chattr", "/bin/chattr"]
            return getuid() == 0 && FileManager.default.fileExists(atPath: "/sys/fs/ext4/features/casefold")
                && tools.contains { FileManager.default.isExecutableFile(atPath: $0) }
        #else
            return false
        #endif
    }()

    let root: TemporaryDirectory
    let mountPoint: URL
    /// The case-insensitive directory.
    let directory: URL

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        root = try TemporaryDirectory()
        let image = root.file("casefold.img")
        mountPoint = root.file("mnt")
        directory = mountPoint.appendingPathComponent("ci")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: image.path, contents: nil) else {
            throw Failure(description: "cannot create \(image.path)")
        }
        let handle = try FileHandle(forWritingTo: image)
        try handle.truncate(atOffset: 32 * 1024 * 1024)
        try handle.close()
        try Self.run("mkfs.ext4", ["-q", "-F", "-O", "casefold", image.path])
        try Self.run("mount", ["-o", "loop", image.path, mountPoint.path])
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        try Self.run("chattr", ["+F", directory.path])
    }

    /// Unmounts the file system (its temporary directory is removed when released).
    func remove() {
        do { try Self.run("umount", [mountPoint.path]) } catch {
            Issue.record("cannot unmount \(mountPoint.path): \(error)")
        }
    }

    /// Runs a tool found on the usual paths and waits for it; throws unless it exits with 0.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let command = ([tool] + arguments).joined(separator: " ")
            throw Failure(description: "\(command) exited with \(process.terminationStatus)")
        }
    }
}
