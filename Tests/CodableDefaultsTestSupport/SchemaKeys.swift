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

    /// A struct with an optional property, for ``otherValueKeys``.
    package struct Account: Codable, Sendable, Equatable {
        /// A name.
        package var name: String
        /// A nickname, or none.
        package var nickname: String?

        /// An account.
        package init(name: String, nickname: String?) {
            self.name = name
            self.nickname = nickname
        }
    }

    /// An enum with associated values, for ``otherValueKeys``.
    package enum Mode: Codable, Sendable, Equatable {
        /// A number.
        case fixed(Int)
        /// A name.
        case named(String)
    }

    /// Keys whose generated schema must take more than their defaults: a dictionary with a length (its other keys),
    /// a struct with an optional property (left out), an enum with associated values (its other case), a string
    /// range (which JSON Schema cannot say).
    package static let limits = Defaults.Key<[String: Int]>("limits", default: ["a": 1], constraints: [.length(1...2)])
    /// See ``limits``.
    package static let account = Defaults.Key<Account>("account", default: Account(name: "Ann", nickname: "A"))
    /// See ``limits``.
    package static let mode = Defaults.Key<Mode>("mode", default: .fixed(1))
    /// See ``limits``.
    package static let word = Defaults.Key<String>("word", default: "m", constraints: [.range("a"..."z")])
    /// ``limits``, ``account``, ``mode`` and ``word``.
    package static let otherValueKeys: [Defaults.AnyKey] = [limits, account, mode, word]
}
