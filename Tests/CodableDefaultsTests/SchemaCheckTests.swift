import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The schema `{"properties": {"v": <schema>}}`: `schema` as the schema of the key `v`.
private func keySchema(_ schema: String) throws -> Defaults.Schema {
    try Defaults.Schema(parsing: #"{"properties": {"v": "# + schema + "}}")
}

/// What `schema`, as the key `v`'s, says of `value` as `v`'s value, as descriptions.
private func broken(_ schema: String, _ value: String) throws -> [String] {
    try keySchema(schema).violations(of: JSONValue(parsing: #"{"v": "# + value + "}")).map(\.description)
}

/// The message `json` is refused with as a schema (`nil` when it is read).
private func refusal(_ json: String) -> DefaultsError? {
    do {
        _ = try Defaults.Schema(parsing: json)
        return nil
    } catch {
        return error
    }
}

/// `Defaults.Schema`: the JSON Schema subset it checks, each keyword passing and failing, and what it refuses.
@Suite struct SchemaCheckTests {
    /// For each checked keyword: a schema, values it accepts, and values it refuses with the description of each.
    static let cases: [(schema: String, good: [String], bad: [(String, String)])] = [
        (
            #"{"type": "number"}"#, ["1.5", "-0", "1e400"],
            [(#""x""#, #"/v: "x" must be of type number (schema keyword "type")"#)]
        ),
        (
            #"{"type": ["string", "null"]}"#, ["null", #""a""#],
            [("1", #"/v: 1 must be of type string or null (schema keyword "type")"#)]
        ),
        (
            #"{"type": "integer"}"#, ["1", "1.0", "1e400", "-0", "100e-2", "1.5e1", "-7E+2"],
            [
                ("1.5", #"/v: 1.5 must be of type integer (schema keyword "type")"#),
                ("1e-400", #"/v: 1e-400 must be of type integer (schema keyword "type")"#),
                ("123e-2", #"/v: 123e-2 must be of type integer (schema keyword "type")"#),
                ("true", #"/v: true must be of type integer (schema keyword "type")"#),
            ]
        ),
        (
            #"{"type": "boolean"}"#, ["true", "false"],
            [("0", #"/v: 0 must be of type boolean (schema keyword "type")"#)]
        ),
        (#"{"type": "null"}"#, ["null"], [("false", #"/v: false must be of type null (schema keyword "type")"#)]),
        (#"{"type": "string"}"#, [#""""#], [("[]", #"/v: [] must be of type string (schema keyword "type")"#)]),
        (#"{"type": "array"}"#, ["[]"], [("{}", #"/v: {} must be of type array (schema keyword "type")"#)]),
        (#"{"type": "object"}"#, ["{}"], [("[]", #"/v: [] must be of type object (schema keyword "type")"#)]),
        (
            #"{"enum": ["light", "dark", 1, {"a": [1]}]}"#, [#""dark""#, "1.0", #"{"a": [1e0]}"#],
            [(#""blue""#, #"/v: "blue" must be one of "light", "dark", 1, {"a":[1]} (schema keyword "enum")"#)]
        ),
        (#"{"const": 3}"#, ["3", "3.0", "30e-1"], [("4", #"/v: 4 must be equal to 3 (schema keyword "const")"#)]),
        (
            #"{"minimum": 0}"#, ["0", "-0", #""x""#],
            [("-0.5", #"/v: -0.5 must be at least 0 (schema keyword "minimum")"#)]
        ),
        (#"{"maximum": 1}"#, ["1", "1.0", "0.5"], [("1.5", #"/v: 1.5 must be at most 1 (schema keyword "maximum")"#)]),
        (
            #"{"exclusiveMinimum": 0}"#, ["0.1", "1e-400"],
            [("0", #"/v: 0 must be more than 0 (schema keyword "exclusiveMinimum")"#)]
        ),
        (
            #"{"exclusiveMaximum": 1}"#, ["0.99", "-1e400"],
            [("1.0", #"/v: 1.0 must be less than 1 (schema keyword "exclusiveMaximum")"#)]
        ),
        (
            #"{"minLength": 2}"#, [#""ab""#, #""e\u0301""#, "7"],
            [(#""😀""#, #"/v: "😀" must be at least 2 characters long (schema keyword "minLength")"#)]
        ),
        (
            #"{"maxLength": 1}"#, [#""😀""#, #""""#],
            [(#""ab""#, #"/v: "ab" must be at most 1 characters long (schema keyword "maxLength")"#)]
        ),
        (
            #"{"minItems": 1}"#, ["[1]", "{}"],
            [("[]", #"/v: [] must be at least 1 elements long (schema keyword "minItems")"#)]
        ),
        (
            #"{"maxItems": 1}"#, ["[]", "[1]"],
            [("[1, 2]", #"/v: [1,2] must be at most 1 elements long (schema keyword "maxItems")"#)]
        ),
        (
            #"{"uniqueItems": true}"#, ["[1, 2]", #"[{"a": 1}, {"a": 2}]"#],
            [
                ("[1, 1.0]", #"/v: [1,1.0] must be without repeated elements (schema keyword "uniqueItems")"#),
                (
                    #"[{"a": 1, "b": 2}, {"b": 2, "a": 1}]"#,
                    #"/v: [{"a":1,"b":2},{"a":1,"b":2}] must be without repeated elements (schema keyword "uniqueItems")"#
                ),
            ]
        ),
        (#"{"uniqueItems": false}"#, ["[1, 1]"], []),
        (
            #"{"items": {"type": "integer"}}"#, ["[]", "[1, 2]", "3"],
            [(#"[1, "x"]"#, #"/v/1: "x" must be of type integer (schema keyword "type")"#)]
        ),
        (
            #"{"properties": {"a": {"type": "string"}}}"#, [#"{"a": "x"}"#, #"{"b": 1}"#],
            [(#"{"a": 1}"#, #"/v/a: 1 must be of type string (schema keyword "type")"#)]
        ),
        (
            #"{"required": ["a"]}"#, [#"{"a": null}"#, "[]"],
            [(#"{"b": 1}"#, #"/v: must be an object with "a" (schema keyword "required")"#)]
        ),
        (
            #"{"properties": {"a": {}}, "additionalProperties": false}"#, [#"{"a": 1}"#, "{}"],
            [
                (
                    #"{"a": 1, "b": 2}"#,
                    #"/v/b: 2 must be absent (the schema allows nothing here) (schema keyword "false")"#
                )
            ]
        ),
        (
            #"{"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}"#,
            [#"{"a": "x", "b": 2}"#],
            [(#"{"b": "x"}"#, #"/v/b: "x" must be of type integer (schema keyword "type")"#)]
        ),
        (#"{"additionalProperties": true}"#, [#"{"b": "x"}"#], []),
        (
            #"{"minProperties": 1}"#, [#"{"a": 1}"#, "[]"],
            [("{}", #"/v: {} must be an object of at least 1 members (schema keyword "minProperties")"#)]
        ),
        (
            #"{"maxProperties": 1}"#, [#"{"a": 1}"#],
            [
                (
                    #"{"a": 1, "b": 2}"#,
                    #"/v: {"a":1,"b":2} must be an object of at most 1 members (schema keyword "maxProperties")"#
                )
            ]
        ),
        ("true", ["1", "null", "{}"], []),
        (
            "false", [],
            [("null", #"/v: null must be absent (the schema allows nothing here) (schema keyword "false")"#)]
        ),
    ]

    @Test func everyCheckedKeywordAcceptsAValueAndRefusesAnother() throws {
        var keywords: Set<String> = []
        for (schema, good, bad) in Self.cases {
            for value in good {
                #expect(try broken(schema, value) == [], "\(schema) should accept \(value)")
            }
            for (value, description) in bad {
                #expect(try broken(schema, value) == [description], "\(schema) against \(value)")
            }
            guard case .object(let members) = try JSONValue(parsing: schema) else { continue }
            keywords.formUnion(members.keys)
        }
        #expect(keywords.isSuperset(of: Defaults.Schema.checkedKeywords), "\(keywords)")
    }

    @Test func aViolationSaysWhereWhichKeywordAndTheRule() throws {
        let schema = try Defaults.Schema(parsing: #"{"properties": {"volume": {"type": "number", "maximum": 1}}}"#)
        let found = schema.violations(of: ["volume": 1.5])
        #expect(found == [.init(path: ["volume"], keyword: "maximum", rule: "at most 1", value: "1.5")])
        #expect(found.first?.key == "volume" && found.first?.pointer == "/volume")
        #expect(found.map(\.description) == [#"/volume: 1.5 must be at most 1 (schema keyword "maximum")"#])
        // The top level: its pointer is empty, its place "(top level)".
        let top = try Defaults.Schema(parsing: #"{"type": "object", "required": ["a"]}"#)
        #expect(
            top.violations(of: [:]).map(\.description) == [
                #"(top level): must be an object with "a" (schema keyword "required")"#
            ])
        #expect(top.violations(of: [:]).first?.key == nil && top.violations(of: [:]).first?.pointer == "")
        #expect(
            top.violations(of: [1]).map(\.description) == [
                #"(top level): [1] must be of type object (schema keyword "type")"#
            ])
    }

    @Test func aLongValueIsCutTo80Characters() throws {
        let long = String(repeating: "a", count: 100)
        let found = try keySchema(#"{"maxLength": 3}"#).violations(of: ["v": .string(long)])
        #expect(found.first?.value == "\"" + String(repeating: "a", count: 78) + "…")
    }

    @Test func numbersAreComparedExactly() throws {
        #expect(
            try broken(#"{"maximum": 0.1}"#, "0.10000000000000000001") == [
                #"/v: 0.10000000000000000001 must be at most 0.1 (schema keyword "maximum")"#
            ])
        #expect(try broken(#"{"maximum": 0.1}"#, "0.1000") == [])
        #expect(
            try broken(#"{"minimum": 0.10000000000000000001}"#, "0.1") == [
                #"/v: 0.1 must be at least 0.10000000000000000001 (schema keyword "minimum")"#
            ])
        #expect(try broken(#"{"exclusiveMaximum": 0.1}"#, "1e-1") != [])
        #expect(try broken(#"{"exclusiveMaximum": 0.1}"#, "0.09999999999999999999") == [])
        // Beyond Double: 9007199254740993 is not 9007199254740992, and 1e400 is more than 9e399.
        #expect(try broken(#"{"maximum": 9007199254740992}"#, "9007199254740993") != [])
        #expect(try broken(#"{"maximum": 123456789012345678901234567890}"#, "123456789012345678901234567891") != [])
        #expect(try broken(#"{"maximum": 123456789012345678901234567890}"#, "123456789012345678901234567889") == [])
        #expect(try broken(#"{"minimum": 1e400}"#, "9e399") != [])
        #expect(try broken(#"{"minimum": 1e400}"#, "10e399") == [])
        #expect(try broken(#"{"maximum": -1e400}"#, "-1e401") == [])
        #expect(try broken(#"{"maximum": -1e400}"#, "-1e399") != [])
        #expect(try broken(#"{"minimum": 1e-400}"#, "0") != [])
        #expect(try broken(#"{"exclusiveMinimum": -1e-400}"#, "-0") == [])
        #expect(try broken(#"{"enum": [1e400]}"#, "10e399") == [])
    }

    @Test func numbersWithExponentsBeyondIntAreComparedExactly() throws {
        // Exponents an `Int` cannot hold: neither a crash nor a comparison through `Double` (both infinite).
        #expect(try broken(#"{"maximum": 1e99999999999999999999}"#, "2e99999999999999999999") != [])
        #expect(try broken(#"{"maximum": 2e99999999999999999999}"#, "1e99999999999999999999") == [])
        #expect(try broken(#"{"minimum": 1e-99999999999999999999}"#, "2e-99999999999999999999") == [])
        #expect(try broken(#"{"minimum": 1e-99999999999999999999}"#, "1e-99999999999999999998") == [])
        #expect(try broken(#"{"minimum": 1e-99999999999999999999}"#, "1e-100000000000000000000") != [])
        #expect(try broken(#"{"maximum": 1e400}"#, "1e99999999999999999999") != [])
        #expect(try broken(#"{"maximum": 1e9223372036854775807}"#, "1e9223372036854775806") == [])
        #expect(try broken(#"{"maximum": 1e9223372036854775806}"#, "1e9223372036854775807") != [])
        #expect(try broken(#"{"maximum": 1e-9223372036854775808}"#, "1e-9223372036854775807") != [])
        #expect(try broken(#"{"type": "integer"}"#, "1e9223372036854775807") == [])
        #expect(try broken(#"{"type": "integer"}"#, "1e-9223372036854775808") != [])
    }

    @Test func aCountTooLargeForIntIsReadAsBeyondEveryCountNotACrash() throws {
        #expect(refusal(#"{"maxLength": 1e9223372036854775807}"#) == nil)
        #expect(try broken(#"{"maxLength": 1e9223372036854775807}"#, #""abc""#).isEmpty)
        #expect(try broken(#"{"minLength": 1e9223372036854775807}"#, #""abc""#).count == 1)
        let huge = try JSONNumber(parsing: "1e9223372036854775807")
        #expect(huge.intValue == nil && huge.int64Value == nil && huge.uint64Value == nil)
    }

    @Test func lengthsCountUnicodeScalars() throws {
        // "é" decomposed is one Character but two scalars; "👍🏽" is one Character, two scalars.
        #expect(try broken(#"{"maxLength": 1}"#, #""e\u0301""#) != [])
        #expect(try broken(#"{"minLength": 2, "maxLength": 2}"#, #""👍🏽""#) == [])
        #expect(try broken(#"{"maxLength": 1}"#, #""\u00e9""#) == [])
        #expect(try broken(#"{"maxLength": 1}"#, #""\ud83d\ude00""#) == [])
    }

    @Test func stringsAndNamesAreComparedByTheirUnicodeScalars() throws {
        // "\u{E9}" and "e\u{301}" are one string to Swift's `==`, two to JSON (and to every JSON Schema validator).
        let (composed, decomposed) = ("\u{E9}", "e\u{301}")
        #expect(try broken(#"{"enum": ["\u00e9"]}"#, #""e\u0301""#).map { $0.contains("enum") } == [true])
        #expect(try broken(#"{"const": "\u00c5"}"#, #""\u212b""#).count == 1)
        #expect(try broken(#"{"const": {"\u00e9": 1}}"#, #"{"e\u0301": 1}"#).count == 1)
        #expect(try broken(#"{"const": {"\u00e9": 1}}"#, #"{"\u00e9": 1.0}"#) == [])
        #expect(try broken(#"{"uniqueItems": true}"#, #"["\u00e9", "e\u0301"]"#) == [])
        #expect(try broken(#"{"uniqueItems": true}"#, #"[["\u00e9"], ["\u00e9"]]"#).count == 1)
        let schema = try Defaults.Schema(
            parsing: #"{"properties": {"\u00e9": {"type": "integer"}}, "required": ["\u00e9"]}"#)
        #expect(
            schema.violations(of: [decomposed: "x"]).map(\.description) == [
                #"(top level): must be an object with "\#(composed)" (schema keyword "required")"#
            ])
        #expect(schema.violations(of: [composed: "x"]).map(\.keyword) == ["type"])
        #expect(schema.lists(composed) && !schema.lists(decomposed))
        #expect(schema.violations(of: "x", forKey: decomposed) == [])
        #expect(
            schema.violations(of: nil, forKey: decomposed) == []
                && schema.violations(of: nil, forKey: composed).count == 1)
        // A name that matches a secret key's only up to normalization is still kept secret.
        let secret = try Defaults.Schema(
            parsing: #"{"properties": {"\u00e9": {"x-secret": true}}, "additionalProperties": {"type": "integer"}}"#)
        #expect(secret.violations(of: [decomposed: "swordfish"]).map(\.value) == [nil])
        #expect(secret.violations(of: "swordfish", forKey: decomposed).map(\.value) == [nil])
    }

    /// A rule broken inside a secret value is reported at the secret key, its place inside withheld: no member
    /// name or element index of the value appears in the violation.
    @Test func aRuleBrokenInsideASecretValueNamesOnlyTheSecretKey() throws {
        let schema = try Defaults.Schema(
            parsing: #"""
                {"properties": {"tok": {"x-secret": true, "type": "object", "additionalProperties": false,
                "properties": {"items": {"items": {"type": "integer"}}}}}}
                """#)
        let value: JSONValue = ["LEAKNAME": "LEAKVALUE", "items": [1, "LEAKELEMENT"]]
        for violations in [schema.violations(of: ["tok": value]), schema.violations(of: value, forKey: "tok")] {
            #expect(violations.count == 2, "\(violations)")
            for violation in violations {
                #expect(violation.path == ["tok"], "\(violation)")
                #expect(!violation.description.contains("LEAK"), "\(violation)")
                #expect(violation.description.contains("inside"), "\(violation)")
            }
        }
        // "x-secret" other than true marks it secret too.
        let marked = try Defaults.Schema(parsing: #"{"properties": {"tok": {"x-secret": "yes", "maxLength": 2}}}"#)
        #expect(marked.isSecret("tok") && marked.secretKeyNames == ["tok"])
        #expect(marked.violations(of: "LEAKVALUE", forKey: "tok").map(\.value) == [nil])
    }

    @Test func nestedPathsAndPointersEscapeTildeAndSlash() throws {
        let schema = try Defaults.Schema(
            parsing: #"""
                {"properties": {"a/b": {"properties": {"c~d": {"items": {"properties": {"": {"type": "string"}}}}}}}}
                """#)
        let found = schema.violations(of: try JSONValue(parsing: #"{"a/b": {"c~d": [{"": "x"}, {"": 1}]}}"#))
        #expect(found.map(\.path) == [["a/b", "c~d", "1", ""]])
        #expect(found.map(\.pointer) == ["/a~1b/c~0d/1/"])
        #expect(found.map(\.description) == [#"/a~1b/c~0d/1/: 1 must be of type string (schema keyword "type")"#])
        #expect(Defaults.Schema.Violation(path: ["~1", "/0"], keyword: "type", rule: "r").pointer == "/~01/~10")
    }

    @Test func violationsAreInTheOrderOfTheMembersNames() throws {
        let schema = try Defaults.Schema(parsing: #"{"additionalProperties": {"type": "string"}}"#)
        let found = schema.violations(of: ["b": 1, "a": 2, "Z": 3, "é": 4])
        #expect(found.map(\.path) == [["Z"], ["a"], ["b"], ["é"]])
    }

    @Test func severalRulesOfOneValueAreEachReported() throws {
        #expect(
            try broken(#"{"type": "integer", "minimum": 5, "enum": [7, 9]}"#, "3")
                == [
                    #"/v: 3 must be one of 7, 9 (schema keyword "enum")"#,
                    #"/v: 3 must be at least 5 (schema keyword "minimum")"#,
                ])
        // A value of the wrong type is reported once, by `type`.
        #expect(try broken(#"{"type": "integer", "minimum": 5, "enum": [7]}"#, #""x""#).count == 1)
    }

    @Test func requiredAndAdditionalPropertiesAtTheTopLevel() throws {
        let schema = try Defaults.Schema(
            parsing:
                #"{"properties": {"a": {"type": "integer"}}, "required": ["a", "b"], "additionalProperties": false}"#)
        #expect(
            schema.violations(of: ["a": 1, "b": 2]).map(\.description) == [
                #"/b: 2 must be absent (the schema allows nothing here) (schema keyword "false")"#
            ])
        #expect(
            schema.violations(of: ["c": 1]).map(\.description) == [
                #"(top level): must be an object with "a" (schema keyword "required")"#,
                #"(top level): must be an object with "b" (schema keyword "required")"#,
                #"/c: 1 must be absent (the schema allows nothing here) (schema keyword "false")"#,
            ])
        #expect(schema.lists("a") && !schema.lists("b") && schema.keyNames == ["a"])
    }

    @Test func booleanSchemas() throws {
        let all = try Defaults.Schema(parsing: "true")
        #expect(all.violations(of: ["a": [1, "x"]]) == [] && all.violations(of: 5, forKey: "a") == [])
        let none = try Defaults.Schema(parsing: "false")
        #expect(
            none.violations(of: [:]).map(\.description) == [
                #"(top level): {} must be absent (the schema allows nothing here) (schema keyword "false")"#
            ])
        #expect(
            none.violations(of: 5, forKey: "a").map(\.description) == [
                #"/a: must be absent (the schema allows nothing) (schema keyword "false")"#
            ])
        #expect(none.violations(of: nil, forKey: "a") == [])
        #expect(all.keyNames == [] && all.title == nil && all.property(named: "a") == nil)
    }

    @Test func aSecretKeysValueIsNeverQuoted() throws {
        let schema = try Defaults.Schema(
            parsing: #"""
                {"properties": {"token": {"type": "string", "minLength": 12, "enum": ["hunter2hunter2"], "x-secret": true},
                 "profile": {"properties": {"pin": {"type": "integer", "x-secret": true}}}},
                 "maxProperties": 1}
                """#)
        #expect(schema.isSecret("token") && !schema.isSecret("profile") && !schema.isSecret("none"))
        let document: JSONValue = ["token": "swordfish", "profile": ["pin": "swordfish"]]
        let found = schema.violations(of: document)
        #expect(found.count == 4, "\(found)")
        for violation in found {
            #expect(!violation.description.contains("swordfish"), "\(violation)")
            #expect(!violation.description.contains("hunter2"), "\(violation)")
        }
        #expect(found.filter { $0.key == "token" }.allSatisfy { $0.value == nil })
        #expect(found.contains { $0.description == #"/token: must be one of … (schema keyword "enum")"# })
        let one = schema.violations(of: "swordfish", forKey: "token")
        #expect(
            one.map(\.description) == [
                #"/token: must be one of … (schema keyword "enum")"#,
                #"/token: must be at least 12 characters long (schema keyword "minLength")"#,
            ])
        // The whole document holds a secret, so the top level's violation quotes none of it; one holding none is
        // quoted.
        #expect(
            found.first?.description
                == #"(top level): must be an object of at most 1 members (schema keyword "maxProperties")"#)
        #expect(schema.violations(of: ["a": 1, "b": 2]).first?.value == #"{"a":1,"b":2}"#)
        // A secret in an array, and under `additionalProperties`.
        let nested = try Defaults.Schema(
            parsing: #"{"additionalProperties": {"items": {"type": "integer", "x-secret": true}}, "minProperties": 3}"#)
        for violation in nested.violations(of: ["pins": ["swordfish"]]) {
            #expect(!violation.description.contains("swordfish"), "\(violation)")
        }
        for violation in nested.violations(of: ["swordfish"], forKey: "pins") {
            #expect(!violation.description.contains("swordfish"), "\(violation)")
        }
    }

    @Test func aKeysValueAloneAndItsRemoval() throws {
        let schema = try Defaults.Schema(
            parsing: #"""
                {"properties": {"a": {"type": "integer"}, "b": {}}, "required": ["a"],
                 "additionalProperties": {"type": "string"}}
                """#)
        #expect(
            schema.violations(of: nil, forKey: "a") == [
                .init(path: ["a"], keyword: "required", rule: "present (the schema requires it)")
            ])
        #expect(
            schema.violations(of: nil, forKey: "a").map(\.description) == [
                #"/a: must be present (the schema requires it) (schema keyword "required")"#
            ])
        #expect(schema.violations(of: nil, forKey: "b") == [] && schema.violations(of: nil, forKey: "c") == [])
        #expect(schema.violations(of: 1, forKey: "a") == [] && schema.violations(of: "x", forKey: "c") == [])
        #expect(
            schema.violations(of: 1.5, forKey: "a").map(\.description) == [
                #"/a: 1.5 must be of type integer (schema keyword "type")"#
            ])
        #expect(
            schema.violations(of: 1, forKey: "c").map(\.description) == [
                #"/c: 1 must be of type string (schema keyword "type")"#
            ])
    }

    @Test func unsupportedKeywordsAreRefusedByNameAndPlace() throws {
        let refused: [(String, [String])] = [
            (#"{"pattern": "^a"}"#, [#""pattern""#, "the top level"]),
            (##"{"properties": {"a": {"$ref": "#/$defs/x"}}}"##, [#""$ref""#, "/properties/a"]),
            (#"{"properties": {"a/b~": {"oneOf": [true]}}}"#, [#""oneOf""#, "/properties/a~1b~0"]),
            (#"{"items": {"items": {"multipleOf": 2}}}"#, [#""multipleOf""#, "/items/items"]),
            (
                #"{"additionalProperties": {"patternProperties": {}}}"#,
                [#""patternProperties""#, "/additionalProperties"]
            ),
            (#"{"$defs": {}}"#, [#""$defs""#]),
            (#"{"if": true}"#, [#""if""#]),
            (#"{"items": [{"type": "string"}]}"#, [#""items""#, "one schema"]),
            (#"{"properties": {"a": {"items": [true]}}}"#, [#""items""#, "/properties/a"]),
        ]
        for (schema, words) in refused {
            let error = try #require(refusal(schema), "\(schema) was read")
            #expect(error.code == .invalidArgument)
            for word in words { #expect(error.message.contains(word), "\(error.message) lacks \(word)") }
        }
        let message = refusal(#"{"pattern": "^a"}"#)?.message ?? ""
        #expect(message.contains("supported: " + Defaults.Schema.checkedKeywords.joined(separator: ", ")))
    }

    @Test func keywordValuesOfTheWrongKindAreRefused() throws {
        let refused: [(String, String)] = [
            (#"{"minimum": "1"}"#, #""minimum" at the top level must be a number"#),
            (#"{"exclusiveMaximum": true}"#, #""exclusiveMaximum" at the top level must be a number"#),
            (#"{"minLength": -1}"#, #""minLength" at the top level must be a whole number of at least 0"#),
            (#"{"maxItems": 1.5}"#, #""maxItems" at the top level must be a whole number of at least 0"#),
            (#"{"minProperties": "1"}"#, #""minProperties" at the top level must be a whole number"#),
            (#"{"type": "float"}"#, #"not "float""#),
            (#"{"type": [1]}"#, #""type" at the top level must be a type name or a list of them"#),
            (#"{"type": {}}"#, #""type" at the top level must be a type name"#),
            (#"{"enum": 1}"#, #""enum" at the top level must be an array"#),
            (#"{"type": []}"#, #""type" at the top level must be a type name or a non-empty list of distinct ones"#),
            (#"{"type": ["string", "string"]}"#, "a non-empty list of distinct ones"),
            (#"{"required": ["a", "a"]}"#, #""required" at the top level must be a list of distinct names"#),
            (#"{"minLength": -1e20}"#, "a whole number of at least 0"),
            (#"{"required": "a"}"#, #""required" at the top level must be a list of names"#),
            (#"{"required": [1]}"#, #""required" at the top level must be a list of names"#),
            (#"{"uniqueItems": 1}"#, #""uniqueItems" at the top level must be true or false"#),
            (#"{"properties": []}"#, #""properties" at the top level must be an object"#),
            (#"{"properties": {"a": 1}}"#, "the schema at /properties/a is 1, not an object, true or false"),
            (#"{"additionalProperties": null}"#, "the schema at /additionalProperties is null"),
            (#"{"items": "x"}"#, #"the schema at /items is "x""#),
            ("[]", "the schema at the top level is [], not an object, true or false"),
        ]
        for (schema, words) in refused {
            let error = try #require(refusal(schema), "\(schema) was read")
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(words), "\(error.message) lacks \(words)")
        }
        // A count written with a zero fraction is a whole number.
        #expect(try broken(#"{"minLength": 2.0}"#, #""a""#).count == 1)
        // Valid 2020-12 the checker reads: counts beyond Int64, enum with const (both apply).
        #expect(try broken(#"{"maxLength": 1e20}"#, #""abc""#).isEmpty)
        #expect(try broken(#"{"minLength": 1e20}"#, #""abc""#).count == 1)
        #expect(try broken(#"{"minItems": 100000000000000000000}"#, "[1]").map { $0.contains("minItems") } == [true])
        #expect(try broken(#"{"enum": [1, 2], "const": 1}"#, "1").isEmpty)
        #expect(try broken(#"{"enum": [1, 2], "const": 1}"#, "2").map { $0.contains(#""const""#) } == [true])
        #expect(try broken(#"{"enum": [2], "const": 1}"#, "1").count == 1, "together they allow nothing")
    }

    @Test func annotationsAndExtensionKeywordsAreIgnored() throws {
        let schema = try Defaults.Schema(
            parsing: #"""
                {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/s",
                 "$comment": "c", "title": "T", "description": "d", "x-anything": {"pattern": 1},
                 "properties": {"a": {"$anchor": "a", "default": "not a number", "examples": [[]], "deprecated": true,
                  "readOnly": true, "writeOnly": false, "format": "email", "contentEncoding": "base64",
                  "contentMediaType": "text/plain", "x-rules": ["an even number"], "type": "number"},
                  "b": {"format": "email"}}}
                """#)
        #expect(schema.title == "T" && schema.keyNames == ["a", "b"])
        #expect(schema.violations(of: ["a": 2, "b": "not an address"]) == [])
        #expect(schema.violations(of: ["a": "x"]).map(\.keyword) == ["type"])
        #expect(Set(Defaults.Schema.ignoredKeywords).isDisjoint(with: Defaults.Schema.checkedKeywords))
    }

    @Test func readingAFile() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.file("none.schema.json")
        let error = #expect(throws: DefaultsError.self) { try Defaults.Schema(contentsOf: missing) }
        #expect(error?.code == .readFailed && error?.errno == ENOENT && error?.path == missing.path)

        let broken = directory.file("broken.schema.json")
        try write("{\n  \"type\": \"object\",\n  \"properties\": ,\n}\n", to: broken)
        let invalid = #expect(throws: DefaultsError.self) { try Defaults.Schema(contentsOf: broken) }
        #expect(invalid?.code == .invalidJSON && invalid?.path == broken.path)
        #expect(invalid?.line == 3 && invalid?.column == 17, "\(String(describing: invalid))")

        let unsupported = directory.file("unsupported.schema.json")
        try write(#"{"properties": {"a": {"pattern": "x"}}}"#, to: unsupported)
        let refused = #expect(throws: DefaultsError.self) { try Defaults.Schema(contentsOf: unsupported) }
        #expect(refused?.code == .invalidArgument && refused?.path == unsupported.path)
        #expect(refused?.message.contains("/properties/a") == true)

        let good = directory.file("good.schema.json")
        try write(#"{"title": "Good", "properties": {"a": {"type": "integer"}}}"#, to: good)
        let schema = try Defaults.Schema(contentsOf: good)
        #expect(schema.title == "Good" && schema.violations(of: ["a": 1.5]).count == 1)

        #expect(throws: DefaultsError.self) { try Defaults.Schema(parsing: "{") }
    }

    @Test func theGeneratedSchemaIsReadBackAndAcceptsAFileOfTheDefaults() throws {
        let generated = try Defaults.schema(for: SchemaKeys.keys, title: "Demo")
        let schema = try Defaults.Schema(generated)
        #expect(schema.json == generated && schema.title == "Demo")
        #expect(try Defaults.Schema(for: SchemaKeys.keys, title: "Demo").json == generated)
        #expect(schema.keyNames == SchemaKeys.keys.map(\.name).sorted())
        #expect(schema.isSecret("token") && !schema.isSecret("volume"))

        // The defaults as the schema states them, and a file the library writes with each key at its default.
        var defaults: [String: JSONValue] = [:]
        for name in schema.keyNames {
            if case .object(let property)? = schema.property(named: name), let value = property["default"] {
                defaults[name] = value
            }
        }
        #expect(defaults.count == 6)
        #expect(schema.violations(of: .object(defaults)) == [])
        let directory = try TemporaryDirectory()
        let store = try Defaults(url: directory.file(), saveMode: .manual)
        for key in SchemaKeys.keys {
            if let key = key as? Defaults.Key<Double> { try store.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<Int> { try store.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<[String]> { try store.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<SchemaKeys.Theme> { try store.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<Profile> { try store.set(key.defaultValue, for: key) }
            if let key = key as? Defaults.Key<String?> { try store.set("a value", for: key) }
        }
        try store.save()
        let file = try JSONValue(parsing: try text(directory.file()))
        guard case .object(let members) = file else { throw DefaultsError(.invalidJSON, "not an object") }
        #expect(members.count == 8)
        #expect(schema.violations(of: file) == [])
        for (name, value) in members { #expect(schema.violations(of: value, forKey: name) == []) }

        // And what its keys refuse, it refuses.
        let bad: JSONValue = [
            "volume": 1.5, "retries": 11, "nickname": "", "tags": ["a", "b", "c"], "theme": "blue", "even": 1.5,
            "token": 12, "profile": "Ana",
        ]
        #expect(
            schema.violations(of: bad).map(\.description) == [
                #"/even: 1.5 must be of type integer (schema keyword "type")"#,
                #"/nickname: "" must be at least 1 characters long (schema keyword "minLength")"#,
                #"/profile: "Ana" must be of type object (schema keyword "type")"#,
                #"/retries: 11 must be at most 10 (schema keyword "maximum")"#,
                #"/tags: ["a","b","c"] must be at most 2 elements long (schema keyword "maxItems")"#,
                #"/theme: "blue" must be one of "light", "dark" (schema keyword "enum")"#,
                #"/token: must be of type string (schema keyword "type")"#,
                #"/volume: 1.5 must be at most 1 (schema keyword "maximum")"#,
            ])
    }
}

/// `publishSchema(for:title:)` and `publishedSchema()` on a file store and an in-memory one.
@Suite struct SchemaPublishingTests {
    @Test func aFileStoreKeepsItsSchemaBesideItsFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        let defaults = try Defaults(url: url, saveMode: .manual)
        let schemaURL = Defaults.schemaURL(forStoreAt: url)
        #expect(defaults.schemaLocation == schemaURL.path)
        #expect(try defaults.publishedSchema() == nil)
        #expect(!FileManager.default.fileExists(atPath: schemaURL.path))

        try defaults.publishSchema(for: SchemaKeys.keys, title: "One")
        let expected = Defaults.pretty(try Defaults.schema(for: SchemaKeys.keys, title: "One"), indent: "") + "\n"
        #expect(try text(schemaURL) == expected)
        #expect(try text(schemaURL).hasPrefix("{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n"))
        // The same bytes writeSchema writes.
        try Defaults.writeSchema(for: SchemaKeys.keys, title: "One", to: directory.file("other.json"))
        #expect(try bytes(directory.file("other.json")) == bytes(schemaURL))
        let published = try #require(try defaults.publishedSchema())
        #expect(published.json == (try Defaults.schema(for: SchemaKeys.keys, title: "One")) && published.title == "One")
        // Another handle on the file finds it; the store file itself holds no trace of it.
        let other = try Defaults(url: url, saveMode: .manual)
        #expect(try other.publishedSchema()?.title == "One")
        #expect(other.keys == [])

        // A second publish replaces it.
        try defaults.publishSchema(for: [Defaults.Key<Int>("only", default: 1)], title: "Two")
        #expect(try other.publishedSchema()?.keyNames == ["only"])
        #expect(try text(schemaURL).hasSuffix("\"title\": \"Two\",\n  \"type\": \"object\"\n}\n"))
        #expect(try directory.contents().sorted() == ["other.json", "settings.schema.json"], "no temporary left")
    }

    @Test func publishingBeforeTheFirstSaveMakesTheStoresDirectory() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("new").appendingPathComponent("settings.json")
        let defaults = try Defaults(url: url, saveMode: .manual)
        try defaults.publishSchema(for: SchemaKeys.keys)
        #expect(try defaults.publishedSchema()?.keyNames.contains("volume") == true)
        #expect(FileManager.default.fileExists(atPath: Defaults.schemaURL(forStoreAt: url).path))
    }

    @Test func aCorruptOrUnsupportedSchemaFileIsReportedWithItsPath() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.json")
        let defaults = try Defaults(url: url, saveMode: .manual)
        let schemaURL = Defaults.schemaURL(forStoreAt: url)
        try write("{\n  \"type\": \"object\"\n  \"title\": \"x\"\n}\n", to: schemaURL)
        let invalid = #expect(throws: DefaultsError.self) { try defaults.publishedSchema() }
        #expect(invalid?.code == .invalidJSON && invalid?.path == schemaURL.path)
        #expect(invalid?.line == 3 && invalid?.column == 3, "\(String(describing: invalid))")

        try write(#"{"oneOf": []}"#, to: schemaURL)
        let unsupported = #expect(throws: DefaultsError.self) { try defaults.publishedSchema() }
        #expect(unsupported?.code == .invalidArgument && unsupported?.path == schemaURL.path)
        #expect(unsupported?.message.contains(#""oneOf""#) == true)

        // An operator's own schema, in the subset, is read as it is.
        try write(#"{"properties": {"a": {"maximum": 1}}}"#, to: schemaURL)
        #expect(try defaults.publishedSchema()?.violations(of: ["a": 2]).count == 1)
    }

    @Test func anInMemoryStoreKeepsItInMemory() throws {
        let defaults = Defaults.inMemory()
        #expect(defaults.schemaLocation == "memory")
        #expect(try defaults.publishedSchema() == nil)
        try defaults.publishSchema(for: SchemaKeys.keys)
        #expect(try defaults.publishedSchema()?.json == (try Defaults.schema(for: SchemaKeys.keys)))
        #expect(try defaults.publishedSchema()?.title == nil)
        try defaults.publishSchema(for: [], title: "Empty")
        #expect(try defaults.publishedSchema()?.keyNames == [] && defaults.keys == [])
        #expect(try Defaults.inMemory().publishedSchema() == nil, "each in-memory store has its own")
    }
}
