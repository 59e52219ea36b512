extension Defaults {
    /// A rule a key's values must follow: a range for numbers, a length for strings and arrays, a set of allowed
    /// values, or a check of your own. Given to a key by its `constraints:` argument.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let volume = Defaults.Key<Double>("volume", default: 0.5, constraints: [.range(0...1)])
    ///     static let nickname = Defaults.Key<String?>("nickname", constraints: [.some(.length(1...32))])
    /// }
    /// ```
    ///
    /// A set of a value that breaks a key's rule is refused with ``DefaultsError/Code-swift.struct/invalidValue``
    /// naming the key and the rule, and nothing is stored (the subscript, which cannot throw, hands the error to
    /// ``Defaults/onError``). A value another program stored that breaks it (or one of a layer, or of the argument
    /// domain) reads as the key's default, is reported once, and is never written over: the promise a value that
    /// does not decode already has.
    ///
    /// A constraint is a value: `Sendable`, its check a `@Sendable` closure that must not call the store.
    public struct Constraint<Value>: Sendable {
        /// The rule in words, as errors state it: "between 0 and 1", "one of "dark", "light"".
        public let rule: String
        /// Whether a value follows the rule.
        let check: @Sendable (Value) -> Bool
        /// The JSON Schema keywords that say the same, with their values (encoded when a schema is written).
        let keywords: [(name: String, value: any Encodable & Sendable)]

        /// A rule of your own: `check` returns whether a value follows it; `rule` says it in words.
        ///
        /// - Parameters:
        ///   - rule: The rule in words, for errors ("an even number").
        ///   - check: Whether a value follows the rule. Runs on the thread that sets or reads, without the store's
        ///     lock; it must not call the store.
        public init(_ rule: String, _ check: @escaping @Sendable (Value) -> Bool) {
            self.init(rule: rule, keywords: [], check)
        }

        init(
            rule: String, keywords: [(name: String, value: any Encodable & Sendable)],
            _ check: @escaping @Sendable (Value) -> Bool
        ) {
            self.rule = rule
            self.check = check
            self.keywords = keywords
        }

        /// A rule of your own; see ``init(_:_:)``.
        public static func custom(_ rule: String, _ check: @escaping @Sendable (Value) -> Bool) -> Self {
            Self(rule, check)
        }

        /// The rule `constraint` of the wrapped value, for an optional key: `nil` (no stored value) follows it.
        public static func some<Wrapped>(_ constraint: Constraint<Wrapped>) -> Self where Value == Wrapped? {
            Self(rule: constraint.rule, keywords: constraint.keywords) { value in
                guard let value else { return true }
                return constraint.check(value)
            }
        }
    }
}

extension Defaults.Constraint where Value: Comparable & Encodable & Sendable {
    /// Values from `bounds.lowerBound` to `bounds.upperBound`, both included (`minimum`, `maximum`).
    public static func range(_ bounds: ClosedRange<Value>) -> Self {
        Self(
            rule: "between \(bounds.lowerBound) and \(bounds.upperBound)",
            keywords: [("minimum", bounds.lowerBound), ("maximum", bounds.upperBound)]
        ) { [lower = bounds.lowerBound, upper = bounds.upperBound] in lower <= $0 && $0 <= upper }
    }

    /// Values of at least `lower` (`minimum`).
    public static func atLeast(_ lower: Value) -> Self {
        Self(rule: "at least \(lower)", keywords: [("minimum", lower)]) { $0 >= lower }
    }

    /// Values of at most `upper` (`maximum`).
    public static func atMost(_ upper: Value) -> Self {
        Self(rule: "at most \(upper)", keywords: [("maximum", upper)]) { $0 <= upper }
    }
}

extension Defaults.Constraint where Value == String {
    /// Strings whose length, in Unicode scalars (what JSON Schema counts), is within `bounds` (`minLength`,
    /// `maxLength`).
    public static func length(_ bounds: ClosedRange<Int>) -> Self {
        Self(
            rule: "from \(bounds.lowerBound) to \(bounds.upperBound) characters long",
            keywords: [("minLength", bounds.lowerBound), ("maxLength", bounds.upperBound)]
        ) { bounds.contains($0.unicodeScalars.count) }
    }
}

extension Defaults.Constraint where Value: Collection & Sendable {
    /// Arrays (or other collections) whose number of elements is within `bounds` (`minItems`, `maxItems`); for a
    /// dictionary stored as a JSON object (`String` or `Int` keys), its number of members (`minProperties`,
    /// `maxProperties`); for another dictionary (stored as an array of keys and values), a rule the schema names
    /// in `x-rules`.
    public static func length(_ bounds: ClosedRange<Int>) -> Self {
        let keywords: [(name: String, value: any Encodable & Sendable)] =
            switch DictionaryShape.of(Value.self) {
            case .object: [("minProperties", bounds.lowerBound), ("maxProperties", bounds.upperBound)]
            case .pairs: []
            case nil: [("minItems", bounds.lowerBound), ("maxItems", bounds.upperBound)]
            }
        return Self(rule: "from \(bounds.lowerBound) to \(bounds.upperBound) elements", keywords: keywords) {
            bounds.contains($0.count)
        }
    }
}

/// How `JSONEncoder` stores a dictionary: an object for `String` and `Int` keys, an array of keys and values
/// for others.
enum DictionaryShape {
    case object
    case pairs

    /// The shape of `type` when it is a dictionary; `nil` for any other type.
    static func of(_ type: Any.Type) -> DictionaryShape? {
        guard let dictionary = type as? any DictionaryKeyed.Type else { return nil }
        return dictionary.isStoredAsObject ? .object : .pairs
    }
}

/// A `Dictionary` type, for ``DictionaryShape``.
protocol DictionaryKeyed {
    /// Whether `JSONEncoder` stores it as a JSON object (its keys are `String` or `Int`).
    static var isStoredAsObject: Bool { get }
}

extension Dictionary: DictionaryKeyed {
    static var isStoredAsObject: Bool { Key.self == String.self || Key.self == Int.self }
}

extension Defaults.Constraint where Value: Equatable & Encodable & Sendable {
    /// One of `allowed` (`enum`).
    public static func oneOf(_ allowed: [Value]) -> Self {
        let spelled = allowed.map { Defaults.Constraint<Value>.spelled($0) }
        return Self(rule: "one of " + spelled.joined(separator: ", "), keywords: [("enum", allowed)]) {
            allowed.contains($0)
        }
    }
}

extension Defaults.Constraint {
    /// A value as compact JSON, for a rule or an error; its description when it does not encode.
    static func spelled(_ value: some Encodable & Sendable) -> String {
        do throws(DefaultsError) {
            let bytes = try Codec.encode(value, key: "", encoder: Codec.makeEncoder(), maxDepth: 64)
            return String(decoding: bytes, as: UTF8.self)
        } catch {
            return "\(value)"
        }
    }
}
