import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Regression tests for defects an independent review found: each failed before its fix. The one here needs
/// root (`chattr +i`); the others are in the unit tests.
@Suite struct RegressionTests {
    /// A removal whose save failed, then discarded: the restored value must reach the next save (a rebuild
    /// of the order had dropped it).
    @Test(.enabled(if: FileSystemTools.canMakeImmutable, FileSystemTools.chattrMessage))
    func discardAfterFailedRemoveKeepsTheKey() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 1
        defaults[.volume] = 0.1
        try defaults.flush()

        try FileSystemTools.setImmutable(dir.path, true)
        defer { FileSystemTools.clearImmutable(dir.path) }
        defaults.reset(.count)
        #expect(throws: DefaultsError.self) { try defaults.flush() }
        defaults.discardUnsavedChanges()
        try FileSystemTools.setImmutable(dir.path, false)
        #expect(defaults[.count] == 1, "memory says the discard restored count")

        defaults[.volume] = 0.2
        try defaults.flush()
        let fileText = try text(url)
        #expect(fileText == "{\n  \"count\": 1,\n  \"volume\": 0.2\n}\n")
        #expect(try openFresh(url)[.count] == 1, "count survives a restart")
    }
}
