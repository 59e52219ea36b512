import CodableDefaults

/// Keys of every kind a schema describes, for the schema tests of two targets.
package enum SchemaKeys {
    /// A `CaseIterable` string enum.
    package enum Theme: String, Codable, CaseIterable, Sendable { case light, dark }

    /// One key per kind: number range, integer bounds, optional string length, array length, enum, custom rule,
    /// secret, struct.
    package static let keys: [Defaults.AnyKey] = [
        Defaults.Key<Double>("volume", default: 0.5, summary: "Playback volume.", constraints: [.range(0...1)]),
        Defaults.Key<Int>("retries", default: 3, constraints: [.atLeast(0), .atMost(10)]),
        Defaults.Key<String?>("nickname", constraints: [.some(.length(1...8))]),
        Defaults.Key<[String]>("tags", default: [], constraints: [.length(0...2)]),
        Defaults.Key<Theme>("theme", default: .light),
        Defaults.Key<Int>("even", default: 0, constraints: [.custom("an even number") { $0 % 2 == 0 }]),
        Defaults.Key<String?>("token", summary: "API token.", secret: true),
        Defaults.Key<Profile>("profile", default: Profile(name: "Guest", age: 0)),
    ]
}
