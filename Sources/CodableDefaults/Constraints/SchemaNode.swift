/// One schema of a ``Defaults/Schema`` (the top level, a property's, an array's `items`), read into the checks it
/// makes. Immutable once read.
final class SchemaNode: Sendable {
    /// Why a schema cannot be read: the message names the keyword and where it is.
    struct Problem: Error {
        let message: String
    }

    /// `false` for the schema `false` (nothing is allowed); `true` for every other.
    let allowsValue: Bool
    /// The JSON types allowed (`type`), or `nil` for any.
    let types: [String]?
    /// The values allowed (`enum`; `const` as one value), or `nil` for any.
    let allowed: [JSONValue]?
    /// Which keyword `allowed` came from.
    let allowedKeyword: String
    /// Numeric bounds: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
    let minimum: JSONNumber?
    let maximum: JSONNumber?
    let exclusiveMinimum: JSONNumber?
    let exclusiveMaximum: JSONNumber?
    /// Length bounds of strings (in Unicode scalars), arrays and objects.
    let minLength: Int?
    let maxLength: Int?
    let minItems: Int?
    let maxItems: Int?
    let minProperties: Int?
    let maxProperties: Int?
    /// Whether an array's elements must differ (`uniqueItems`).
    let uniqueItems: Bool
    /// The schema of every element of an array (`items`), or `nil` for any.
    let items: SchemaNode?
    /// Whether an `"x-secret"` value marks a value secret: any but `false` (or none). A mark meant to hide a value
    /// is never read as not hiding it.
    static func marksSecret(_ mark: JSONValue?) -> Bool {
        guard let mark else { return false }
        return mark != .bool(false)
    }

    /// Whether the schema marks its value secret (`"x-secret"` other than `false`).
    let isSecret: Bool
    /// The schemas of named members (`properties`).
    let properties: [String: SchemaNode]
    /// The members an object must have (`required`).
    let required: [String]
    /// The schema of the members `properties` does not name (`additionalProperties`), or `nil` for any.
    let additionalProperties: SchemaNode?

    /// Reads `json`, the schema at `pointer` (a JSON Pointer into the whole schema, for messages).
    init(_ json: JSONValue, at pointer: String) throws(Problem) {
        let members: [String: JSONValue]
        switch json {
        case .bool(let allows):
            members = [:]
            allowsValue = allows
        case .object(let object):
            members = object
            allowsValue = true
        default:
            throw Problem(message: "the schema at \(Self.place(pointer)) is \(json), not an object, true or false")
        }
        isSecret = Self.marksSecret(members["x-secret"])
        for name in members.keys where !Defaults.Schema.checkedKeywords.contains(name) {
            guard Defaults.Schema.ignoredKeywords.contains(name) || name.hasPrefix("x-") else {
                throw Problem(
                    message:
                        "the schema keyword \(SchemaNode.quoted(name)) at \(Self.place(pointer)) is not supported; "
                        + "supported: " + Defaults.Schema.checkedKeywords.joined(separator: ", "))
            }
        }
        func at(_ keyword: String) -> String { "\(pointer)/\(keyword)" }
        func bad(_ keyword: String, _ expected: String) -> Problem {
            Problem(message: "the schema keyword \"\(keyword)\" at \(Self.place(pointer)) must be \(expected)")
        }
        func number(_ keyword: String) throws(Problem) -> JSONNumber? {
            guard let value = members[keyword] else { return nil }
            guard case .number(let number) = value else { throw bad(keyword, "a number") }
            return number
        }
        func count(_ keyword: String) throws(Problem) -> Int? {
            guard let value = members[keyword] else { return nil }
            guard case .number(let number) = value, number.isWhole, JSONNumber.order(number, 0) >= 0 else {
                throw bad(keyword, "a whole number of at least 0")
            }
            // A count beyond `Int` (`1e20`) is beyond every count a value can have: the largest `Int` is the same.
            return number.intValue ?? Int.max
        }

        switch members["type"] {
        case nil: types = nil
        case .string(let name)?: types = [name]
        case .array(let names)?:
            let listed = try names.map { (name) throws(Problem) -> String in
                guard case .string(let name) = name else { throw bad("type", "a type name or a list of them") }
                return name
            }
            // JSON Schema's meta-schema: a list of at least one name, each once.
            guard !listed.isEmpty, Set(listed).count == listed.count else {
                throw bad("type", "a type name or a non-empty list of distinct ones")
            }
            types = listed
        default: throw bad("type", "a type name or a list of them")
        }
        let known = ["null", "boolean", "number", "integer", "string", "array", "object"]
        if let unknown = types?.first(where: { !known.contains($0) }) {
            throw bad("type", "one of " + known.joined(separator: ", ") + ", not \(SchemaNode.quoted(unknown))")
        }
        switch (members["enum"], members["const"]) {
        case (.array(let values)?, nil):
            (allowed, allowedKeyword) = (values, "enum")
        case (nil, let value?):
            (allowed, allowedKeyword) = ([value], "const")
        case (nil, nil):
            (allowed, allowedKeyword) = (nil, "enum")
        case (.some, nil):
            throw bad("enum", "an array")
        case (.array(let values)?, let value?):
            // Both apply: a value must be in the list and equal the constant; one that is not in the list allows
            // nothing.
            (allowed, allowedKeyword) = (values.contains { Self.same($0, value) } ? [value] : [], "const")
        case (.some, .some):
            throw bad("enum", "an array")
        }
        minimum = try number("minimum")
        maximum = try number("maximum")
        exclusiveMinimum = try number("exclusiveMinimum")
        exclusiveMaximum = try number("exclusiveMaximum")
        minLength = try count("minLength")
        maxLength = try count("maxLength")
        minItems = try count("minItems")
        maxItems = try count("maxItems")
        minProperties = try count("minProperties")
        maxProperties = try count("maxProperties")
        switch members["uniqueItems"] {
        case nil: uniqueItems = false
        case .bool(let unique)?: uniqueItems = unique
        default: throw bad("uniqueItems", "true or false")
        }
        switch members["items"] {
        case nil: items = nil
        case .array?: throw bad("items", "one schema (a list of schemas is an older draft's form, not supported)")
        case let value?: items = try SchemaNode(value, at: at("items"))
        }
        switch members["properties"] {
        case nil: properties = [:]
        case .object(let named)?:
            var properties: [String: SchemaNode] = [:]
            for (name, value) in named {
                properties[name] = try SchemaNode(value, at: at("properties") + "/" + Self.escaped(name))
            }
            self.properties = properties
        default: throw bad("properties", "an object")
        }
        switch members["required"] {
        case nil: required = []
        case .array(let names)?:
            required = try names.map { (name) throws(Problem) -> String in
                guard case .string(let name) = name else { throw bad("required", "a list of names") }
                return name
            }
            // Each once, told apart by their Unicode scalars, as member names are.
            guard Set(required.map { Array($0.unicodeScalars.map(\.value)) }).count == required.count else {
                throw bad("required", "a list of distinct names")
            }
        default: throw bad("required", "a list of names")
        }
        switch members["additionalProperties"] {
        case nil: additionalProperties = nil
        case let value?: additionalProperties = try SchemaNode(value, at: at("additionalProperties"))
        }
    }

    /// The schema of the member `name` of an object: its `properties` schema (the name matched by its Unicode
    /// scalars), else `additionalProperties`, else the schema that allows anything.
    func member(_ name: String) -> SchemaNode {
        Self.exactly(name, in: properties) ?? additionalProperties ?? SchemaNode.anything
    }

    /// Whether the schema `properties` of the member `name`, or any schema it gives that member, marks it secret:
    /// a name that matches a secret property's only up to Unicode normalization is kept secret too.
    func marksSecret(_ name: String) -> Bool {
        member(name).isSecret || properties[name]?.isSecret == true
    }

    /// The schema `true`.
    static let anything = SchemaNode()

    /// The schema `true`: no rule.
    private init() {
        (allowsValue, types, allowed, allowedKeyword, isSecret) = (true, nil, nil, "enum", false)
        (minimum, maximum, exclusiveMinimum, exclusiveMaximum) = (nil, nil, nil, nil)
        (minLength, maxLength, minItems, maxItems, minProperties, maxProperties) = (nil, nil, nil, nil, nil, nil)
        (uniqueItems, items, properties, required, additionalProperties) = (false, nil, [:], [], nil)
    }

    /// Adds to `found` every rule `value`, at `path`, breaks; a `secret` value (or one this schema marks secret)
    /// is quoted in none, and neither is a value holding one (an object or array with a secret part). A rule
    /// broken inside a secret value is reported at the secret value's path (`secretRoot`), its own withheld: a
    /// member's name or an element's place would tell of the value.
    func check(
        _ value: JSONValue, at path: [String], secret: Bool, secretRoot: [String]? = nil,
        into found: inout [Defaults.Schema.Violation]
    ) {
        let secret = secret || isSecret
        let root = secretRoot ?? (secret ? path : nil)
        func broken(_ keyword: String, _ rule: String) {
            let quoted = secret || holdsSecret(value) ? nil : Self.shown(value)
            found.append(Self.violation(at: path, root: root, keyword: keyword, rule: rule, value: quoted))
        }
        guard allowsValue else { return broken("false", "absent (the schema allows nothing here)") }
        if let types, !types.contains(where: { Self.matches(value, type: $0) }) {
            return broken("type", "of type " + types.joined(separator: " or "))
        }
        if let allowed, !allowed.contains(where: { Self.same($0, value) }) {
            let spelled = allowed.map { secret ? "…" : Self.shown($0) }.joined(separator: ", ")
            let rule =
                allowed.isEmpty
                ? "a value both \"enum\" and \"const\" allow (they allow none together)"
                : allowedKeyword == "const" ? "equal to \(spelled)" : "one of \(spelled)"
            broken(allowedKeyword, rule)
        }
        switch value {
        case .number(let number):
            if let minimum, JSONNumber.order(number, minimum) < 0 { broken("minimum", "at least \(minimum)") }
            if let maximum, JSONNumber.order(number, maximum) > 0 { broken("maximum", "at most \(maximum)") }
            if let exclusiveMinimum, JSONNumber.order(number, exclusiveMinimum) <= 0 {
                broken("exclusiveMinimum", "more than \(exclusiveMinimum)")
            }
            if let exclusiveMaximum, JSONNumber.order(number, exclusiveMaximum) >= 0 {
                broken("exclusiveMaximum", "less than \(exclusiveMaximum)")
            }
        case .string(let text):
            let length = text.unicodeScalars.count
            if let minLength, length < minLength { broken("minLength", "at least \(minLength) characters long") }
            if let maxLength, length > maxLength { broken("maxLength", "at most \(maxLength) characters long") }
        case .array(let elements):
            if let minItems, elements.count < minItems { broken("minItems", "at least \(minItems) elements long") }
            if let maxItems, elements.count > maxItems { broken("maxItems", "at most \(maxItems) elements long") }
            if uniqueItems, Self.repeats(elements) { broken("uniqueItems", "without repeated elements") }
            if let items {
                for (index, element) in elements.enumerated() {
                    items.check(element, at: path + [String(index)], secret: secret, secretRoot: root, into: &found)
                }
            }
        case .object(let members):
            if let minProperties, members.count < minProperties {
                broken("minProperties", "an object of at least \(minProperties) members")
            }
            if let maxProperties, members.count > maxProperties {
                broken("maxProperties", "an object of at most \(maxProperties) members")
            }
            for name in required where Self.exactly(name, in: members) == nil {
                found.append(
                    Self.violation(
                        at: path, root: root, keyword: "required", rule: "an object with \(Self.quoted(name))",
                        value: nil))
            }
            for name in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                // A member's schema may mark it secret (a key's, or a member's at any depth): its check says so.
                let secretMember = secret || marksSecret(name)
                member(name).check(
                    members[name] ?? .null, at: path + [name], secret: secretMember, secretRoot: root, into: &found)
            }
        case .null, .bool:
            break
        }
    }

    /// A broken rule at `path`; inside a secret value (below `root`), at `root`, saying only that it is inside.
    private static func violation(
        at path: [String], root: [String]?, keyword: String, rule: String, value: String?
    ) -> Defaults.Schema.Violation {
        guard let root, path.count > root.count else {
            return Defaults.Schema.Violation(path: path, keyword: keyword, rule: rule, value: value)
        }
        return Defaults.Schema.Violation(
            path: root, keyword: keyword, rule: "\(rule) inside (where is withheld: the value is secret)", value: nil)
    }

    /// Whether a part of `value` (a member or element, at any depth) has a schema here that marks it secret: a
    /// violation of the whole then quotes none of it.
    func holdsSecret(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members):
            return members.contains { name, member in marksSecret(name) || self.member(name).holdsSecret(member) }
        case .array(let elements):
            guard let items else { return false }
            return items.isSecret || elements.contains { items.holdsSecret($0) }
        case .null, .bool, .number, .string:
            return false
        }
    }

    /// The value of the member `name` of `members` when their names are the same Unicode scalars, else `nil`.
    /// (A `[String: …]` looks names up by Swift's `==`, which also matches canonically equivalent names: `"é"` and
    /// `"e\u{301}"`, two names to JSON.)
    static func exactly<Value>(_ name: String, in members: [String: Value]) -> Value? {
        guard let index = members.index(forKey: name),
            members[index].key.unicodeScalars.elementsEqual(name.unicodeScalars)
        else { return nil }
        return members[index].value
    }

    /// Whether two values are equal as JSON Schema counts equality: numbers by value (`1` and `1.0`), strings and
    /// member names by their Unicode scalars (Swift's `==` on `JSONValue` also counts `"é"` and `"e\u{301}"` equal).
    static func same(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let left), .string(let right)):
            return left.unicodeScalars.elementsEqual(right.unicodeScalars)
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        case (.object(let left), .object(let right)):
            return left.count == right.count
                && left.allSatisfy { name, value in exactly(name, in: right).map { same(value, $0) } ?? false }
        default:
            return lhs == rhs
        }
    }

    /// Whether two of `elements` are ``same(_:_:)``. Values that are the same are equal by `==` (which is coarser),
    /// so they hash alike: only those of one hash bucket are compared.
    static func repeats(_ elements: [JSONValue]) -> Bool {
        var seen: [JSONValue: [JSONValue]] = [:]
        for element in elements {
            if seen[element, default: []].contains(where: { same($0, element) }) { return true }
            seen[element, default: []].append(element)
        }
        return false
    }

    /// Where `pointer` is, for messages: `the top level` or the pointer.
    private static func place(_ pointer: String) -> String {
        pointer.isEmpty ? "the top level" : pointer
    }

    /// `name` escaped for a JSON Pointer (RFC 6901: `~` as `~0`, `/` as `~1`).
    static func escaped(_ name: String) -> String {
        var escaped = ""
        for character in name.unicodeScalars {
            switch character {
            case "~": escaped += "~0"
            case "/": escaped += "~1"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// `text` as a JSON string, for messages.
    static func quoted(_ text: String) -> String {
        JSONValue.string(text).description
    }

    /// `value` as compact JSON for a message, cut to 80 characters with `…`.
    static func shown(_ value: JSONValue) -> String {
        let text = value.description
        return text.count <= 80 ? text : String(text.prefix(79)) + "…"
    }

    /// Whether `value` is of the JSON Schema type `type` (`integer`: a number with no fraction).
    private static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (value, type) {
        case (.null, "null"), (.bool, "boolean"), (.number, "number"), (.string, "string"), (.array, "array"),
            (.object, "object"):
            return true
        case (.number(let number), "integer"):
            return number.isWhole
        default:
            return false
        }
    }
}
