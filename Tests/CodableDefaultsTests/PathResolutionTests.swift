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
/// `real/s.json` (as for `cat`), not `s.json`. The library and the command-line tool both.
@Suite struct PathResolutionTests {
    /// `root/real/sub/`, `root/link -> real/sub`, and two files: `root/real/s.json` (the one `link/../s.json`
    /// names) and `root/s.json` (the one a textual `..` would name).
    private static func makeLinkedTree(in root: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(
            at: root.appendingPathComponent("real/sub"), withIntermediateDirectories: true)
        try manager.createSymbolicLink(
            atPath: root.appendingPathComponent("link").path, withDestinationPath: "real/sub")
        try write("{\"where\": \"real\"}", to: root.appendingPathComponent("real/s.json"))
        try write("{\"where\": \"top\"}", to: root.appendingPathComponent("s.json"))
    }

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
        try defaults.flush()
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
        #expect(throws: DefaultsError.self) { try defaults.flush() }
        defaults.discardUnsavedChanges()
        #expect(try bytes(directory.file("s.json")) == before, "the file that was not read is not written over")
        #expect(try directory.contents() == ["s.json"], "no directory was made")
    }

    // MARK: Command-line tool

    @Test func theToolResolvesDotDotAfterALinkAsTheKernelDoes() async throws {
        let sandbox = try ToolSandbox()
        try Self.makeLinkedTree(in: sandbox.work)
        let read = try await sandbox.run(["read", "link/../s.json", "where"])
        #expect(read.status == 0)
        #expect(read.stdout == "\"real\"\n")
        let check = try await sandbox.run(["check", "link/../s.json"])
        #expect(check.stdout.hasSuffix("/real/s.json: valid (1 key)\n"), "\(check.stdout)")

        try await sandbox.expectSuccess(["write", "link/../new.json", "a", "1"])
        #expect(try sandbox.text("real/new.json") == "{\n  \"a\": 1\n}\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("new.json").path))

        try await sandbox.expectSuccess(["export", "s.json", "link/../out.json"])
        #expect(try sandbox.text("real/out.json") == "{\n  \"where\": \"top\"\n}\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("out.json").path))

        try await sandbox.expectSuccess(["import", "copy.json", "link/../s.json"])
        #expect(try sandbox.text("copy.json") == "{\n  \"where\": \"real\"\n}\n")
    }

    @Test func exportAndImportRefuseTheStoreFileHoweverItIsSpelled() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", "{\"a\": 1}")
        let before = try sandbox.bytes("s.json")
        let work = sandbox.work.path
        try FileManager.default.createSymbolicLink(atPath: work + "/here", withDestinationPath: ".")
        #expect(link(work + "/s.json", work + "/hard.json") == 0)

        for destination in ["here/s.json", "hard.json", "./s.json"] {
            let result = try await sandbox.run(["export", "s.json", destination])
            #expect(result.status == 2, "\(destination)")
            #expect(result.stderr.contains("DEST \(destination) is the store file "), "\(result.stderr)")
            #expect(result.stderr.contains("/s.json itself"), "\(result.stderr)")
            #expect(try sandbox.bytes("s.json") == before, "\(destination)")
        }
        // A store file that does not exist yet is the same file as a DEST that would create it.
        let missing = try await sandbox.run(["export", "none.json", "here/none.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("is the store file"))
        #expect(!FileManager.default.fileExists(atPath: work + "/none.json"))

        for source in ["here/s.json", "hard.json"] {
            let result = try await sandbox.run(["import", "s.json", source])
            #expect(result.status == 2, "\(source)")
            #expect(result.stderr.contains("SOURCE \(source) is the store file "), "\(result.stderr)")
        }
        #expect(try sandbox.bytes("s.json") == before)
    }
}
