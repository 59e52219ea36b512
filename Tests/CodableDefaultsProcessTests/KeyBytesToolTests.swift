import CodableDefaultsTestSupport
import Foundation
import Testing

/// Member names are bytes, through the command-line tool too: the test that runs the built tool (the
/// in-process ones are the unit tests' `KeyBytesTests`).
@Suite struct KeyBytesToolTests {
    @Test func theCommandLineToolExportsBothSpellings() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(KeySpellings.bothSpellings).write(to: url)
        let expected: [UInt8] =
            Array("{\n  \"".utf8) + [0x65, 0xCC, 0x81] + Array("\": 2,\n  \"".utf8) + [0xC3, 0xA9]
            + Array("\": 1\n}\n".utf8)
        let export = try runTool(["export", url.path])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout == expected)
        let check = try runTool(["check", url.path])
        #expect(String(decoding: check.stdout, as: UTF8.self).contains("(2 keys)"))
        let copy = directory.file("copy.json")
        let imported = try runTool(["import", copy.path, url.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try bytes(copy) == expected)
    }
}

/// Runs the built `codable-defaults` to its end; its output is small, so reading the pipes to their end
/// before waiting cannot block.
private func runTool(_ arguments: [String]) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
    let binary = URL(fileURLWithPath: try Fixture.locate("codable-defaults"))
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let stdout = output.fileHandleForReading.readDataToEndOfFile()
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, Array(stdout), String(decoding: stderr, as: UTF8.self))
}
