#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// The namespace your typed keys are declared in, as static members of an extension, so they can be written
    /// with a leading dot (`defaults[.volume]`); another name for ``AnyKey``, the base of every key.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let volume = Defaults.Key<Double>("volume", default: 0.5)
    /// }
    /// ```
    public typealias Keys = AnyKey

    // `@unchecked Sendable`: the compiler checks only final classes, and `Key` inherits from this one.
    // Every stored property is an immutable `Sendable` value.
    /// The common base of every ``Defaults/Key``: a key of any value type (its name and whether it is secret), which
    /// APIs that take keys of several types accept (``reset(_:)-(AnyKey...)``,
    /// ``updates(forAnyOf:options:)-(AnyKey...,_)``). Extend it through its namespace name, ``Keys``.
    ///
    /// Declare keys as static members of an extension of ``Keys``, so they can be written with a leading dot:
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let volume = Defaults.Key<Double>("volume", default: 0.5)
    /// }
    /// defaults[.volume] = 0.8
    /// ```
    ///
    /// A key is an immutable object: `Sendable`, usable with any number of stores, from any thread. The store
    /// uses the key object's identity to find its cached value quickly, so declare keys once (as `static let`)
    /// rather than creating a new key object for every access.
    public class AnyKey: @unchecked Sendable {
        /// The string the value is stored under: the member name in the JSON file. Any string works, dots and
        /// slashes included.
        public let name: String

        /// A number unique to this key object for the life of the process; the store's cache is indexed by it.
        let id: Int

        /// An object that lives as long as the key: a store's cache slot holds it weakly, to tell when the key is
        /// gone (see `Store/StoreState+Parts.swift`).
        let lifetime = KeyLifetime()

        /// Whether the name is the reserved ``Defaults/schemaVersionKey``.
        let isReserved: Bool

        /// The name's length in bytes of UTF-8, checked against a store's key length limit at every set.
        let nameLength: Int

        /// Whether the key's value is secret: an error about its value never shows what the value is (see
        /// ``Defaults/Layer`` for secret layers).
        public let isSecret: Bool

        /// What the key is for, in a sentence, for people: a schema (see ``Defaults/Constraint``) and the tool's
        /// `describe` show it. `nil` when the key was declared without one.
        public let summary: String?

        /// This key's property in a schema (see ``Defaults/schema(for:title:)``); a typed key says its type.
        func schemaProperty() throws(DefaultsError) -> [String: JSONValue] {
            var property: [String: JSONValue] = [:]
            if let summary { property["description"] = .string(summary) }
            if isSecret { property["x-secret"] = true }
            return property
        }

        /// The stored form of the first of `forms` (the forms an old value may hold this key's value in, see
        /// ``Defaults/moveValues(fromUserDefaults:keys:sourceNames:removingMovedValues:marker:)-8ya8a``) that is a value
        /// of this key, or why none is. An untyped key takes the first as it is.
        func moved(from forms: [JSONValue], options: Defaults.Options) -> Defaults.MoveCandidate.Outcome {
            guard let first = forms.first else {
                return .failed(
                    DefaultsError(
                        .decodingFailed, "the value is a real that is not a number, which no key can hold", key: name))
            }
            return .value(first)
        }

        init(name: String, isSecret: Bool = false, summary: String? = nil) {
            self.name = name
            self.isSecret = isSecret
            self.summary = summary
            self.id = KeyIdentity.next()
            self.isReserved = name == Defaults.schemaVersionKey
            self.nameLength = name.utf8.count
        }
    }

    // `@unchecked Sendable` because its superclass is (see `AnyKey`); its own stored properties are immutable
    // and `Sendable`.
    /// A typed key: a name, a value type, and the value read when nothing is stored.
    ///
    /// ```swift
    /// extension Defaults.Keys {
    ///     static let volume = Defaults.Key<Double>("volume", default: 0.5)
    ///     static let token = Defaults.Key<String?>("token")  // optional: default nil
    /// }
    /// ```
    ///
    /// `Value` may be any `Codable & Sendable` type. When it is also `Equatable`, setting a value equal to the
    /// one this key object last read or set changes nothing and writes nothing (observers, in any case, are
    /// called only for values that really differ). Two key objects with the same name share the stored
    /// value; each reads it as its own type.
    public final class Key<Value: Codable & Sendable>: AnyKey, @unchecked Sendable {
        /// The value read when the store holds no value for the key (or holds one that does not decode).
        public let defaultValue: Value

        /// Compares two values when `Value` is `Equatable`.
        let isEqual: (@Sendable (Value, Value) -> Bool)?

        /// Whether `Value` is an `Optional`, whose `nil` means "remove the stored value".
        let isOptional: Bool

        /// Whether `==` of `Value` is the standard library's or Foundation's own (no user code), so the store
        /// may compare under its lock.
        let hasLibraryEquality: Bool

        /// The rules the key's values follow (see ``Defaults/Constraint``), in the order given.
        public let constraints: [Defaults.Constraint<Value>]

        /// The index of the first rule a value breaks, `nil` when it breaks none: the rules' checks composed into one
        /// closure when the key is made, so that a set calls closures and walks no array of a generic type (whose
        /// element metadata an unspecialized walk looks up at every set). `nil` for a key without rules.
        private let firstBroken: (@Sendable (Value) -> Int?)?

        /// Whether the key has rules: a stored flag, so that a set of a key without rules tests one byte.
        let hasConstraints: Bool

        init(
            name: String, defaultValue: Value, isEqual: (@Sendable (Value, Value) -> Bool)?, isSecret: Bool = false,
            summary: String? = nil, constraints: [Defaults.Constraint<Value>] = []
        ) {
            self.defaultValue = defaultValue
            self.isEqual = isEqual
            self.isOptional = Value.self is any OptionalValue.Type
            self.hasLibraryEquality = isEqual != nil && LibraryEquality.covers(Value.self)
            self.constraints = constraints
            self.firstBroken = Self.compose(constraints.map(\.check))
            self.hasConstraints = !constraints.isEmpty
            super.init(name: name, isSecret: isSecret, summary: summary)
        }

        /// Creates a key. For an `Equatable` value (found when the key is made), setting a value equal to the one
        /// this key last read or set is not a change.
        ///
        /// - Parameters:
        ///   - name: The name the value is stored under.
        ///   - defaultValue: The value read when nothing is stored.
        ///   - summary: What the key is for, in a sentence (see ``Defaults/AnyKey/summary``).
        ///   - constraints: The rules its values follow (see ``Defaults/Constraint``). The default value is not
        ///     checked: it is what a value that breaks them reads as.
        ///   - secret: Whether the value is secret (see ``Defaults/AnyKey/isSecret``).
        public convenience init(
            _ name: String, default defaultValue: Value, summary: String? = nil,
            constraints: [Defaults.Constraint<Value>] = [], secret: Bool = false
        ) {
            self.init(
                name: name, defaultValue: defaultValue, isEqual: Self.equality(), isSecret: secret, summary: summary,
                constraints: constraints)
        }

        /// `==` of `Value` when `Value` is `Equatable` (asked at run time, so that one initializer serves every
        /// type), else `nil`. The closure calls `Value`'s own `==`: the cast it makes is of a value to its own type.
        static func equality() -> (@Sendable (Value, Value) -> Bool)? {
            guard let type = Value.self as? any (Equatable & Sendable).Type else { return nil }
            return equality(as: type)
        }

        /// `==` of `E`, which is `Value`, on values of `Value`.
        private static func equality<E: Equatable & Sendable>(as _: E.Type) -> @Sendable (Value, Value) -> Bool {
            { unsafeBitCast($0, to: E.self) == unsafeBitCast($1, to: E.self) }
        }

        override func schemaProperty() throws(DefaultsError) -> [String: JSONValue] {
            var property = try super.schemaProperty()
            try describeForSchema(into: &property)
            return property
        }

        /// One closure that runs `checks` in order and returns the index of the first that fails; `nil` for none.
        private static func compose(_ checks: [@Sendable (Value) -> Bool]) -> (@Sendable (Value) -> Int?)? {
            var composed: (@Sendable (Value) -> Int?)?
            for (index, check) in checks.enumerated().reversed() {
                let rest = composed
                composed = { value in check(value) ? rest?(value) : index }
            }
            return composed
        }

        /// The first rule `value` breaks, as the error a set or a read of it gives; `nil` when it follows every
        /// rule (or the key has none). A secret key's error shows no part of the value. `source` says where a value
        /// read came from when not from the store (`the value of the environment variable X`), with `path` then
        /// the layer's file, if any.
        func violation(
            of value: Value, stored: Bool, path: @autoclosure () -> String?, source: String? = nil
        ) -> DefaultsError? {
            guard let firstBroken, let index = firstBroken(value) else { return nil }
            let broken = constraints[index]
            let spelled = Defaults.Constraint<Value>.spelled(value)
            let shown =
                switch (source, isSecret) {
                case (let source?, true): source
                case (let source?, false): "\(source), \(spelled),"
                case (nil, true): "the value"
                case (nil, false): "the value \(spelled)"
                }
            let outcome = stored ? "it reads as the key's default and is left as it is" : "nothing was stored"
            return DefaultsError(
                .invalidValue, "\(shown) is not allowed: it must be \(broken.rule); \(outcome)", path: path(), key: name
            )
        }

        /// The first of `forms` that decodes as `Value` and follows the key's constraints, in the form the store
        /// keeps a `Value` in; else the error of the first form (every form failed).
        override func moved(from forms: [JSONValue], options: Defaults.Options) -> Defaults.MoveCandidate.Outcome {
            var first: DefaultsError?
            for form in forms {
                do throws(DefaultsError) {
                    let fragment = try JSONValueBytes.fragment(form, key: name, maxDepth: options.maximumDepth)
                    let value = try Codec.decode(
                        Value.self, from: fragment, key: name, path: nil, what: "the old value", secret: isSecret)
                    if let violation = violation(of: value, stored: false, path: nil, source: "the old value") {
                        throw violation
                    }
                    let stored = try Codec.encode(
                        value, key: name, encoder: Codec.makeEncoder(), maxDepth: options.maximumDepth)
                    return .value(try Codec.decode(JSONValue.self, from: stored, key: name, path: nil))
                } catch {
                    if first == nil { first = error }
                }
            }
            return first.map(Defaults.MoveCandidate.Outcome.failed) ?? super.moved(from: forms, options: options)
        }

        /// Whether `value` is `nil` (only ever true for an optional `Value`).
        @inline(__always)
        func isNil(_ value: Value) -> Bool {
            guard isOptional, let optional = value as? any OptionalValue else { return false }
            return optional.isNil
        }
    }
}

extension Defaults.Key {
    /// Creates a key for an optional value whose default is `nil`. Setting `nil` removes the stored value. For an
    /// `Equatable` wrapped type, setting a value equal to the one this key last read or set is not a change.
    ///
    /// - Parameters:
    ///   - name: The name the value is stored under.
    ///   - summary: What the key is for, in a sentence (see ``Defaults/AnyKey/summary``).
    ///   - constraints: The rules its values follow; `.some(…)` applies a rule of the wrapped type.
    ///   - secret: Whether the value is secret (see ``Defaults/AnyKey/isSecret``).
    public convenience init<Wrapped>(
        _ name: String, summary: String? = nil, constraints: [Defaults.Constraint<Value>] = [], secret: Bool = false
    ) where Value == Wrapped? {
        self.init(
            name: name, defaultValue: nil, isEqual: Self.equality(), isSecret: secret, summary: summary,
            constraints: constraints)
    }
}

/// The value types whose `==` is known to be library code.
enum LibraryEquality {
    private static let types: [ObjectIdentifier] = [
        Bool.self, Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self,
        UInt32.self, UInt64.self, Double.self, Float.self, String.self, Date.self, Data.self, URL.self,
        JSONValue.self, Bool?.self, Int?.self, Int64?.self, Double?.self, String?.self, Date?.self, Data?.self,
        URL?.self, JSONValue?.self, [String].self, [Int].self, [Double].self,
    ].map { ObjectIdentifier($0) }

    /// Whether `type`'s equality is one of the above.
    static func covers(_ type: Any.Type) -> Bool { types.contains(ObjectIdentifier(type)) }
}

/// Lets the store tell whether a value of a generic type is `nil`.
protocol OptionalValue {
    /// Whether this optional is `nil`.
    var isNil: Bool { get }
    /// The type it wraps.
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
    static var wrappedType: Any.Type { Wrapped.self }
}

/// Hands out key identities, never reusing one.
enum KeyIdentity {
    private static let last = Locked(0)

    /// The next unused identity.
    static func next() -> Int {
        last.withLock { last in
            last += 1
            return last
        }
    }
}

/// An object that lives exactly as long as one key object (its ``Defaults/AnyKey/lifetime``), so that a store's
/// cache slot can hold it weakly and tell when the key is gone, without a weak reference to the key itself.
final class KeyLifetime: Sendable {}
