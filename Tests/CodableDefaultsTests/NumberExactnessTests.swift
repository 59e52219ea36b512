import Foundation
import Testing

@testable import CodableDefaults

/// Numbers keep their spelling through every path (no trip through `Double`), and deep values print and
/// store without unbounded recursion.
@Suite struct NumberExactnessTests {
    /// Literals that `Double` would round, overflow, underflow or respell.
    static let literals = [
        "123456789012345678901234567890", "3.14159265358979323846264338327950288", "1e-400", "1e400", "-0", "1.50",
    ]

    /// A store file with one member per literal (`n0`, `n1`, ...) and `other`, in the file's layout.
    static func fileText(other: String = "1") -> String {
        let members = literals.enumerated().map { "  \"n\($0.offset)\": \($0.element)" } + ["  \"other\": \(other)"]
        return "{\n" + members.joined(separator: ",\n") + "\n}\n"
    }

    // MARK: JSONNumber

    @Test func viewsAreExact() throws {
        let cases: [(String, Int64?, UInt64?)] = [
            ("100", 100, 100), ("1e2", 100, 100), ("100.0", 100, 100), ("1.5", nil, nil), ("-0", 0, 0),
            ("9223372036854775807", .max, 9_223_372_036_854_775_807), ("9223372036854775808", nil, 1 << 63),
            ("-9223372036854775808", .min, nil), ("18446744073709551615", nil, .max),
            ("18446744073709551616", nil, nil),
            ("1e19", nil, 10_000_000_000_000_000_000), ("1e20", nil, nil), ("-1", -1, nil), ("1e-400", nil, nil),
            ("0.0e99999999999999999999", 0, 0),
        ]
        for (literal, int64, uint64) in cases {
            let number = try JSONNumber(parsing: literal)
            #expect(number.literal == literal)
            #expect(number.int64Value == int64, "\(literal)")
            #expect(number.uint64Value == uint64, "\(literal)")
        }
        #expect(try JSONNumber(parsing: "1e400").doubleValue == .infinity)
        #expect(try JSONNumber(parsing: "-1e400").doubleValue == -.infinity)
        #expect(try JSONNumber(parsing: "1e-400").doubleValue == 0)
        #expect(try JSONNumber(parsing: "0.1").doubleValue == 0.1)
        let pi = "3.14159265358979323846264338327950288"
        #expect(try JSONNumber(parsing: pi).decimalValue == Decimal(string: pi))
        #expect(try JSONNumber(parsing: "1e400").decimalValue == nil)
        #expect(try JSONNumber(parsing: "1234567890123456789012345678901234567891").decimalValue == nil)
        #expect(try JSONNumber(parsing: "1e130").decimalValue == Decimal(sign: .plus, exponent: 127, significand: 1000))
        #expect(try JSONNumber(parsing: "-2.50").decimalValue == Decimal(string: "-2.5"))
    }

    @Test func initializersWriteShortLiterals() throws {
        let doubles: [(Double, String)] = [
            (0.1, "0.1"), (100, "100"), (1e-5, "1e-05"), (-0.0, "-0"), (1e300, "1e+300"),
        ]
        for (value, literal) in doubles { #expect(JSONNumber(value)?.literal == literal) }
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(Double.nan) == nil)
        #expect(JSONNumber(Int64.min).literal == "-9223372036854775808")
        #expect(JSONNumber(UInt64.max).literal == "18446744073709551615")
        #expect(
            JSONNumber(Decimal(string: "3.14159265358979323846264338327950288")!)?.literal
                == "3.14159265358979323846264338327950288")
        #expect(JSONNumber(Decimal.nan) == nil)
        let literal: JSONNumber = 2.5
        #expect(literal.literal == "2.5")
        for bad in ["", "01", "+1", " 1", "1 ", "1.", ".5", "1e", "NaN", "Infinity", "\"1\"", "true", "0x10"] {
            #expect(throws: DefaultsError.self, "\(bad)") { try JSONNumber(parsing: bad) }
        }
    }

    @Test func equalityIsNumericAndExactForAnySize() throws {
        func number(_ text: String) throws -> JSONNumber { try JSONNumber(parsing: text) }
        let ones = try ["1", "1.0", "1e0", "10e-1", "0.1e1", "1.000E+0", "100e-2"].map(number)
        for one in ones {
            #expect(one == ones[0], "\(one)")
            #expect(one.hashValue == ones[0].hashValue, "\(one)")
        }
        #expect(try number("0") == number("-0.0e7"))
        #expect(try number("0").hashValue == number("-0").hashValue)
        #expect(try number("123456789012345678901234567890") != number("123456789012345678901234567891"))
        #expect(try number("123456789012345678901234567890") == number("12345678901234567890123456789e1"))
        #expect(try number("1e99999999999999999999") == number("10e99999999999999999998"))
        #expect(try number("1e-99999999999999999999") == number("0.1e-99999999999999999998"))
        #expect(try number("1e99999999999999999999") != number("1e99999999999999999998"))
        #expect(try number("-1.5") != number("1.5"))
        #expect(try JSONValue(parsing: "[1, {\"a\": 2.50}]") == JSONValue(parsing: "[1.0, {\"a\": 25e-1}]"))
    }

    // MARK: The library's paths

    @Test func literalsSurviveParsingDescriptionAndTheUntypedAPI() throws {
        let dir = try TemporaryDirectory()
        try write(Self.fileText(), to: dir.file())
        let defaults = try openFresh(dir.file())
        for (index, literal) in Self.literals.enumerated() {
            #expect(try JSONValue(parsing: " [\(literal)] ").description == "[\(literal)]")
            #expect(defaults.object(forKey: "n\(index)")?.description == literal)
            // Written back through the untyped and the typed API.
            defaults.set(try JSONValue(parsing: "{\"x\":\(literal)}"), forKey: "set\(index)")
            try defaults.set(
                try JSONValue(parsing: literal), for: Defaults.Key<JSONValue>("typed\(index)", default: .null))
        }
        try defaults.flush()
        let lines = Set(try text(dir.file()).split(separator: "\n").map { $0.hasSuffix(",") ? $0.dropLast() : $0 })
        for (index, literal) in Self.literals.enumerated() {
            #expect(lines.contains("  \"set\(index)\": {\"x\":\(literal)}"), "\(literal)")
            #expect(lines.contains("  \"typed\(index)\": \(literal)"), "\(literal)")
        }
    }

    @Test func aMigrationKeepsTheLiteralsOfMembersItDoesNotTouch() throws {
        let dir = try TemporaryDirectory()
        let nested = "{\"z\":[1.50,1e400],\"a\":\"\\u00e9\"}"
        try write(
            Self.fileText().replacingOccurrences(of: "\"other\": 1", with: "\"other\": 1,\n  \"nested\": \(nested)"),
            to: dir.file())
        let bump = Defaults.Migration(to: 1) { values in values["other"] = .number(2) }
        let defaults = try openFresh(dir.file(), options: .init(migrations: [bump]))
        #expect(defaults.object(forKey: "other") == .number(2))
        let text = try text(dir.file())
        for (index, literal) in Self.literals.enumerated() {
            #expect(text.contains("\n  \"n\(index)\": \(literal),\n"), "\(literal): \(text)")
        }
        #expect(text.contains("\n  \"nested\": \(nested),\n"), "an untouched member keeps its bytes")
        #expect(text.contains("\n  \"other\": 2\n"))
    }

    @Test func aMigrationWritesTheLiteralsOfValuesItMoves() throws {
        let dir = try TemporaryDirectory()
        try write("{\"old\": [123456789012345678901234567890, 1e-400]}", to: dir.file())
        let rename = Defaults.Migration(to: 1) { values in values["new"] = values.removeValue(forKey: "old") }
        _ = try openFresh(dir.file(), options: .init(migrations: [rename]))
        #expect(try text(dir.file()).contains("\"new\": [123456789012345678901234567890,1e-400]\n"))
    }

    // MARK: Deep values

    @Test func a512DeepValuePrintsAndIsRefusedWhenStored() throws {
        let dir = try TemporaryDirectory()
        let text = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        let deep = try JSONValue(parsing: text)
        #expect(deep.description == text)
        #expect("\(deep)" == text)

        let defaults = try openFresh(dir.file())
        defaults.set(deep, forKey: "untyped")
        let key = Defaults.Key<JSONValue>("typed", default: .null)
        let error = #expect(throws: DefaultsError.self) { try defaults.set(deep, for: key) }
        #expect(error?.code == .encodingFailed)
        #expect(error?.message.contains("512 levels deep") == true)
        #expect((error?.description.count ?? .max) < 500, "the error does not embed the value")

        let fits = try JSONValue(parsing: String(repeating: "[", count: 511) + String(repeating: "]", count: 511))
        try defaults.set(fits, for: Defaults.Key<JSONValue>("fits", default: .null))
        // The untyped set encodes at the save, which refuses it (and keeps the file readable).
        let saveError = #expect(throws: DefaultsError.self) { try defaults.flush() }
        #expect(saveError?.code == .encodingFailed)
        #expect(saveError?.key == "untyped")
        #expect((saveError?.description.count ?? .max) < 500, "the error does not embed the value")
        try defaults.flush()

        let reopened = try openFresh(dir.file())
        #expect(reopened.object(forKey: "fits") == fits)
        #expect(reopened.object(forKey: "typed") == nil)
    }
}

/// The command-line tool keeps number literals: `check`, `read`, `export`, `import` and `write`.
@Suite struct NumberExactnessToolTests {
    /// Runs the tool in `dir` to its end; returns its status and outputs.
    func run(_ arguments: [String], in dir: TemporaryDirectory) throws -> (status: Int32, out: String, err: String) {
        let binary: URL = try #require(builtTool, "codable-defaults is built next to the test bundle")
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
        let original = NumberExactnessTests.fileText()
        try write(original, to: dir.file("s.json"))

        let check = try run(["check", "s.json"], in: dir)
        #expect(check.status == 0, "\(check.err)")
        #expect(check.out == "\(dir.file("s.json").path): valid (7 keys)\n")
        for (index, literal) in NumberExactnessTests.literals.enumerated() {
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
        for (index, literal) in NumberExactnessTests.literals.enumerated() {
            let result = try run(["write", "w.json", "n\(index)", literal], in: dir)
            #expect(result.status == 0, "\(result.err)")
            let nested = try run(["write", "w.json", "list\(index)", "[\(literal), {\"b\": \(literal)}]"], in: dir)
            #expect(nested.status == 0, "\(nested.err)")
        }
        let lines = Set(
            try text(dir.file("w.json")).split(separator: "\n").map { $0.hasSuffix(",") ? $0.dropLast() : $0 })
        for (index, literal) in NumberExactnessTests.literals.enumerated() {
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
        try defaults.flush()

        let export = try run(["export", "s.json", "exported.json"], in: dir)
        #expect(export.status == 0, "\(export.err)")
        let imported = try run(["import", "fresh.json", "exported.json"], in: dir)
        #expect(imported.status == 0, "\(imported.err)")
        #expect(try openFresh(dir.file("fresh.json"))[key] == pi)
        #expect(try text(dir.file("fresh.json")) == "{\n  \"pi\": 3.14159265358979323846264338327950288\n}\n")
    }
}
