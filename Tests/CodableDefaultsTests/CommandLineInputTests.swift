import Foundation
import Testing

@testable import CodableDefaults

/// What the tool does with arguments it cannot use as given, keys that would break its line-oriented
/// output, and keys too long to print whole.
@Suite struct CommandLineInputTests {
    // MARK: Long keys

    @Test func aFileWithAnOverlongKeyIsABadFileAndTheKeyIsShortened() async throws {
        let sandbox = try ToolSandbox()
        let key = String(repeating: "k", count: 1025)
        try sandbox.create("s.json", "{\"\(key)\": 1}")
        for command in ["check", "read", "keys"] {
            let result = try await sandbox.run([command, "s.json"])
            #expect(result.status == 4, "\(command): the README's table says 4 for a bad file")
            #expect(result.stderr.contains("key \"\(String(repeating: "k", count: 40))…\" (1025 bytes)"))
            #expect(result.stderr.count < 200, "\(command): \(result.stderr)")
        }
        for arguments in [["write", "t.json", key, "1"], ["delete", "t.json", key, "--force"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 2, "\(arguments[0])")
            #expect(result.stderr.contains("(1025 bytes) is over the limit of 1024 bytes"))
            #expect(result.stderr.count < 400, "\(arguments[0]): \(result.stderr)")
        }
        let missing = try await sandbox.run(["read", "t.json", String(repeating: "m", count: 500)])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("…\" (500 bytes): no value stored"), "\(missing.stderr)")
    }
}
