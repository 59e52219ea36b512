import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The command-line tool keeps number literals: `check`, `read`, `export`, `import` and `write`.
@Suite struct NumberExactnessToolTests {
    /// Runs the tool in `dir` to its end; returns its status and outputs.
    func run(_ arguments: [String], in dir: TemporaryDirectory) throws -> (status: Int32, out: String, err: String) {
        let binary: URL = URL(fileURLWithPath: try Fixture.locate("codable-defaults"))
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = dir.url
        let name = UUID().uuidString
        let out = dir.file(".\(name).out")
        let err = dir.file(".\(name).err")
        try Data().write(to: out)
        try Data().write(to: err)
        let outHandle = try FileHandle(forWritingTo: out)
        let errHandle = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle
        try process.run()
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        return (process.terminationStatus, try text(out), try text(err))
    }

    @Test func checkReadExportAndImportKeepLiterals() throws {
        let dir = try TemporaryDirectory()
        let original = NumberLiterals.fileText()
        try write(original, to: dir.file("s.json"))

        let check = try run(["check", "s.json"], in: dir)
        #expect(check.status == 0, "\(check.err)")
        #expect(check.out == "\(dir.file("s.json").path): valid (7 keys)\n")
        for (index, literal) in NumberLiterals.literals.enumerated() {
            let read = try run(["read", "s.json", "n\(index)"], in: dir)
            #expect(read.status == 0, "\(read.err)")
            #expect(read.out == literal + "\n")
        }
        let whole = try run(["read", "s.json"], in: dir)
        #expect(whole.status == 0, "\(whole.err)")
        #expect(whole.out == original, "the pretty form of a flat object is the file's layout")

        let export = try run(["export", "s.json"], in: dir)
        #expect(export.status == 0, "\(export.err)")
        #expect(export.out == original)
        try write(export.out, to: dir.file("exported.json"))
        let imported = try run(["import", "fresh.json", "exported.json"], in: dir)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(try text(dir.file("fresh.json")) == original)
        #expect(try text(dir.file("s.json")) == original, "nothing was rewritten")
    }

    @Test func writeKeepsTheLiteral() throws {
        let dir = try TemporaryDirectory()
        for (index, literal) in NumberLiterals.literals.enumerated() {
            let result = try run(["write", "w.json", "n\(index)", literal], in: dir)
            #expect(result.status == 0, "\(result.err)")
            let nested = try run(["write", "w.json", "list\(index)", "[\(literal), {\"b\": \(literal)}]"], in: dir)
            #expect(nested.status == 0, "\(nested.err)")
        }
        let lines = Set(
            try text(dir.file("w.json")).split(separator: "\n").map { $0.hasSuffix(",") ? $0.dropLast() : $0 })
        for (index, literal) in NumberLiterals.literals.enumerated() {
            #expect(lines.contains("  \"n\(index)\": \(literal)"), "\(literal)")
            #expect(lines.contains("  \"list\(index)\": [\(literal),{\"b\":\(literal)}]"), "\(literal)")
        }
    }

    @Test func aDecimalKeepsItsDigitsThroughExportAndImport() throws {
        let dir = try TemporaryDirectory()
        let pi = try #require(Decimal(string: "3.14159265358979323846264338327950288"))
        let key = Defaults.Key<Decimal>("pi", default: 0)
        let defaults = try openFresh(dir.file("s.json"))
        try defaults.set(pi, for: key)
        try defaults.save()

        let export = try run(["export", "s.json", "exported.json"], in: dir)
        #expect(export.status == 0, "\(export.err)")
        let imported = try run(["import", "fresh.json", "exported.json"], in: dir)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(try openFresh(dir.file("fresh.json"))[key] == pi)
        #expect(try text(dir.file("fresh.json")) == "{\n  \"pi\": 3.14159265358979323846264338327950288\n}\n")
    }
}
