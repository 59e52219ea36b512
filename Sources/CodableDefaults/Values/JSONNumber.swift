#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JSON number, kept as the exact text it is written with.
///
/// A number read from a store file, from ``JSONValue/init(parsing:)`` or from the command-line tool keeps
/// its spelling: `123456789012345678901234567890`, `3.14159265358979323846264338327950288`, `1e400`,
/// `1e-400`, `-0` and `1.50` are written back byte for byte, never rounded through `Double`. The views
/// (``int64Value``, ``uint64Value``, ``intValue``, ``decimalValue``, ``doubleValue``) convert on demand.
///
/// Two numbers are equal when they stand for the same decimal value, however they are spelled:
/// `1`, `1.0`, `1e0` and `10e-1` are equal, and so are `0` and `-0`. The comparison is exact for numbers
/// of any size (it compares sign, significant digits and exponent), and `hash(into:)` agrees with it.
///
/// ```swift
/// let number = try JSONNumber(parsing: "1.50")
/// number.literal       // "1.50"
/// number.doubleValue   // 1.5
/// number == 1.5        // true
/// ```
///
/// `JSONNumber` is `Sendable`, `Hashable` and `Codable`; every value is finite.
public struct JSONNumber: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral
{
    /// The number's JSON text, exactly as written (RFC 8259 number syntax).
    public let literal: String

    /// Wraps a literal already known to follow the RFC 8259 number grammar.
    init(validatedLiteral literal: String) {
        self.literal = literal
    }

    /// Parses a JSON number literal strictly (RFC 8259: an optional `-`, no leading zeros, an optional
    /// fraction and exponent; no whitespace, `+`, `NaN` or `Infinity`).
    ///
    /// Any size is accepted and kept exactly: `1e400` is a valid literal even though `Double` cannot hold it.
    ///
    /// - Parameter literal: The number's JSON text.
    /// - Throws: ``DefaultsError/Code-swift.struct/invalidJSON`` with the column of the problem.
    public init(parsing literal: String) throws(DefaultsError) {
        let bytes = Array(literal.utf8)
        let compact: [UInt8]
        do {
            compact = try JSONParser.compactValue(bytes)
        } catch {
            throw DefaultsError(.invalidJSON, error.message, line: error.line, column: error.column)
        }
        guard compact == bytes, let first = bytes.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first)
        else {
            throw DefaultsError(.invalidJSON, "not a JSON number (expected digits, as in 12, -0.5 or 1e-9)")
        }
        self.literal = literal
    }

    /// The number `value`, written in decimal.
    ///
    /// - Parameter value: The integer.
    public init(_ value: Int) {
        literal = String(value)
    }

    /// The number `value`, written in decimal.
    ///
    /// - Parameter value: The integer.
    public init(_ value: Int64) {
        literal = String(value)
    }

    /// The number `value`, written in decimal.
    ///
    /// - Parameter value: The integer.
    public init(_ value: UInt64) {
        literal = String(value)
    }

    /// The number `value` in its shortest text that reads back as the same `Double` (`0.1`, `1e-05`,
    /// and `100` for `100.0`); `nil` for infinity and NaN, which JSON numbers cannot be.
    ///
    /// With a literal argument, `JSONNumber(0.8)` is the float literal itself (``init(floatLiteral:)``), not
    /// optional.
    ///
    /// - Parameter value: The floating-point number.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        literal = text
    }

    /// The number `value`, written in plain decimal; `nil` for NaN.
    ///
    /// - Parameter value: The decimal number.
    public init?(_ value: Decimal) {
        guard !value.isNaN else { return nil }
        do {
            self = try JSONNumber(parsing: value.description)
        } catch {
            // `Decimal` writes plain decimal digits, which always parse; nil covers any other spelling.
            return nil
        }
    }

    /// The number for an integer literal, as in `let count: JSONNumber = 3`.
    ///
    /// - Parameter value: The literal.
    public init(integerLiteral value: Int) {
        self.init(value)
    }

    /// The number for a floating-point literal, as in `let volume: JSONNumber = 0.8`: the shortest text
    /// that reads back as the same `Double`.
    ///
    /// A literal beyond `Double`'s range (which the compiler warns about) becomes the largest finite
    /// `Double` of its sign; use ``init(parsing:)`` for such a number, as in `JSONNumber(parsing: "1e400")`.
    ///
    /// - Parameter value: The literal.
    public init(floatLiteral value: Double) {
        let finite = value.isFinite ? value : (value < 0 ? -.greatestFiniteMagnitude : .greatestFiniteMagnitude)
        var text = finite.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        literal = text
    }

    /// The literal, as it is written in JSON.
    public var description: String { literal }

    // MARK: Views

    /// The number as an `Int64` when it is a whole number in range, else `nil`. Exact only: `1e2` and
    /// `100.0` are 100; `1.5` and `1e19` are `nil`.
    public var int64Value: Int64? {
        let number = Canonical(literal)
        guard let magnitude = number.wholeMagnitude else { return nil }
        if !number.isNegative { return Int64(exactly: magnitude) }
        if magnitude == UInt64(Int64.max) + 1 { return .min }
        return Int64(exactly: magnitude).map { -$0 }
    }

    /// The number as an `Int` when it is a whole number in range, else `nil` (exact only, as ``int64Value``).
    public var intValue: Int? {
        int64Value.flatMap { Int(exactly: $0) }
    }

    /// The number as a `UInt64` when it is a whole number from 0 (or `-0`) to `UInt64.max`, else `nil`.
    public var uint64Value: UInt64? {
        let number = Canonical(literal)
        guard let magnitude = number.wholeMagnitude else { return nil }
        return number.isNegative && magnitude != 0 ? nil : magnitude
    }

    /// The nearest `Double`: rounded when the literal has more digits than `Double` holds, `±infinity` above
    /// its range (`1e400`) and `±0` below it (`1e-400`).
    public var doubleValue: Double {
        if let value = Double(literal) { return value }
        // `Double(_:)` accepts every RFC 8259 number; this only guards against a platform that does not.
        let number = Canonical(literal)
        if number.digits.isEmpty { return number.isNegative ? -0.0 : 0 }
        let huge = !number.exponent.hasPrefix("-")
        return number.isNegative ? (huge ? -.infinity : -0.0) : (huge ? .infinity : 0)
    }

    /// The number as a `Decimal` when `Decimal` holds it exactly (up to 38 significant digits, exponent
    /// −128 to 127), else `nil`.
    public var decimalValue: Decimal? {
        let number = Canonical(literal)
        if number.digits.isEmpty { return 0 }
        guard var exponent = Int(number.exponent), number.digits.count <= 38 else { return nil }
        var digits = number.digits
        while exponent > 127 && digits.count < 38 {
            digits.append(0x30)
            exponent -= 1
        }
        guard (-128...127).contains(exponent) else { return nil }
        // At most 38 digits: a whole number `Decimal`'s 128-bit significand holds exactly.
        guard let significand = Decimal(string: String(decoding: digits, as: UTF8.self)) else { return nil }
        return Decimal(sign: number.isNegative ? .minus : .plus, exponent: exponent, significand: significand)
    }

    // MARK: Equality

    /// Whether two numbers stand for the same decimal value (`1 == 1.0 == 1e0`; `0 == -0`), exactly.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.literal == rhs.literal || Canonical(lhs.literal) == Canonical(rhs.literal)
    }

    /// Hashes the number's decimal value, so that equal numbers (however spelled) hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(Canonical(literal))
    }

    // MARK: Codable

    /// Decodes a number from any decoder: tried as `Int64`, `UInt64`, `Decimal`, then `Double`.
    ///
    /// The store itself never comes here for a ``JSONValue`` it reads (it keeps the text); this is for a
    /// `JSONNumber` nested in another type, where the decoder decides what is exact.
    ///
    /// - Throws: `DecodingError` when the value is not a finite number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        func probe<T: Decodable>(_ type: T.Type) -> T? {
            do { return try container.decode(type) } catch { return nil }
        }
        if let value = probe(Int64.self) {
            self.init(value)
        } else if let value = probe(UInt64.self) {
            self.init(value)
        } else if let value = probe(Decimal.self), let number = JSONNumber(value) {
            self = number
        } else if let number = JSONNumber(try container.decode(Double.self)) {
            self = number
        } else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a finite number"))
        }
    }

    /// Encodes the number through any encoder: as `Int64` or `UInt64` when it is such a whole number, else
    /// as `Decimal` when that is exact, else as the nearest `Double`.
    ///
    /// The store writes a ``JSONValue`` it stores as the literal itself; only a number nested in another
    /// type comes here, and there a number `Decimal` cannot hold (`1e400`, or more than 38 digits) is
    /// rounded to a `Double` (which the store's encoder writes as `"+Infinity"` beyond its range).
    ///
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value = int64Value {
            try container.encode(value)
        } else if let value = uint64Value {
            try container.encode(value)
        } else if let value = decimalValue {
            try container.encode(value)
        } else {
            try container.encode(doubleValue)
        }
    }
}

/// A number's decimal value in a canonical form: sign, significant digits (no leading or trailing zeros;
/// empty for zero) and the power of ten they are multiplied by, as decimal text of any size.
private struct Canonical: Hashable {
    /// Whether the number is below zero (false for zero, however spelled).
    var isNegative = false
    /// The significant digits as ASCII, the first and last nonzero; empty for zero.
    var digits: [UInt8] = []
    /// The exponent applied to `digits` read as a whole number, as canonical decimal text (`"0"`, `"-3"`).
    var exponent = "0"

    /// The canonical form of a literal that follows the RFC 8259 number grammar.
    init(_ literal: String) {
        var bytes = Array(literal.utf8)[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        var mantissa: [UInt8] = []
        var scale = 0
        var seenDot = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                seenDot = true
            } else {
                if seenDot { scale -= 1 }
                if !(mantissa.isEmpty && byte == UInt8(ascii: "0")) { mantissa.append(byte) }
            }
        }
        while mantissa.last == UInt8(ascii: "0") {
            mantissa.removeLast()
            scale += 1
        }
        guard !mantissa.isEmpty else { return }
        isNegative = negative
        digits = mantissa
        // The written exponent, if any: its sign and its digits without leading zeros.
        bytes = bytes.dropFirst()
        let exponentNegative = bytes.first == UInt8(ascii: "-")
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        let written = Array(bytes.drop { $0 == UInt8(ascii: "0") })
        if written.count <= 18 {
            let value = written.reduce(0) { $0 * 10 + Int($1 &- 0x30) }
            exponent = String((exponentNegative ? -value : value) + scale)
        } else {
            // At least 10^18, far more than any `scale`: the sum has the written exponent's sign.
            let magnitude = Self.add(scale.magnitude, to: written, subtracting: exponentNegative != (scale < 0))
            exponent = (exponentNegative ? "-" : "") + String(decoding: magnitude, as: UTF8.self)
        }
    }

    /// `digits` (ASCII decimal, larger than `amount`) plus or minus `amount`, without leading zeros.
    static func add(_ amount: UInt, to digits: [UInt8], subtracting: Bool) -> [UInt8] {
        var result = digits.map { $0 &- 0x30 }
        var carry = amount
        var position = result.count - 1
        while carry > 0 && position >= 0 {
            let step = UInt8(carry % 10)
            carry /= 10
            if subtracting {
                if result[position] >= step {
                    result[position] -= step
                } else {
                    result[position] = result[position] + 10 - step
                    carry += 1
                }
            } else {
                let sum = result[position] + step
                result[position] = sum % 10
                carry += UInt(sum / 10)
            }
            position -= 1
        }
        if carry > 0 { result.insert(contentsOf: String(carry).utf8.map { $0 &- 0x30 }, at: 0) }
        return Array(result.drop { $0 == 0 }.map { $0 &+ 0x30 })
    }

    /// The magnitude as a whole number when it is one that fits `UInt64`, else `nil`.
    var wholeMagnitude: UInt64? {
        guard !digits.isEmpty else { return 0 }
        // `power <= 20 - digits.count`, not `digits.count + power <= 20`: an exponent near `Int.max` would overflow.
        guard let power = Int(exponent), power >= 0, power <= 20 - digits.count else { return nil }
        var value: UInt64 = 0
        for digit in digits + repeatElement(UInt8(ascii: "0"), count: power) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit &- 0x30))
            guard !overflow && !carry else { return nil }
            value = sum
        }
        return value
    }
}

extension JSONNumber {
    /// Whether the number is a whole number (`1`, `1.0`, `1e400`; not `1.5`), exactly: what JSON Schema calls an
    /// integer.
    var isWhole: Bool {
        let number = Canonical(literal)
        return number.digits.isEmpty || !number.exponent.hasPrefix("-")
    }

    /// The order of two numbers by value, exactly, whatever the size of their exponents: -1 when `lhs` is less, 0
    /// when equal, 1 when greater.
    static func order(_ lhs: JSONNumber, _ rhs: JSONNumber) -> Int {
        if lhs == rhs { return 0 }
        let left = Canonical(lhs.literal)
        let right = Canonical(rhs.literal)
        func sign(_ number: Canonical) -> Int { number.digits.isEmpty ? 0 : (number.isNegative ? -1 : 1) }
        if sign(left) != sign(right) { return sign(left) < sign(right) ? -1 : 1 }
        // Both nonzero, of one sign: first the place of the leading digit, then the digits from the left.
        var magnitude = Canonical.order(left.place, right.place)
        if magnitude == 0 {
            for index in 0..<max(left.digits.count, right.digits.count) {
                let a = index < left.digits.count ? left.digits[index] : 0x30
                let b = index < right.digits.count ? right.digits[index] : 0x30
                if a != b {
                    magnitude = a < b ? -1 : 1
                    break
                }
            }
        }
        return sign(left) * magnitude
    }
}

extension Canonical {
    /// The place of a nonzero number's leading digit (the digits' count plus the exponent), as a sign and ASCII
    /// decimal digits without leading zeros (`"0"` for zero): exact for an exponent of any size.
    fileprivate var place: (negative: Bool, digits: [UInt8]) {
        if let power = Int(exponent) {
            let (sum, overflow) = power.addingReportingOverflow(digits.count)
            if !overflow { return (sum < 0, Array(String(sum.magnitude).utf8)) }
        }
        // An exponent of 19 digits or more: far larger than the count of digits, so the sum keeps its sign.
        let negative = exponent.hasPrefix("-")
        let written = Array(exponent.utf8.drop { $0 == UInt8(ascii: "-") })
        return (negative, Self.add(UInt(digits.count), to: written, subtracting: negative))
    }

    /// The order of two signed whole numbers written as `place` writes them: -1, 0 or 1.
    fileprivate static func order(
        _ lhs: (negative: Bool, digits: [UInt8]), _ rhs: (negative: Bool, digits: [UInt8])
    ) -> Int {
        if lhs.negative != rhs.negative { return lhs.negative ? -1 : 1 }
        var magnitude = 0
        if lhs.digits.count != rhs.digits.count {
            magnitude = lhs.digits.count < rhs.digits.count ? -1 : 1
        } else if lhs.digits != rhs.digits {
            magnitude = lhs.digits.lexicographicallyPrecedes(rhs.digits) ? -1 : 1
        }
        return lhs.negative ? -magnitude : magnitude
    }
}
