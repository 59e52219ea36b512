import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Paths are resolved as the kernel resolves them: `link/../s.json`, with `link -> real/sub`, is
/// `real/s.json` (as for `cat`), not `s.json`. The library here; the command-line tool in `PathResolutionToolTests`.
@Suite struct PathResolutionTests {
    /// `root/real/sub/`, `root/link -> real/sub`, and two files: `root/real/s.json` (the one `link/../s.json`
    /// names) and `root/s.json` (the one a textual `..` would name).
    private static func makeLinkedTree(in root: URL) throws { try LinkedTree.make(in: root) }

    /// The real path of `url`'s directory (the temporary directory may be reached through a link).
    private static func realPath(_ url: URL) throws -> String {
        let resolved = try #require(realpath(url.path, nil))
        defer { free(resolved) }
        return String(cString: resolved)
    }

    // MARK: Library

    @Test func aDotDotAfterALinkedDirectoryNamesTheFileTheKernelMeans() throws {
        let directory = try TemporaryDirectory()
        try Self.makeLinkedTree(in: directory.url)
        let real = try Self.realPath(directory.url) + "/real/s.json"
        let spellings = [
            URL(fileURLWithPath: directory.path + "/link/../s.json"),
            URL(fileURLWithPath: "link/../s.json", relativeTo: directory.url),
            URL(fileURLWithPath: directory.path + "/link/..", isDirectory: true).appendingPathComponent("s.json"),
        ]
        for url in spellings {
            let defaults = try Defaults(url: url, saveMode: .manual)
            #expect(defaults.string(forKey: "where") == "real", "\(url)")
            #expect(defaults.url?.path == real, "\(url)")
        }
    }

    @Test func aMissingFileReachedThroughALinkAndDotDotIsCreatedWhereTheKernelMeans() throws {
        let directory = try TemporaryDirectory()
        try Self.makeLinkedTree(in: directory.url)
        let defaults = try Defaults(url: URL(fileURLWithPath: directory.path + "/link/../new.json"), saveMode: .manual)
        defaults.set(1, forKey: "a")
        try defaults.save()
        #expect(try text(directory.url.appendingPathComponent("real/new.json")) == "{\n  \"a\": 1\n}\n")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/new.json"))
    }

    @Test func aDotDotAfterAMissingDirectoryNamesNoFileAndIsNeverCreated() throws {
        let directory = try TemporaryDirectory()
        try write("{\"a\": 1}", to: directory.file("s.json"))
        let before = try bytes(directory.file("s.json"))
        // The kernel: `missing/../s.json` does not exist (open gives ENOENT), whatever `s.json` holds.
        let defaults = try Defaults(
            url: URL(fileURLWithPath: directory.path + "/missing/../s.json"), saveMode: .manual)
        #expect(defaults.keys.isEmpty, "read as the kernel reads it: missing")
        defaults.set(2, forKey: "b")
        #expect(throws: DefaultsError.self) { try defaults.save() }
        defaults.discardUnsavedChanges()
        #expect(try bytes(directory.file("s.json")) == before, "the file that was not read is not written over")
        #expect(try directory.contents() == ["s.json"], "no directory was made")
    }
}
