import Testing

@testable import CodableDefaults

/// `String(utf8Validating:)`, the package's UTF-8 check (the standard library's `String(validating:as:)` needs
/// newer Apple systems than the package supports): it accepts exactly the well-formed UTF-8 byte sequences.
@Suite struct UTF8ValidationTests {
    @Test(
        arguments: [
            [0x80],  // a continuation byte alone
            [0xC3],  // a two-byte sequence cut short
            [0xE2, 0x82],  // a three-byte sequence cut short
            [0xC0, 0xAF],  // an overlong "/"
            [0xE0, 0x80, 0xAF],  // an overlong "/" in three bytes
            [0xED, 0xA0, 0x80],  // a surrogate, U+D800
            [0xF4, 0x90, 0x80, 0x80],  // U+110000, above the last code point
            [0xFF],  // a byte that never occurs in UTF-8
            [0x61, 0xC3, 0x28, 0x62],  // a lead byte followed by a byte that does not continue it
        ] as [[UInt8]])
    func malformedSequencesAreRefused(bytes: [UInt8]) {
        #expect(String(utf8Validating: bytes) == nil)
    }

    @Test(
        arguments: [
            [],
            [0x61, 0x62, 0x63],  // "abc"
            [0xC3, 0xA9],  // é, U+00E9
            [0xEF, 0xBF, 0xBD],  // U+FFFD itself is a character like any other
            [0xF0, 0x9F, 0x98, 0x80],  // 😀, U+1F600
            [0xF4, 0x8F, 0xBF, 0xBF],  // U+10FFFF, the last code point
            [0x00],  // NUL is a character
        ] as [[UInt8]])
    func wellFormedSequencesAreTheStringsTheyEncode(bytes: [UInt8]) throws {
        let text = try #require(String(utf8Validating: bytes))
        #expect(Array(text.utf8) == bytes)
    }

    /// Every sequence of up to three bytes drawn from the bytes where UTF-8's rules change: the same verdict as the
    /// standard library's own check, where this system has it.
    @Test func agreesWithTheStandardLibraryOnEveryShortSequence() {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        let edges: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF,
            0xF0, 0xF4, 0xF5, 0xFF,
        ]
        var disagreements: [[UInt8]] = []
        for first in edges {
            for second in edges {
                for third in edges {
                    for bytes in [[first], [first, second], [first, second, third]] {
                        let expected = String(validating: bytes, as: UTF8.self)
                        if String(utf8Validating: bytes) != expected { disagreements.append(bytes) }
                    }
                }
            }
        }
        #expect(disagreements.isEmpty)
    }
}
