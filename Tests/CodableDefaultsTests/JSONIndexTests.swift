import CodableDefaultsTestSupport
import Testing

@testable import CodableDefaults

/// Parses `input` with `JSONParser.parse` and indexes it with `JSONIndex`, recording an issue wherever the two
/// disagree: one accepts and the other rejects, the errors differ in any field, a member's name or value differs,
/// or the lookup misses a name. Returns (or throws) what `JSONParser.parse` does, so that `JSONParserTests` runs every
/// one of its inputs through both.
func parseAndIndex(
    _ input: [UInt8], maxDepth: Int = 512, sourceLocation: SourceLocation = #_sourceLocation
) throws(JSONParseError) -> [ParsedMember] {
    let parsed = Result { () throws(JSONParseError) in try JSONParser.parse(input, maxDepth: maxDepth) }
    let indexed = Result { () throws(JSONParseError) in try JSONIndex(bytes: input, maxDepth: maxDepth) }
    switch (parsed, indexed) {
    case (.success(let members), .success(let index)):
        #expect(index.count == members.count, sourceLocation: sourceLocation)
        for (position, member) in members.enumerated() where position < index.count {
            #expect(sameBytes(index.key(at: position), member.key), "key \(position)", sourceLocation: sourceLocation)
            #expect(index.value(at: position) == member.value, "value \(position)", sourceLocation: sourceLocation)
            #expect(index.position(of: member.key) == position, "lookup \(position)", sourceLocation: sourceLocation)
        }
    case (.failure(let parseError), .failure(let indexError)):
        #expect(indexError == parseError, sourceLocation: sourceLocation)
    case (.success, .failure(let indexError)):
        Issue.record("parse accepted, the index refused: \(indexError.message)", sourceLocation: sourceLocation)
    case (.failure(let parseError), .success):
        Issue.record("the index accepted, parse refused: \(parseError.message)", sourceLocation: sourceLocation)
    }
    return try parsed.get()
}

/// Tests of the index scan (`JSONIndex`) beyond agreeing with `JSONParser.parse` on JSONParserTests' inputs.
@Suite struct JSONIndexTests {
    /// Indexes `text`, which must be a valid store file.
    func index(_ text: String) throws -> JSONIndex {
        try JSONIndex(bytes: Array(text.utf8))
    }

    @Test func emptyObjectHasNoMembers() throws {
        let index = try index(" {\n} ")
        #expect(index.count == 0)
        #expect(index.position(of: "") == nil)
        #expect(index.position(of: "a") == nil)
    }

    @Test func spansAreTheBytesAsWritten() throws {
        let text = #"{ "a\n" : [ 1 , "x y" ] , "b": {} }"#
        let index = try index(text)
        let bytes = Array(text.utf8)
        #expect(index.count == 2)
        #expect(Array(bytes[index.keyRange(at: 0)]) == Array(#"a\n"#.utf8))
        #expect(index.keyHasEscapes(at: 0))
        #expect(!index.keyHasEscapes(at: 1))
        #expect(Array(bytes[index.valueRange(at: 0)]) == Array(#"[ 1 , "x y" ]"#.utf8))
        #expect(index.value(at: 0) == Array(#"[1,"x y"]"#.utf8))
        #expect(index.key(at: 0) == "a\n")
        #expect(index.value(at: 1) == Array("{}".utf8))
    }

    @Test func lookupComparesDecodedBytes() throws {
        // "\u00e9" and "é" are one name (written two ways); "e\u0301" (NFD) is another.
        let index = try index(#"{"\u00e9": 1, "e\u0301": 2, "plain": 3, "\"q\"": 4}"#)
        #expect(index.position(of: "\u{E9}") == 0)
        #expect(index.position(of: "e\u{301}") == 1)
        #expect(index.position(of: "plain") == 2)
        #expect(index.position(of: "\"q\"") == 3)
        #expect(index.position(of: "\\u00e9") == nil)
        #expect(index.position(of: "e") == nil)
        #expect(index.position(of: "plai") == nil)
        #expect(index.position(of: "plainer") == nil)
    }

    @Test func nfcAndNfdSpellingsAreTwoKeys() throws {
        let members = try parseAndIndex(Array("{\"\u{E9}\": 1, \"e\u{301}\": 2}".utf8))
        #expect(members.count == 2)
        let index = try index("{\"\u{E9}\": 1, \"e\u{301}\": 2}")
        #expect(index.position(of: "\u{E9}") == 0)
        #expect(index.position(of: "e\u{301}") == 1)
    }

    @Test func duplicateSpelledWithAndWithoutEscapesIsRefused() throws {
        for text in [#"{"é": 1, "\u00e9": 2}"#, #"{"\u00e9": 1, "é": 2}"#, #"{"\u00E9": 1, "\u00e9": 2}"#] {
            #expect(throws: JSONParseError.self) { try parseAndIndex(Array(text.utf8)) }
            let error = try #require(throws: JSONParseError.self) { try JSONIndex(bytes: Array(text.utf8)) }
            #expect(error.kind == .duplicateKey)
            #expect(error.key == "\u{E9}")
        }
    }

    /// Many members (past the table's first size, so it grows), some with escapes, all found; absent names not.
    @Test func manyMembersAreAllFound() throws {
        var text = "{"
        for number in 0..<5000 {
            if number > 0 { text += "," }
            text += number % 7 == 0 ? #""\u006B\#(number)": \#(number)"# : #""k\#(number)": [\#(number)]"#
        }
        text += "}"
        let input = Array(text.utf8)
        let members = try parseAndIndex(input)
        #expect(members.count == 5000)
        let index = try JSONIndex(bytes: input)
        for number in 0..<5000 {
            #expect(index.position(of: "k\(number)") == number)
        }
        #expect(index.position(of: "k5000") == nil)
        #expect(index.position(of: "\\u006B0") == nil)
        // A duplicate far into a large object is found and reported as `JSONParser.parse` does.
        let duplicated = Array((text.dropLast() + #","k4999": 0}"#).utf8)
        #expect(throws: JSONParseError.self) { try parseAndIndex(duplicated) }
    }

    /// Duplicates inside nested objects are still refused (the scanner checks them itself).
    @Test func nestedDuplicatesAreRefused() throws {
        let input = Array(#"{"a": {"x": 1, "y": {"x": 2}}, "b": [{"z": 1, "z": 2}]}"#.utf8)
        #expect(throws: JSONParseError.self) { try parseAndIndex(input) }
        let error = try #require(throws: JSONParseError.self) { try JSONIndex(bytes: input) }
        #expect(error.kind == .duplicateKey)
        #expect(error.key == "z")
        #expect(error.column == 47)
    }

    /// Nested names compare by decoded bytes whether written with escapes or not, in small objects (a list of
    /// ranges) and past twelve names (a set of decoded names).
    @Test func nestedNamesCompareDecodedBytes() throws {
        let many = (0..<20).map { #""k\#($0)": \#($0)"# }.joined(separator: ", ")
        let refused: [(String, String)] = [
            (#"{"x": {"a": 1, "\u0061": 2}}"#, "a"), (#"{"x": {"\u0061": 1, "a": 2}}"#, "a"),
            (#"{"x": {"\u0061": 1, "\u0061": 2}}"#, "a"), (#"{"x": [{"ab": 1, "a\u0062": 2}]}"#, "ab"),
            ("{\"x\": {\(many), \"k3\": 0}}", "k3"), ("{\"x\": {\(many), \"\\u006B19\": 0}}", "k19"),
            ("{\"x\": {\"\\u006B0\": 1, \(many)}}", "k0"),
        ]
        for (text, key) in refused {
            let error = try #require(throws: JSONParseError.self) { try parseAndIndex(Array(text.utf8)) }
            #expect(error.kind == .duplicateKey, "\(text)")
            #expect(error.key == key, "\(text)")
        }
        let accepted = [
            #"{"x": {"\u0061": 1, "b": 2}}"#, "{\"x\": {\"\u{E9}\": 1, \"e\u{301}\": 2}}",
            #"{"x": {"\u00e9": 1, "e\u0301": 2}}"#, "{\"x\": {\(many), \"k20\": 0, \"\\u006B21\": 0}}",
        ]
        for text in accepted {
            #expect(try parseAndIndex(Array(text.utf8)).count == 1, "\(text)")
        }
    }

    // MARK: Sorted and unsorted files

    /// The error `JSONParser.parse` throws on `text`, which must be refused.
    func parseError(_ text: String) throws -> JSONParseError {
        try #require(throws: JSONParseError.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func aSortedFileKeepsNoTableAndIsSearched() throws {
        let index = try index(#"{"a": 1, "b": [2], "bb": 3, "c": {"z": 0, "a": 1}}"#)
        #expect(index.isSorted)
        #expect(index.slots.isEmpty)
        for (position, name) in ["a", "b", "bb", "c"].enumerated() {
            #expect(index.position(of: name) == position)
        }
        for absent in ["", "0", "aa", "ba", "bbb", "d", "z"] {
            #expect(index.position(of: absent) == nil, "\(absent)")
        }
    }

    @Test func anUnsortedFileKeepsATable() throws {
        let index = try index(#"{"a": 1, "c": 2, "b": 3, "d": 4}"#)
        #expect(!index.isSorted)
        #expect(!index.slots.isEmpty)
        #expect(!index.isCanonical)
        for (position, name) in ["a", "c", "b", "d"].enumerated() {
            #expect(index.position(of: name) == position)
        }
        #expect(index.position(of: "e") == nil)
        #expect(index.position(of: "") == nil)
    }

    /// Names compare in decoded order, however they are written: raw bytes alone would order these the other way.
    @Test func sortedOrderIsTheOrderOfDecodedNames() throws {
        // "\n" < "A" < "B" < "z\"" < "é" < "😀" by UTF-8 bytes, written with and without escapes.
        let sorted = try index(#"{"\n": 0, "\u0041": 1, "B": 2, "z\"": 3, "\u00e9": 4, "\ud83d\ude00": 5}"#)
        #expect(sorted.isSorted)
        for (position, name) in ["\n", "A", "B", "z\"", "\u{E9}", "😀"].enumerated() {
            #expect(sorted.position(of: name) == position, "\(name)")
        }
        #expect(sorted.position(of: "\\u0041") == nil)
        // "]" (5D) comes before "^" (5E), written "\u005e" (whose first byte, 5C, comes before 5D).
        let escapedLater = try index(#"{"]": 1, "\u005e": 2}"#)
        #expect(escapedLater.isSorted)
        #expect(escapedLater.position(of: "^") == 1)
        // "\u0042" is "B", which comes after "A" although its written bytes come first.
        let outOfOrder = try index(#"{"\u0042": 1, "A": 2}"#)
        #expect(!outOfOrder.isSorted)
        #expect(outOfOrder.position(of: "B") == 0)
        #expect(outOfOrder.position(of: "A") == 1)
    }

    /// A duplicate after a sorted prefix (the first name not greater than the one before) is reported exactly as
    /// `JSONParser.parse` reports it: kind, offset, line, column, key and message.
    @Test func aDuplicateAfterASortedPrefixIsParsesError() throws {
        let texts = [
            "{\"a\": 1, \"b\": 2,\n \"c\": 3, \"b\": 4}", #"{"a": 1, "a": 2}"#, #"{"a": 1, "\u0061": 2}"#,
            #"{"a": 1, "\u00e9": 2, "é": 3}"#, #"{"a": 1, "é": 2, "b": 3, "\u00e9": 4}"#,
            #"{"a": 1, "c": 2, "b": 3, "d": 4, "c": 5}"#, #"{"b": 1, "a": 2, "b": 3}"#,
        ]
        for text in texts {
            let expected = try parseError(text)
            #expect(expected.kind == .duplicateKey, "\(text)")
            let error = try #require(throws: JSONParseError.self) { try JSONIndex(bytes: Array(text.utf8)) }
            #expect(error == expected, "\(text)")
            #expect(error.message == expected.message, "\(text)")
        }
    }

    /// A large sorted file past the first estimate of its size, then the same with one name out of order near the
    /// end (the table is built from thousands of members) and with a duplicate there.
    @Test func aLongSortedPrefixThenDisorder() throws {
        let names = (0..<6000).map { "k" + String(repeating: "0", count: 5 - String($0).count) + String($0) }
        let sortedText = "{" + names.map { #""\#($0)":0"# }.joined(separator: ",") + "}"
        let sorted = try index(sortedText)
        #expect(sorted.isSorted && sorted.count == 6000)
        #expect(sorted.spans.count == 4 * 6000)
        #expect(sorted.position(of: "k05999") == 5999)
        #expect(sorted.position(of: "k06000") == nil)
        var shuffled = names
        shuffled.swapAt(5000, 5990)
        let unsorted = try index("{" + shuffled.map { #""\#($0)":0"# }.joined(separator: ",") + "}")
        #expect(!unsorted.isSorted)
        for (position, name) in shuffled.enumerated() where position % 7 == 0 || position >= 4990 {
            #expect(unsorted.position(of: name) == position)
        }
        let duplicated = "{" + (names + ["k03000"]).map { #""\#($0)":0"# }.joined(separator: ",") + "}"
        let error = try #require(throws: JSONParseError.self) { try JSONIndex(bytes: Array(duplicated.utf8)) }
        #expect(error == (try parseError(duplicated)))
    }

    // MARK: Canonical files

    @Test func theLayoutFileImageWritesIsCanonical() throws {
        let members: [(name: String, value: [UInt8])] = [
            ("", Array("0".utf8)), ("\u{1}tab\there", Array("[1,{\"a\":null}]".utf8)),
            ("quote\"back\\slash\n", Array("\"x y\"".utf8)), ("z", Array("{}".utf8)), ("\u{E9}", Array("true".utf8)),
        ]
        let image = FileImage(members: members)
        let index = try JSONIndex(bytes: image.bytes)
        #expect(index.isSorted)
        #expect(index.isCanonical)
        #expect(try JSONIndex(bytes: Array("{}\n".utf8)).isCanonical)
    }

    @Test func otherLayoutsAreNotCanonical() throws {
        let texts = [
            "{\n  \"a\":  1\n}\n", "{\n  \"a\": 1\n}", "{\n  \"a\": 1\n}\n\n", " {\n  \"a\": 1\n}\n",
            "{\n  \"a\": 1,\n   \"b\": 2\n}\n", "{\n  \"a\": [1, 2]\n}\n", "{\n  \"a\" : 1\n}\n", "{\n  \"a\":1\n}\n",
            "{\r\n  \"a\": 1\r\n}\r\n", "{\n  \"b\": 1,\n  \"a\": 2\n}\n", "{\n  \"\\u0041\": 1\n}\n",
            "{\n  \"\\/\": 1\n}\n", "{\n  \"\\u001F\": 1\n}\n", "{\n  \"\\u00e9\": 1\n}\n", "{}", "{ }\n", "{}\n ",
            "{\n  \"a\": 1 ,\n  \"b\": 2\n}\n", "{\n\t\"a\": 1\n}\n",
        ]
        for text in texts {
            #expect(try !index(text).isCanonical, "\(text.debugDescription)")
        }
        // The canonical spellings of the same escapes are.
        for text in ["{\n  \"\\u001f\": 1\n}\n", "{\n  \"\\n\": 2,\n  \"\\\\/\": 1\n}\n"] {
            #expect(try index(text).isCanonical, "\(text.debugDescription)")
        }
    }
}
