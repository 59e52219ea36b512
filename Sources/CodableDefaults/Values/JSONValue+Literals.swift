/// Literals for `JSONValue`, so a migration step or a comparison can write values as Swift literals:
/// `values["count"] = 5`, `values["tags"] = ["a", "b"]`, `values["window"] = ["width": 800]`.
///
/// There is no `nil` literal: in a `[String: JSONValue]` (a migration's values) `values["x"] = nil` must go on
/// removing the member, and with a `nil` literal for `JSONValue` it would read, to a reader if not to the
/// compiler, as storing JSON `null`. Write ``JSONValue/null`` for `null`.
extension JSONValue: ExpressibleByBooleanLiteral {
    /// `true` or `false`, as in `let enabled: JSONValue = true`.
    ///
    /// - Parameter value: The literal.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// A number, as in `let count: JSONValue = 5`: ``JSONNumber/init(integerLiteral:)``.
    ///
    /// - Parameter value: The literal.
    public init(integerLiteral value: Int) {
        self = .number(JSONNumber(value))
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A number, as in `let volume: JSONValue = 0.8`: ``JSONNumber/init(floatLiteral:)``, the shortest text
    /// that reads back as the same `Double`.
    ///
    /// - Parameter value: The literal.
    public init(floatLiteral value: Double) {
        self = .number(JSONNumber(floatLiteral: value))
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string, as in `let name: JSONValue = "Ann"`.
    ///
    /// - Parameter value: The literal.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array, as in `let tags: JSONValue = ["a", "b", 3]`.
    ///
    /// - Parameter elements: The literal's elements.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object, as in `let window: JSONValue = ["width": 800, "title": "Main"]`.
    ///
    /// A name given twice does not trap (as it does in a `Dictionary` literal): the last value wins, as it
    /// does for `values["x"] = …` twice. So does the last of two names that differ only in Unicode
    /// normalization, which `String` compares as equal.
    ///
    /// - Parameter elements: The literal's members, in order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(elements.count)
        for (name, value) in elements { members[name] = value }
        self = .object(members)
    }
}
