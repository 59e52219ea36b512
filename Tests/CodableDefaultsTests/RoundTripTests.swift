import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Every kind of value written to a file and read back by a store that did not write it.
@Suite struct RoundTripTests {
    enum Shape: Codable, Equatable, Sendable {
        case circle(radius: Double)
        case rectangle(width: Int, height: Int)
        case empty
    }

    struct Nested: Codable, Equatable, Sendable {
        var tags: [String]
        var scores: [String: [Int]]
        var child: Profile?
        var shape: Shape
    }

    /// Writes `value` under a key, reopens the file fresh, and returns what reads back.
    func roundTrip<Value: Codable & Sendable>(_ value: Value, default fallback: Value) throws -> Value {
        let dir = try TemporaryDirectory()
        let key = Defaults.Key<Value>("value", default: fallback)
        do {
            let defaults = try openFresh(dir.file())
            defaults[key] = value
            try defaults.save()
        }
        return try openFresh(dir.file()).value(for: key)
    }

    @Test func scalars() throws {
        #expect(try roundTrip(true, default: false) == true)
        #expect(try roundTrip(Int.min, default: 0) == Int.min)
        #expect(try roundTrip(Int64.max, default: 0) == Int64.max)
        #expect(try roundTrip(UInt64.max, default: 0) == UInt64.max)
        #expect(try roundTrip(0.1 + 0.2, default: 0) == 0.1 + 0.2)
        #expect(try roundTrip(Double.leastNonzeroMagnitude, default: 0) == Double.leastNonzeroMagnitude)
        #expect(try roundTrip(Float(3.14159), default: 0) == Float(3.14159))
        #expect(try roundTrip("héllo \"wörld\"\n\u{0}/\\", default: "") == "héllo \"wörld\"\n\u{0}/\\")
    }

    @Test func nonFiniteNumbers() throws {
        #expect(try roundTrip(Double.infinity, default: 0) == .infinity)
        #expect(try roundTrip(-Double.infinity, default: 0) == -.infinity)
        #expect(try roundTrip(Double.nan, default: 0).isNaN)
        #expect(try roundTrip([1, Double.infinity, -0.0], default: []) == [1, .infinity, -0.0])
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[Defaults.Key<[Double]>("d", default: [])] = [.infinity, -.infinity, .nan]
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"d\": [\"+Infinity\",\"-Infinity\",\"NaN\"]\n}\n")
    }

    @Test func datesReadBackEqual() throws {
        let now = Date()
        #expect(try roundTrip(now, default: .distantPast) == now)
        let odd = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
        #expect(try roundTrip(odd, default: .distantPast) == odd)
        #expect(try roundTrip(Date.distantFuture, default: .distantPast) == .distantFuture)
    }

    @Test func dataAndURLs() throws {
        let data = Data((0...255).map { UInt8($0) })
        #expect(try roundTrip(data, default: Data()) == data)
        let url = URL(string: "https://example.com/a%20b?q=1#frag")!
        #expect(try roundTrip(url, default: URL(fileURLWithPath: "/")) == url)
    }

    @Test func containersOptionalsAndEnums() throws {
        let nested = Nested(
            tags: ["a", "b"], scores: ["x": [1, 2], "y": []], child: Profile(name: "Kid", age: 3),
            shape: .rectangle(width: 2, height: 3))
        let fallback = Nested(tags: [], scores: [:], child: nil, shape: .empty)
        #expect(try roundTrip(nested, default: fallback) == nested)
        #expect(try roundTrip(Shape.circle(radius: 1.5), default: .empty) == .circle(radius: 1.5))
        #expect(try roundTrip(Shape.empty, default: .circle(radius: 0)) == .empty)
        #expect(try roundTrip([1, nil, 3] as [Int?], default: []) == [1, nil, 3])
        #expect(try roundTrip(Optional("x"), default: nil) == "x")
        #expect(try roundTrip(["k": ["n": true]], default: [:]) == ["k": ["n": true]])
    }

    @Test func optionalKeyWithNonNilDefault() throws {
        let dir = try TemporaryDirectory()
        let key = Defaults.Key<Int?>("maybe", default: 5)
        let defaults = try openFresh(dir.file())
        #expect(defaults[key] == 5)
        defaults[key] = 9
        #expect(defaults[key] == 9)
        defaults[key] = nil  // removes: back to the default
        #expect(defaults[key] == 5)
        #expect(!defaults.hasStoredValue(for: key))
    }
}
