import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Numbers keep their spelling through every path (no trip through `Double`), and deep values print and
/// store without unbounded recursion.
@Suite struct NumberExactnessTests {
    /// Literals that `Double` would round, overflow, underflow or respell.
    static let literals = NumberLiterals.literals

    /// A store file with one member per literal (`n0`, `n1`, ...) and `other`, in the file's layout.
    static func fileText(other: String = "1") -> String { NumberLiterals.fileText(other: other) }

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
        try defaults.save()
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
        let saveError = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(saveError?.code == .encodingFailed)
        #expect(saveError?.key == "untyped")
        #expect((saveError?.description.count ?? .max) < 500, "the error does not embed the value")
        try defaults.save()

        let reopened = try openFresh(dir.file())
        #expect(reopened.object(forKey: "fits") == fits)
        #expect(reopened.object(forKey: "typed") == nil)
    }
}
