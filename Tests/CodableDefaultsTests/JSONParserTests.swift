import CodableDefaultsTestSupport
import Testing

@testable import CodableDefaults

/// Tests of the store file parser, value compactor and writer.
@Suite struct JSONParserTests {
    // MARK: Helpers

    /// The UTF-8 bytes of `text`.
    func bytes(_ text: String) -> [UInt8] {
        Array(text.utf8)
    }

    /// Parses `text` and returns the members as (key, value text) pairs.
    func members(_ text: String, maxDepth: Int = 512) throws -> [Pair] {
        try parseAndIndex(bytes(text), maxDepth: maxDepth).map {
            Pair($0.key, String(decoding: $0.value, as: UTF8.self))
        }
    }

    /// The error thrown when parsing `input` as a store file, or nil if it parses.
    func parseError(_ input: [UInt8], maxDepth: Int = 512) -> JSONParseError? {
        do {
            _ = try parseAndIndex(input, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    /// The error thrown when compacting `input` as a single value, or nil if it is valid.
    func valueError(_ input: [UInt8], maxDepth: Int = 512) -> JSONParseError? {
        do {
            _ = try JSONParser.compactValue(input, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    /// Expects parsing `input` to fail with `kind` at the given line and column (and offset and key when given).
    func expectFailure(
        _ input: [UInt8], _ kind: JSONParseError.Kind, line: Int, column: Int, offset: Int? = nil, key: String? = nil,
        maxDepth: Int = 512, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error = parseError(input, maxDepth: maxDepth) else {
            Issue.record("expected \(kind), but the input parsed", sourceLocation: sourceLocation)
            return
        }
        #expect(error.kind == kind, "\(error.message)", sourceLocation: sourceLocation)
        #expect(error.line == line, "\(error.message)", sourceLocation: sourceLocation)
        #expect(error.column == column, "\(error.message)", sourceLocation: sourceLocation)
        if let offset {
            #expect(error.offset == offset, "\(error.message)", sourceLocation: sourceLocation)
        }
        #expect(error.key == key, "\(error.message)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    }

    /// Expects parsing `text` to fail with `kind` at the given line and column (and offset and key when given).
    func expectFailure(
        _ text: String, _ kind: JSONParseError.Kind, line: Int, column: Int, offset: Int? = nil, key: String? = nil,
        maxDepth: Int = 512, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectFailure(
            bytes(text), kind, line: line, column: column, offset: offset, key: key, maxDepth: maxDepth,
            sourceLocation: sourceLocation)
    }

    /// Expects the store file `{"k": <value>}` to fail with `kind`.
    func expectValueFailure(
        _ value: [UInt8], _ kind: JSONParseError.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = parseError(bytes("{\"k\": ") + value + bytes("}"))
        #expect(error?.kind == kind, "\(error?.message ?? "parsed")", sourceLocation: sourceLocation)
    }

    /// Expects the store file `{"k": <value>}` to fail with `kind`.
    func expectValueFailure(
        _ value: String, _ kind: JSONParseError.Kind, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectValueFailure(bytes(value), kind, sourceLocation: sourceLocation)
    }

    /// A member as text, for readable comparisons.
    struct Pair: Equatable, CustomStringConvertible {
        /// The decoded key.
        var key: String
        /// The compact value as text.
        var value: String

        /// Creates a pair.
        init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }

        /// `key=value`.
        var description: String { "\(key)=\(value)" }
    }

    // MARK: Valid files

    @Test func emptyObject() throws {
        #expect(try members("{}").isEmpty)
        #expect(try members(" \n\t{ \r\n } \n").isEmpty)
        #expect(try members("{}\n").isEmpty)
    }

    @Test func allScalarKinds() throws {
        let text = """
            {
              "string": "text",
              "int": 42,
              "negative": -7,
              "zero": 0,
              "negativeZero": -0,
              "fraction": 3.25,
              "exponent": 1.5e+10,
              "upperExponent": -2E-3,
              "plainExponent": 6e7,
              "true": true,
              "false": false,
              "null": null,
              "emptyString": "",
              "emptyArray": [],
              "emptyObject": {}
            }
            """
        #expect(
            try members(text) == [
                Pair("string", "\"text\""), Pair("int", "42"), Pair("negative", "-7"), Pair("zero", "0"),
                Pair("negativeZero", "-0"), Pair("fraction", "3.25"), Pair("exponent", "1.5e+10"),
                Pair("upperExponent", "-2E-3"), Pair("plainExponent", "6e7"), Pair("true", "true"),
                Pair("false", "false"), Pair("null", "null"), Pair("emptyString", "\"\""), Pair("emptyArray", "[]"),
                Pair("emptyObject", "{}"),
            ])
    }

    @Test func nestedValuesAreCompactedButOtherwiseKept() throws {
        let text = """
            {
              "window" : {
                "z" : 1 ,
                "a" : [ 1.50 , "x  y" , "\\" , ]" , { } , [ ] , "\\u0041\\/" ],
                "m" : { "n" : null }
              },
              "list": [ true,false ,null ]
            }
            """
        #expect(
            try members(text) == [
                Pair("window", #"{"z":1,"a":[1.50,"x  y","\" , ]",{},[],"\u0041\/"],"m":{"n":null}}"#),
                Pair("list", "[true,false,null]"),
            ])
    }

    @Test func compactValuesAreCopiedAsIs() throws {
        let value = #"{"b":[1,2,{"c":"d e"}],"a":"\u00e9\n"}"#
        #expect(try members(#"{"k":"# + value + "}") == [Pair("k", value)])
    }

    @Test func whitespaceInsideStringsIsKept() throws {
        #expect(
            try members("{\"k\": [\" a \\t b \", \"\\\\\", \" \"]}") == [Pair("k", "[\" a \\t b \",\"\\\\\",\" \"]")])
    }

    @Test func membersKeepFileOrder() throws {
        #expect(try members(#"{"b": 1, "a": 2, "c": 3}"#).map(\.key) == ["b", "a", "c"])
    }

    @Test func unicodeKeysAndValues() throws {
        let text = "{\"ключ\": \"значение\", \"😀\": \"🎉\", \"é\": 1, \"\u{7F}\": 2, \"\u{FEFF}\": 3}"
        #expect(
            try members(text) == [
                Pair("ключ", "\"значение\""), Pair("😀", "\"🎉\""), Pair("é", "1"), Pair("\u{7F}", "2"),
                Pair("\u{FEFF}", "3"),
            ])
    }

    @Test func escapedKeysAreDecoded() throws {
        let text =
            #"{"a\"b": 1, "back\\slash": 2, "\/\b\f\n\r\t": 3, "\u00e9\u4E2D": 4, "\ud83d\ude00": 5, "\u0000": 6}"#
        #expect(
            try members(text).map(\.key) == [
                "a\"b", "back\\slash", "/\u{8}\u{C}\n\r\t", "é中", "😀", "\u{0}",
            ])
    }

    @Test func valueEscapesAreNotDecoded() throws {
        #expect(try members(#"{"k": "\u0041\ud83d\ude00\/"}"#) == [Pair("k", #""\u0041\ud83d\ude00\/""#)])
    }

    @Test func crlfLineEndingsAreWhitespace() throws {
        #expect(
            try members("{\r\n  \"a\": 1,\r\n  \"b\": [\r\n 2\r\n]\r\n}\r\n") == [Pair("a", "1"), Pair("b", "[2]")])
    }

    @Test func sameKeysInDifferentObjectsAreAllowed() throws {
        let text = #"{"a": {"a": 1, "b": {"a": 2}}, "b": [{"k": 1}, {"k": 2}, {"k": {"k": 3}}], "A": 0}"#
        #expect(try members(text).map(\.key) == ["a", "b", "A"])
    }

    @Test func unsafeBufferEntryPoint() throws {
        let input = bytes(#"{"a": [1, 2]}"#)
        let parsed = try input.withUnsafeBytes { buffer throws(JSONParseError) in try JSONParser.parse(buffer) }
        #expect(parsed == [ParsedMember(key: "a", value: bytes("[1,2]"))])
        do {
            _ = try JSONParser.parse(UnsafeRawBufferPointer(start: nil, count: 0))
            Issue.record("empty input parsed")
        } catch {
            #expect(error.kind == .unexpectedEnd)
        }
    }

    // MARK: Errors with positions

    @Test func byteOrderMark() throws {
        expectFailure([0xEF, 0xBB, 0xBF] + bytes("{}"), .byteOrderMark, line: 1, column: 1, offset: 0)
        #expect(parseError([0xEF, 0xBB, 0xBF] + bytes("{}"))?.message.contains("byte-order mark") == true)
        #expect(valueError([0xEF, 0xBB, 0xBF] + bytes("1"))?.kind == .byteOrderMark)
        // U+FEFF elsewhere is an ordinary character.
        #expect(try members("{\"k\": \"\u{FEFF}\"}") == [Pair("k", "\"\u{FEFF}\"")])
    }

    @Test func invalidUTF8InsideString() {
        // `{\n  "a": "x<FF>"\n}`: the bad byte is on line 2, column 10.
        expectFailure(
            bytes("{\n  \"a\": \"x") + [0xFF] + bytes("\"\n}"), .invalidUTF8, line: 2, column: 10, offset: 11, key: "a")
        // In a key, before the key is known.
        expectFailure(bytes("{\n  \"a") + [0xC3] + bytes("\": 1}"), .invalidUTF8, line: 2, column: 5, offset: 6)
    }

    @Test func invalidUTF8Sequences() {
        let cases: [[UInt8]] = [
            [0x80],  // lone continuation byte
            [0xBF],
            [0xC0, 0x80],  // overlong NUL
            [0xC1, 0xBF],  // overlong
            [0xE0, 0x80, 0x80],  // overlong three-byte
            [0xE0, 0x9F, 0xBF],
            [0xF0, 0x80, 0x80, 0x80],  // overlong four-byte
            [0xF0, 0x8F, 0xBF, 0xBF],
            [0xED, 0xA0, 0x80],  // encoded high surrogate
            [0xED, 0xBF, 0xBF],  // encoded low surrogate
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xFE], [0xFF],
            [0xC3],  // truncated by the closing quote
            [0xE2, 0x82],
            [0xF0, 0x9F, 0x98],
            [0xC3, 0x41],  // bad continuation
            [0xE2, 0x28, 0xA1],
        ]
        for sequence in cases {
            let error = parseError(bytes("{\"k\": \"ab") + sequence + bytes("\"}"))
            #expect(error?.kind == .invalidUTF8, "\(sequence)")
            #expect(error?.offset == 9, "\(sequence)")
            #expect(error?.column == 10, "\(sequence)")
        }
        // Truncated at the very end of the input.
        for sequence: [UInt8] in [[0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98]] {
            #expect(parseError(bytes("{\"k\": \"ab") + sequence)?.kind == .invalidUTF8)
        }
        // Valid boundaries are accepted.
        let valid: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sequence in valid {
            #expect(parseError(bytes("{\"k\": \"") + sequence + bytes("\"}")) == nil, "\(sequence)")
        }
    }

    @Test func invalidUTF8OutsideStrings() {
        expectFailure(bytes("{\n ") + [0xFF] + bytes("}"), .invalidUTF8, line: 2, column: 2, offset: 3)
        expectFailure(bytes("{\"a\": ") + [0xC3], .invalidUTF8, line: 1, column: 7, offset: 6, key: "a")
        expectFailure(bytes("{} ") + [0x80], .invalidUTF8, line: 1, column: 4, offset: 3)
        expectFailure([0xFF], .invalidUTF8, line: 1, column: 1, offset: 0)
    }

    @Test func notAnObject() {
        expectFailure("\n  [1, 2]", .notAnObject, line: 2, column: 3, offset: 3)
        expectFailure("\"text\"", .notAnObject, line: 1, column: 1)
        expectFailure("42", .notAnObject, line: 1, column: 1)
        expectFailure("null", .notAnObject, line: 1, column: 1)
        expectFailure("x", .notAnObject, line: 1, column: 1)
    }

    @Test func emptyInputIsUnexpectedEnd() {
        expectFailure("", .unexpectedEnd, line: 1, column: 1, offset: 0)
        expectFailure(" \n\t ", .unexpectedEnd, line: 2, column: 3, offset: 4)
        #expect(valueError([])?.kind == .unexpectedEnd)
        #expect(valueError(bytes("  "))?.kind == .unexpectedEnd)
    }

    @Test func unexpectedCharacter() {
        let error = parseError(bytes("{\n  \"a\": 1\n  \"b\": 2\n}"))
        #expect(error?.kind == .unexpectedCharacter)
        #expect(error?.line == 3)
        #expect(error?.column == 3)
        #expect(error?.offset == 13)
        #expect(error?.key == "a")
        #expect(error?.message == "expected ',' or '}' after a member, found '\"'")
        expectFailure("{\"a\": 1 x}", .unexpectedCharacter, line: 1, column: 9, key: "a")
        #expect(parseError(bytes("{\"a\": 1 x}"))?.message == "expected ',' or '}' after a member, found 'x'")
        // Columns count characters, not bytes.
        expectFailure("{\"éé\": 1 x}", .unexpectedCharacter, line: 1, column: 10, offset: 11, key: "éé")
        expectFailure("{\n  \"a\": 1,\n}", .unexpectedCharacter, line: 3, column: 1)
        expectFailure("{\n  \"a\" 1}", .unexpectedCharacter, line: 2, column: 7)
        expectFailure("{\n  a: 1}", .unexpectedCharacter, line: 2, column: 3)
        expectFailure("{\"a\": [1 2]}", .unexpectedCharacter, line: 1, column: 10, key: "a")
        expectFailure("{\"a\": [1,]}", .unexpectedCharacter, line: 1, column: 10, key: "a")
        expectFailure("{\"a\": {\"b\": 1,}}", .unexpectedCharacter, line: 1, column: 15, key: "a")
        expectFailure("{\"a\": 'x'}", .unexpectedCharacter, line: 1, column: 7, key: "a")
        expectFailure("{\"a\": tru}", .unexpectedCharacter, line: 1, column: 10, key: "a")
        expectFailure("{\"a\": nul}", .unexpectedCharacter, line: 1, column: 10, key: "a")
        expectFailure("{\"a\": False}", .unexpectedCharacter, line: 1, column: 7, key: "a")
        expectFailure("{\"a\": truex}", .unexpectedCharacter, line: 1, column: 11, key: "a")
        expectFailure("{\"a\": 1}}", .trailingGarbage, line: 1, column: 9)
        expectFailure("{\"a\":\u{A0}1}", .unexpectedCharacter, line: 1, column: 6, key: "a")
        expectFailure("{\"a\":\u{0C}1}", .unexpectedCharacter, line: 1, column: 6, key: "a")
        expectFailure("{\"a\": 1 /* c */}", .unexpectedCharacter, line: 1, column: 9, key: "a")
    }

    @Test func unexpectedEnd() {
        expectFailure("{\n  \"a\": [1,", .unexpectedEnd, line: 2, column: 11, offset: 12, key: "a")
        expectFailure("{", .unexpectedEnd, line: 1, column: 2)
        expectFailure("{\"a\"", .unexpectedEnd, line: 1, column: 5)
        expectFailure("{\"a\":", .unexpectedEnd, line: 1, column: 6, key: "a")
        expectFailure("{\"a\": 1", .unexpectedEnd, line: 1, column: 8, key: "a")
        expectFailure("{\"a\": \"unterminated", .unexpectedEnd, line: 1, column: 20, key: "a")
        expectFailure("{\"a\": {\"b\": 1", .unexpectedEnd, line: 1, column: 14, key: "a")
        expectFailure("{\"a\": tr", .unexpectedEnd, line: 1, column: 9, key: "a")
        expectFailure("{\"a\": 1.", .unexpectedEnd, line: 1, column: 9, key: "a")
        expectFailure("{\"a\": \"\\u12", .unexpectedEnd, line: 1, column: 12, key: "a")
        expectFailure("{\"a\": \"\\", .unexpectedEnd, line: 1, column: 9, key: "a")
        #expect(parseError(bytes("{\"a\": \"abc"))?.message.contains("line 1, column 7") == true)
    }

    @Test func invalidNumber() throws {
        expectFailure("{\n  \"a\": 01\n}", .invalidNumber, line: 2, column: 8, offset: 9, key: "a")
        expectFailure("{\n  \"a\": 1.}", .invalidNumber, line: 2, column: 10, key: "a")
        expectFailure("{\n  \"a\": +1}", .invalidNumber, line: 2, column: 8, key: "a")
        for value in [
            "01", "-01", "00", "+1", "1.", "1.e5", ".5", "-", "-a", "- 1", "1e", "1e+", "1E-}", "NaN", "Infinity",
            "-Infinity", "-.5",
        ] {
            expectValueFailure(value, .invalidNumber)
        }
        expectValueFailure("0x10", .unexpectedCharacter)
        // A complete number followed by more characters is a structural error.
        expectValueFailure("1.5.", .unexpectedCharacter)
        #expect(try members(#"{"a": -0.0e0, "b": 0.5, "c": 10E+00, "d": 123456789012345678901234567890}"#).count == 4)
    }

    @Test func invalidEscape() {
        expectFailure("{\n  \"a\": \"x\\q\"\n}", .invalidEscape, line: 2, column: 10, offset: 11, key: "a")
        expectFailure("{\n  \"x\\'\": 1}", .invalidEscape, line: 2, column: 5)
        for value in [#""\x41""#, #""\U0041""#, #""\u12G4""#, #""\u 123""#, #""\'""#, #""\0""#, #""\u{41}""#] {
            expectValueFailure(value, .invalidEscape)
        }
    }

    @Test func loneSurrogate() {
        // High surrogate followed by the end of the string.
        expectFailure("{\n  \"a\": \"x\\uD800\"\n}", .loneSurrogate, line: 2, column: 10, offset: 11, key: "a")
        // Low surrogate alone.
        expectFailure("{\n  \"a\": \"\\udc00x\"\n}", .loneSurrogate, line: 2, column: 9, offset: 10, key: "a")
        // In a key.
        expectFailure("{\"\\uDBFF\": 1}", .loneSurrogate, line: 1, column: 3, offset: 2)
        for value in [
            #""\uD800\u0041""#, #""\uD800\n""#, #""\uDBFF\uDBFF""#, #""\uD800x""#, #""\uDFFF\uD800""#,
            #""\uD83D \uDE00""#,
        ] {
            expectValueFailure(value, .loneSurrogate)
        }
        // A proper pair at both ends of the range is fine.
        #expect(parseError(bytes(#"{"k": "\uD800\uDC00\uDBFF\uDFFF"}"#)) == nil)
    }

    @Test func controlCharacterInString() {
        expectFailure("{\n  \"a\": \"x\ty\"\n}", .controlCharacterInString, line: 2, column: 10, offset: 11, key: "a")
        expectFailure("{\"a\nb\": 1}", .controlCharacterInString, line: 1, column: 4, offset: 3)
        for byte: UInt8 in [0x00, 0x01, 0x0A, 0x0D, 0x1F] {
            expectValueFailure(bytes("\"a") + [byte] + bytes("\""), .controlCharacterInString)
        }
        // DEL is not a control character for JSON.
        #expect(parseError(bytes("{\"k\": \"\u{7F}\"}")) == nil)
    }

    @Test func duplicateKeys() {
        expectFailure("{\n  \"a\": 1,\n  \"a\": 2\n}", .duplicateKey, line: 3, column: 3, offset: 14, key: "a")
        #expect(parseError(bytes(#"{"volume": 1, "volume": 2}"#))?.message == "duplicate key \"volume\"")
        // Nested: the nested key is reported.
        expectFailure("{\"x\": {\n \"b\": 1, \"b\": 2}}", .duplicateKey, line: 2, column: 10, key: "b")
        expectFailure("{\"x\": [{}, {\"c\": {\"d\": 1, \"d\": 1}}]}", .duplicateKey, line: 1, column: 27, key: "d")
        // Compared after decoding escapes.
        expectFailure(#"{"a": 1, "\u0061": 2}"#, .duplicateKey, line: 1, column: 10, key: "a")
        expectFailure(#"{"x": {"\/": 1, "/": 2}}"#, .duplicateKey, line: 1, column: 17, key: "/")
        expectFailure(#"{"\ud83d\ude00": 1, "😀": 2}"#, .duplicateKey, line: 1, column: 21, key: "😀")
        // Names compare by code points (RFC 8259), not by canonical equivalence: these are two names.
        #expect(parseError(bytes("{\"\u{E9}\": 1, \"e\u{301}\": 2}")) == nil)
        // A control character in the key is escaped in the message.
        #expect(parseError(bytes(#"{"a\nb": 1, "a\u000Ab": 2}"#))?.message == #"duplicate key "a\nb""#)
        #expect(valueError(bytes(#"[{"a": 1, "a": 2}]"#))?.kind == .duplicateKey)
    }

    @Test func trailingGarbage() {
        expectFailure("{}\n x", .trailingGarbage, line: 2, column: 2, offset: 4)
        expectFailure("{\"a\": 1} {}", .trailingGarbage, line: 1, column: 10)
        expectFailure("{}\u{0}", .trailingGarbage, line: 1, column: 3)
        expectFailure("{}\r\n\r\n,", .trailingGarbage, line: 3, column: 1, offset: 6)
        #expect(valueError(bytes("1 2"))?.kind == .trailingGarbage)
        #expect(valueError(bytes("\"a\"b"))?.kind == .trailingGarbage)
    }

    // MARK: Depth

    /// `{"k": ` followed by `count` nested arrays.
    func nestedArrays(_ count: Int) -> [UInt8] {
        bytes("{\"k\": ") + [UInt8](repeating: 0x5B, count: count) + [UInt8](repeating: 0x5D, count: count) + bytes("}")
    }

    @Test func depthAtTheLimitIsAccepted() throws {
        // The top-level object is depth 1, so 511 arrays inside reach exactly 512.
        let parsed = try parseAndIndex(nestedArrays(511))
        #expect(parsed.first?.value.count == 1022)
        #expect(parseError(bytes(#"{"a": [[1]]}"#), maxDepth: 3) == nil)
        #expect(parseError(bytes(#"{"a": {"b": {}}}"#), maxDepth: 3) == nil)
    }

    @Test func depthOverTheLimitIsRejected() {
        expectFailure(nestedArrays(512), .tooDeep, line: 1, column: 518, offset: 517, key: "k")
        expectFailure(#"{"a": [[1]]}"#, .tooDeep, line: 1, column: 8, offset: 7, key: "a", maxDepth: 2)
        expectFailure(#"{"a": {"b": {}}}"#, .tooDeep, line: 1, column: 13, key: "a", maxDepth: 2)
        expectFailure("{}", .tooDeep, line: 1, column: 1, maxDepth: 0)
        #expect(valueError(bytes("[[1]]"), maxDepth: 1)?.offset == 1)
        #expect(valueError(bytes("[1]"), maxDepth: 1) == nil)
    }

    @Test func adversarialDepthErrorsWithoutCrashing() throws {
        let deep = [UInt8](repeating: 0x5B, count: 100_000)
        #expect(parseError(bytes("{\"k\": ") + deep)?.kind == .tooDeep)
        #expect(parseError(bytes("{\"k\": ") + [UInt8](repeating: 0x7B, count: 100_000))?.kind == .unexpectedCharacter)
        #expect(valueError(deep)?.kind == .tooDeep)
        // The scanner is iterative, so a huge limit still does not exhaust the stack.
        #expect(try parseAndIndex(nestedArrays(100_000), maxDepth: 200_000).count == 1)
        var objects: [UInt8] = []
        for _ in 0..<100_000 {
            objects += bytes("{\"a\":")
        }
        objects += bytes("1") + [UInt8](repeating: 0x7D, count: 100_000)
        #expect(try JSONParser.compactValue(objects, maxDepth: 200_000) == objects)
        #expect(valueError(objects)?.kind == .tooDeep)
    }

    // MARK: compactValue

    @Test func compactValueAcceptsAnyKind() throws {
        let cases: [(String, String)] = [
            ("  [1, 2]\n", "[1,2]"), (" \"a b\" ", "\"a b\""), ("12", "12"), ("-0.5e3", "-0.5e3"), ("true", "true"),
            ("false", "false"), ("null", "null"), ("{ \"k\" : [ ] }", "{\"k\":[]}"), ("\"\"", "\"\""),
        ]
        for (input, expected) in cases {
            #expect(try JSONParser.compactValue(bytes(input)) == bytes(expected), "\(input)")
        }
        #expect(valueError(bytes("01"))?.kind == .invalidNumber)
        #expect(valueError(bytes("'a'"))?.kind == .unexpectedCharacter)
        #expect(valueError(bytes("[1,"))?.kind == .unexpectedEnd)
        #expect(valueError(bytes("-"))?.kind == .unexpectedEnd)
        #expect(valueError(bytes("\"abc"))?.kind == .unexpectedEnd)
        #expect(valueError(bytes("{\"a\":1}"))?.key == nil)
    }

    // MARK: Writing

    @Test func writeEmptyStore() {
        #expect(FileImage(members: [(name: String, value: [UInt8])]()).bytes == bytes("{}\n"))
        #expect(FileImage(members: [ParsedMember]()).bytes == bytes("{}\n"))
    }

    @Test func writeLayout() {
        let members: [(name: String, value: [UInt8])] = [
            (name: "a", value: bytes("1")), (name: "b", value: bytes(#"{"x":[true,null]}"#)),
        ]
        let expected = "{\n  \"a\": 1,\n  \"b\": {\"x\":[true,null]}\n}\n"
        #expect(FileImage(members: members).bytes == bytes(expected))
        #expect(
            FileImage(members: members.map { ParsedMember(key: $0.name, value: $0.value) }).bytes == bytes(expected))
        #expect(FileImage(members: [(name: "only", value: bytes("\"v\""))]).bytes == bytes("{\n  \"only\": \"v\"\n}\n"))
        // Members are written in file order (by UTF-8 bytes), whatever order they are given in.
        let dictionary: [String: [UInt8]] = ["z": bytes("1"), "y": bytes("2")]
        for order in [dictionary.sorted { $0.key < $1.key }, dictionary.sorted { $0.key > $1.key }] {
            let image = FileImage(members: order.map { (name: $0.key, value: $0.value) })
            #expect(image.bytes == bytes("{\n  \"y\": 2,\n  \"z\": 1\n}\n"))
        }
    }

    @Test func appendQuotedEscapes() {
        var out: [UInt8] = []
        JSONParser.appendQuoted("q\"b\\s/\n\r\t\u{8}\u{C}\u{0}\u{1}\u{1F}\u{7F}é😀", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #""q\"b\\s/\n\r\t\b\f\u0000\u0001\u001f"# + "\u{7F}é😀\"")
        out = [0x41]
        JSONParser.appendQuoted("", to: &out)
        #expect(out == bytes("A\"\""))
    }

    @Test func writeEscapesKeys() {
        let output = FileImage(members: [(name: "say \"hi\"\n", value: bytes("1"))]).bytes
        #expect(output == bytes("{\n  \"say \\\"hi\\\"\\n\": 1\n}\n"))
    }

    @Test func roundTrip() throws {
        let members = [
            ParsedMember(key: "plain", value: bytes("1")),
            ParsedMember(key: "", value: bytes("\"\"")),
            ParsedMember(key: "quote\"back\\slash", value: bytes(#"{"a":[1,2.5e-3,"\u0041\n"],"b":{}}"#)),
            ParsedMember(key: "control\u{0}\u{1}\n\t\u{1F}", value: bytes("null")),
            ParsedMember(key: "ключ 😀 é e\u{301}x", value: bytes("[true,false]")),
            ParsedMember(key: "\u{7F}\u{FEFF}\u{10FFFF}", value: bytes("-0")),
        ]
        let sorted = members.sorted { precedesInFile($0.key, $1.key) }
        #expect(try parseAndIndex(FileImage(members: members).bytes) == sorted)
        let tuples = members.map { (name: $0.key, value: $0.value) }
        #expect(try parseAndIndex(FileImage(members: tuples).bytes) == sorted)
        #expect(try parseAndIndex(FileImage(members: [ParsedMember]()).bytes) == [])
    }

    /// The string scanner reads eight bytes at a time while they are plain ASCII: every special byte must be
    /// found at every position of such a word.
    @Test func specialBytesAreFoundAtEveryPositionOfALongString() throws {
        for position in 0..<24 {
            let before = Array(repeating: UInt8(ascii: "a"), count: position)
            let after = Array(repeating: UInt8(ascii: "b"), count: 24 - position)
            func parse(_ middle: [UInt8]) throws(JSONParseError) -> [ParsedMember] {
                try parseAndIndex(Array("{\"k\": \"".utf8) + before + middle + after + Array("\"}".utf8))
            }
            // Allowed: DEL, an escape, a two-byte character.
            for middle in [[0x7F], Array("\\n".utf8), Array("é".utf8)] as [[UInt8]] {
                let value = try parse(middle)[0].value
                #expect(value == [0x22] + before + middle + after + [0x22], "position \(position)")
            }
            // Refused: control characters and a malformed sequence.
            for middle in [[0x00], [0x01], [0x1F], [0x0A], [0xC3], [0xFF]] as [[UInt8]] {
                #expect(throws: JSONParseError.self, "position \(position), byte \(middle)") { try parse(middle) }
            }
            // A quote ends the string early: what follows is not valid.
            #expect(throws: JSONParseError.self) { try parse([0x22]) }
        }
    }
}
