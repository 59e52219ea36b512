import Testing

@testable import CodableDefaults
@testable import CodableDefaultsTestSupport

/// Parses `input` with `Document.parse` and indexes it with `DocumentIndex`, recording an issue wherever the two
/// disagree: one accepts and the other rejects, the errors differ in any field, a member's name or value differs,
/// or the lookup misses a name. Returns (or throws) what `Document.parse` does, so that `DocumentTests` runs every
/// one of its inputs through both.
func parseAndIndex(
    _ input: [UInt8], maxDepth: Int = 512, sourceLocation: SourceLocation = #_sourceLocation
) throws(DocumentError) -> [DocumentMember] {
    let parsed = Result { () throws(DocumentError) in try Document.parse(input, maxDepth: maxDepth) }
    let indexed = Result { () throws(DocumentError) in try DocumentIndex(bytes: input, maxDepth: maxDepth) }
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

/// Tests of the index scan (`DocumentIndex`) beyond agreeing with `Document.parse` on DocumentTests' inputs.
@Suite struct DocumentIndexTests {
    /// Indexes `text`, which must be a valid store file.
    func index(_ text: String) throws -> DocumentIndex {
        try DocumentIndex(bytes: Array(text.utf8))
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
            #expect(throws: DocumentError.self) { try parseAndIndex(Array(text.utf8)) }
            let error = try #require(throws: DocumentError.self) { try DocumentIndex(bytes: Array(text.utf8)) }
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
        let index = try DocumentIndex(bytes: input)
        for number in 0..<5000 {
            #expect(index.position(of: "k\(number)") == number)
        }
        #expect(index.position(of: "k5000") == nil)
        #expect(index.position(of: "\\u006B0") == nil)
        // A duplicate far into a large object is found and reported as `Document.parse` does.
        let duplicated = Array((text.dropLast() + #","k4999": 0}"#).utf8)
        #expect(throws: DocumentError.self) { try parseAndIndex(duplicated) }
    }

    /// Duplicates inside nested objects are still refused (the scanner checks them itself).
    @Test func nestedDuplicatesAreRefused() throws {
        let input = Array(#"{"a": {"x": 1, "y": {"x": 2}}, "b": [{"z": 1, "z": 2}]}"#.utf8)
        #expect(throws: DocumentError.self) { try parseAndIndex(input) }
        let error = try #require(throws: DocumentError.self) { try DocumentIndex(bytes: input) }
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
            let error = try #require(throws: DocumentError.self) { try parseAndIndex(Array(text.utf8)) }
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
}
