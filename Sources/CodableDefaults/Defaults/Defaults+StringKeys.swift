#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `UserDefaults`-style API: string keys, the registration domain, and typed getters with coercions.
extension Defaults {
    /// Registers values to read when nothing is stored under their keys (the registration domain).
    ///
    /// Registered values live in memory only and are never written to the file. A later registration of a
    /// key replaces the earlier one. Lookup order: the argument domain, the override layers, the stored value, the
    /// fallback layers, the registered value, and last the typed key's own default (see ``Layer``). Observers of keys whose effective value changes are
    /// notified.
    ///
    /// ```swift
    /// defaults.register(defaults: ["count": 7, "name": "Guest"])
    /// defaults.integer(forKey: "count")   // 7 until something is stored
    /// ```
    ///
    /// - Parameter registrationDictionary: Values of any `Codable & Sendable` types, by key. A value that
    ///   cannot be encoded is not registered; its error goes to ``onError``.
    public func register(defaults registrationDictionary: [String: any Codable & Sendable]) {
        var fragments: [MemberName: [UInt8]] = [:]
        let encoder = Codec.makeEncoder()
        for (name, value) in registrationDictionary {
            if let refusal = refusalIfAny(name) {
                store.report(refusal)
                continue
            }
            do {
                fragments[MemberName(name)] = try Codec.encode(
                    value, key: name, encoder: encoder, maxDepth: store.maxDepth)
            } catch {
                store.report(error)
            }
        }
        store.register(fragments)
    }

    /// The effective value of a key, untyped: the argument domain, else an override layer, else the stored
    /// value, else a fallback layer, else the registered value (see ``Layer``); `nil` when none has one (a stored JSON `null` is ``JSONValue/null``), or when its
    /// value cannot be a `JSONValue` (an object with two names that differ only in Unicode normalization;
    /// the error goes to ``onError``).
    ///
    /// - Parameter name: The key's name.
    public func object(forKey name: String) -> JSONValue? {
        let key = store.untypedKey(name)
        if let value = store.value(for: key) { return value }
        // `JSONValue?` reads a stored `null` as `nil`; tell it from a missing value and from a failed read.
        guard store.hasEffectiveValue(name) else { return nil }
        do {
            _ = try store.checkedValue(for: key)
            return .null
        } catch {
            return nil  // The read reported the error to `onError`.
        }
    }

    /// The effective value of a key decoded as `type`, or `nil` when nothing is known or it does not decode
    /// (the decoding error then goes to ``onError``).
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - name: The key's name.
    public func value<Value: Codable & Sendable>(_ type: Value.Type, forKey name: String) -> Value? {
        store.effectiveValue(type, name: name)
    }

    /// Stores a value under a string key; `nil` removes the stored value (reads then fall back to a fallback
    /// layer's or the registered value).
    ///
    /// Written according to ``saveMode``; the value is encoded at the next save (use ``set(_:for:)`` with a
    /// typed key to encode at once). A key present in the argument domain or an override layer keeps reading
    /// that value while it is present, as with `UserDefaults`; the stored value is still written.
    ///
    /// - Parameters:
    ///   - value: Any `Codable & Sendable` value, or `nil`.
    ///   - name: The key's name.
    public func set<Value: Codable & Sendable>(_ value: Value?, forKey name: String) {
        if let refusal = refusalIfAny(name) { return store.report(refusal) }
        let value = value.flatMap { ($0 as? any OptionalValue)?.isNil == true ? nil : $0 }
        do { try store.set(untyped: value, name: name, mode: saveMode) } catch { store.report(error) }
    }

    /// Removes the stored value of a key: reads fall back to a fallback layer's or the registered value, if any.
    ///
    /// - Parameter name: The key's name.
    public func removeValue(forKey name: String) {
        if let refusal = refusalIfAny(name) { return store.report(refusal) }
        do { try store.remove(name, mode: saveMode) } catch { store.report(error) }
    }

    /// Removes the stored value of a key: the same as ``removeValue(forKey:)``, under the name
    /// `UserDefaults` gives it.
    ///
    /// Reads fall back to a fallback layer's or the registered value, if any; observers see the change. Written according to
    /// ``saveMode``. A reserved name is refused and reported to ``onError``, as by ``removeValue(forKey:)``.
    ///
    /// - Parameter name: The key's name.
    public func removeObject(forKey name: String) {
        removeValue(forKey: name)
    }

    /// Whether the store holds a value for the key (not counting registered or argument values).
    ///
    /// - Parameter name: The key's name.
    public func hasStoredValue(forKey name: String) -> Bool {
        store.hasStoredValue(name)
    }

    /// Every key's effective value, in the lookup order of a read (see ``Layer``): registered values overlaid with
    /// fallback layers, stored values, override layers and argument values. Names found only in the environment
    /// are not listed (the environment names no keys).
    ///
    /// The dictionary's `String` keys compare by Unicode canonical equivalence, so of two keys whose names
    /// differ only in normalization it holds one; ``keys`` lists both.
    public func dictionaryRepresentation() -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for name in store.effectiveNames {
            if let value = object(forKey: name) { result[name] = value }
        }
        return result
    }

    // MARK: Typed getters

    /// The value as an `Int`: `0` when nothing is known or it does not convert.
    ///
    /// Numbers convert (a fraction is truncated toward zero; out of range gives `0`), `true`/`false` give
    /// 1/0, and a string converts when it spells a number (`"12"` → 12, `"12.7"` → 12).
    ///
    /// - Parameter name: The key's name.
    public func integer(forKey name: String) -> Int {
        Coercion.integer(object(forKey: name)) ?? 0
    }

    /// The value as a `Double`: `0` when nothing is known or it does not convert.
    ///
    /// Numbers convert, `true`/`false` give 1/0, a string converts when it spells a number (including
    /// `"+Infinity"`, `"-Infinity"` and `"NaN"`).
    ///
    /// - Parameter name: The key's name.
    public func double(forKey name: String) -> Double {
        Coercion.double(object(forKey: name)) ?? 0
    }

    /// The value as a `Float`: ``double(forKey:)`` rounded to the nearest `Float`.
    ///
    /// - Parameter name: The key's name.
    public func float(forKey name: String) -> Float {
        Float(double(forKey: name))
    }

    /// The value as a `Bool`: `false` when nothing is known or it does not convert.
    ///
    /// A number is `true` when it is not zero; a string is `true` when it is `"true"` or `"yes"` (any case)
    /// or spells a non-zero number, `false` otherwise.
    ///
    /// - Parameter name: The key's name.
    public func bool(forKey name: String) -> Bool {
        Coercion.bool(object(forKey: name)) ?? false
    }

    /// The value as a `String`: a string as is, a number as its stored literal (`1e300` stays `1e300`),
    /// `true`/`false` as `"1"`/`"0"` (as `UserDefaults` gives them), `nil` for anything else or when nothing
    /// is known.
    ///
    /// - Parameter name: The key's name.
    public func string(forKey name: String) -> String? {
        Coercion.string(object(forKey: name))
    }

    /// The value as `Data`: a Base64 string (how `Data` values are stored) decoded, else `nil`.
    ///
    /// - Parameter name: The key's name.
    public func data(forKey name: String) -> Data? {
        guard case .string(let text) = object(forKey: name) else { return nil }
        return Data(base64Encoded: text)
    }

    /// The value as a `URL`: a string holding an absolute URL (any scheme, as `URL` values are stored), or
    /// a path (`/…` or `~/…`, which gives a file URL); `nil` otherwise.
    ///
    /// - Parameter name: The key's name.
    public func url(forKey name: String) -> URL? {
        guard case .string(let text) = object(forKey: name) else { return nil }
        if text.hasPrefix("/") { return URL(fileURLWithPath: text) }
        if text == "~" || text.hasPrefix("~/") {
            let home = ProcessInfo.processInfo.environment["HOME"] ?? "/"
            return URL(fileURLWithPath: home + text.dropFirst())
        }
        guard let url = URL(string: text), url.scheme != nil else { return nil }
        return url
    }

    /// The value as an array, or `nil` when it is not one.
    ///
    /// - Parameter name: The key's name.
    public func array(forKey name: String) -> [JSONValue]? {
        guard case .array(let values) = object(forKey: name) else { return nil }
        return values
    }

    /// The value as an array of strings, or `nil` when it is not an array or holds anything but strings.
    ///
    /// - Parameter name: The key's name.
    public func stringArray(forKey name: String) -> [String]? {
        guard let values = array(forKey: name) else { return nil }
        var strings: [String] = []
        for value in values {
            guard case .string(let string) = value else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// The value as a dictionary (a JSON object), or `nil` when it is not one.
    ///
    /// - Parameter name: The key's name.
    public func dictionary(forKey name: String) -> [String: JSONValue]? {
        guard case .object(let members) = object(forKey: name) else { return nil }
        return members
    }
}

/// The conversions of the typed getters, one table for the code and the docs.
enum Coercion {
    static func integer(_ value: JSONValue?) -> Int? {
        switch value {
        case .number(let number): return number.intValue ?? truncated(number.doubleValue)
        case .bool(let flag): return flag ? 1 : 0
        case .string(let text):
            let trimmed = trim(text)
            if let number = Int(trimmed) { return number }
            return Double(trimmed).flatMap(truncated)
        case .null, .array, .object, .none: return nil
        }
    }

    static func double(_ value: JSONValue?) -> Double? {
        switch value {
        case .number(let number): return number.doubleValue
        case .bool(let flag): return flag ? 1 : 0
        case .string(let text):
            let trimmed = trim(text)
            switch trimmed {
            case Codec.positiveInfinity: return .infinity
            case Codec.negativeInfinity: return -.infinity
            case Codec.notANumber: return .nan
            default: return Double(trimmed)
            }
        case .null, .array, .object, .none: return nil
        }
    }

    static func bool(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag): return flag
        case .number(let number): return number != 0
        case .string(let text):
            let lowered = trim(text).lowercased()
            if lowered == "true" || lowered == "yes" { return true }
            if let number = Double(lowered) { return number != 0 }
            return false
        case .null, .array, .object, .none: return nil
        }
    }

    static func string(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): return text
        case .number(let number): return number.literal
        case .bool(let flag): return flag ? "1" : "0"
        case .null, .array, .object, .none: return nil
        }
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trim(_ text: String) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }) else { return "" }
        let last = text.lastIndex(where: { !isBlank($0) })!
        return text[first...last]
    }

    private static func truncated(_ number: Double) -> Int? {
        guard number.isFinite else { return nil }
        return Int(exactly: number.rounded(.towardZero))
    }
}
