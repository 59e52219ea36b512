import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Paths are resolved as the kernel resolves them, by the command-line tool too (the library's tests are the
/// unit tests' `PathResolutionTests`).
@Suite struct PathResolutionToolTests {
    /// `root/real/sub/`, `root/link -> real/sub`, and two files: `root/real/s.json` (the one `link/../s.json`
    /// names) and `root/s.json` (the one a textual `..` would name).
    private static func makeLinkedTree(in root: URL) throws { try LinkedTree.make(in: root) }

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
