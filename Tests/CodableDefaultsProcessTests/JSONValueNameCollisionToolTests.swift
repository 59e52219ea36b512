import CodableDefaultsTestSupport
import Foundation
import Testing

/// The command-line tool refuses a ``JSONValue`` object with two member names that differ only in Unicode
/// normalization, as the library does (the in-process tests are the unit tests' `JSONValueNameCollisionTests`).
@Suite struct JSONValueNameCollisionToolTests {
    /// `é` as one code point, and as `e` and a combining accent: different bytes, equal Swift strings.
    static let composed = CollidingNames.composed
    static let decomposed = CollidingNames.decomposed
    /// A store file with such a pair inside the value of `v`.
    static let file = CollidingNames.file

    @Test func theToolRefusesWhatItCannotRepresent() async throws {
        let sandbox = try ToolSandbox()
        try sandbox.create("s.json", Self.file)
        for arguments in [["read", "s.json"], ["read", "s.json", "v"], ["export", "s.json"], ["check", "s.json"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 4, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains(#"key "v""#), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(#""e\u0301""#), "\(arguments): \(result.stderr)")
        }
        let imported = try await sandbox.run(["import", "t.json", "s.json"])
        #expect(imported.status == 4, "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("t.json").path))

        let written = try await sandbox.run([
            "write", "s.json", "x", "{\"\(Self.composed)\":1,\"\(Self.decomposed)\":2}",
        ])
        #expect(written.status == 2, "\(written.stderr)")
        #expect(written.stderr.contains("line 1, column 8"), "\(written.stderr)")
        #expect(try sandbox.text("s.json") == Self.file)
    }
}
