import CodableDefaultsTestSupport
import Testing

@testable import CodableDefaults

/// How an error describes itself in one line: the key as a JSON string, shortened when long.
@Suite struct ErrorDescriptionTests {
    @Test func anErrorDescriptionShortensALongKeyAndEscapesItsQuotesAndLineBreaks() throws {
        let long = String(repeating: "x", count: 5000)
        let tooLong = Store.keyTooLong(long, limit: 1024, path: "/p/s.json")
        #expect(tooLong.key == long, "the field keeps the whole key")
        #expect(
            tooLong.description
                == "/p/s.json: key \"\(String(repeating: "x", count: 40))…\" (5000 bytes): the key is over the limit of 1024 bytes"
        )
        let odd = DefaultsError(.decodingFailed, "not a number", key: "a\"b\nc")
        #expect(odd.description == #"key "a\"b\nc": not a number"#)
    }
}
