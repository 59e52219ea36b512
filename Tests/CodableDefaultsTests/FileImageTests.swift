import CodableDefaultsTestSupport
import Testing

@testable import CodableDefaults

/// Tests of the store file's one writer: its layout, lookups, and that every way of reaching an image (a fresh
/// build, a splice, a rebuild) gives the same bytes.
@Suite struct FileImageTests {
    // MARK: Helpers

    /// The UTF-8 bytes of `text`.
    func bytes(_ text: String) -> [UInt8] {
        Array(text.utf8)
    }

    /// The image of `members`, given as (name, value text) pairs.
    func image(_ members: KeyValuePairs<String, String>) -> FileImage {
        FileImage(members: members.map { (name: $0.key, value: bytes($0.value)) })
    }

    /// The file's text.
    func text(_ image: FileImage) -> String {
        String(decoding: image.bytes, as: UTF8.self)
    }

    /// The address of the image's byte buffer, to tell a change made in place from a copy.
    func address(_ image: FileImage) -> UInt {
        image.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    /// Checks that `image` is exactly what a fresh build of its own members makes, and finds each member.
    func expectConsistent(_ image: FileImage, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fresh = FileImage(members: image.members)
        #expect(image.bytes == fresh.bytes, sourceLocation: sourceLocation)
        #expect(try JSONParser.parse(image.bytes) == image.members, sourceLocation: sourceLocation)
        for position in 0..<image.count {
            #expect(image.index(of: image.name(at: position)) == position, sourceLocation: sourceLocation)
        }
    }

    // MARK: Layout

    @Test func anEmptyStoreIsTwoBracesAndANewline() {
        #expect(FileImage().bytes == bytes("{}\n"))
        #expect(FileImage().count == 0)
        #expect(FileImage().index(of: "") == nil)
        #expect(image([:]).bytes == bytes("{}\n"))
    }

    @Test func oneMemberPerLineSortedByBytes() {
        let written = image(["b": "{\"x\":[true,null]}", "a": "1", "B": "\"v\""])
        #expect(text(written) == "{\n  \"B\": \"v\",\n  \"a\": 1,\n  \"b\": {\"x\":[true,null]}\n}\n")
        #expect(written.names == ["B", "a", "b"])
        #expect(written.value(at: 2).elementsEqual(bytes("{\"x\":[true,null]}")))
        #expect(written.index(of: "a") == 1)
        #expect(written.index(of: "c") == nil)
    }

    @Test func namesAreEscapedAsJSONStrings() {
        let written = image(["say \"hi\"\n": "1", "tab\tback\\slash\u{1}\u{7F}é": "2"])
        #expect(
            text(written)
                == "{\n  \"say \\\"hi\\\"\\n\": 1,\n  \"tab\\tback\\\\slash\\u0001\u{7F}é\": 2\n}\n")
        #expect(written.value(at: 0).elementsEqual(bytes("1")))
        #expect(written.value(at: 1).elementsEqual(bytes("2")))
    }

    @Test func aRepeatedNameKeepsItsLastValue() throws {
        let written = image(["a": "1", "b": "2", "a": "3"])
        #expect(text(written) == "{\n  \"a\": 3,\n  \"b\": 2\n}\n")
        try expectConsistent(written)
    }

    @Test func namesThatDifferOnlyInNormalizationAreTwoMembers() throws {
        let composed = "\u{E9}"  // C3 A9
        let decomposed = "e\u{301}"  // 65 CC 81
        #expect(composed == decomposed)  // As Swift strings; not as member names.
        let written = FileImage(members: [(name: composed, value: bytes("1")), (name: decomposed, value: bytes("2"))])
        #expect(written.count == 2)
        #expect(written.names.map { Array($0.utf8) } == [[0x65, 0xCC, 0x81], [0xC3, 0xA9]])
        #expect(written.index(of: decomposed) == 0)
        #expect(written.index(of: composed) == 1)
        #expect(written.index(of: "e") == nil)
        #expect(written.value(at: written.index(of: composed) ?? -1).elementsEqual(bytes("1")))
        try expectConsistent(written)
    }

    // MARK: Splicing

    @Test func aValueOfTheSameLengthIsReplacedInPlace() throws {
        var written = image(["a": "1", "b": "2", "c": "3"])
        let before = address(written)
        written.apply([(name: "b", value: bytes("9"))])
        #expect(text(written) == "{\n  \"a\": 1,\n  \"b\": 9,\n  \"c\": 3\n}\n")
        #expect(address(written) == before)
        try expectConsistent(written)
    }

    @Test func longerAndShorterValuesMoveTheMembersAfterThem() throws {
        var written = image(["a": "1", "b": "2", "c": "3", "d": "4"])
        written.apply([(name: "b", value: bytes("[1,2,3]")), (name: "d", value: bytes("\"four\""))])
        #expect(text(written) == "{\n  \"a\": 1,\n  \"b\": [1,2,3],\n  \"c\": 3,\n  \"d\": \"four\"\n}\n")
        try expectConsistent(written)
        written.apply([
            (name: "d", value: bytes("0")), (name: "a", value: bytes("true")), (name: "b", value: bytes("[]")),
        ])
        #expect(text(written) == "{\n  \"a\": true,\n  \"b\": [],\n  \"c\": 3,\n  \"d\": 0\n}\n")
        #expect(written.value(at: 2).elementsEqual(bytes("3")))
        try expectConsistent(written)
    }

    @Test func anUnchangedValueLeavesTheBytesAlone() throws {
        var written = image(["a": "1", "b": "2"])
        let before = address(written)
        written.apply([(name: "a", value: bytes("1"))])
        written.apply([(name: String, value: [UInt8]?)]())
        #expect(text(written) == "{\n  \"a\": 1,\n  \"b\": 2\n}\n")
        #expect(address(written) == before)
        // Removing a name the image does not hold changes nothing either.
        written.apply([(name: "zz", value: nil)])
        #expect(text(written) == "{\n  \"a\": 1,\n  \"b\": 2\n}\n")
        try expectConsistent(written)
    }

    @Test func moreThanEightChangesAreCopiedOnce() throws {
        let names = (0..<20).map { "k\($0 < 10 ? "0" : "")\($0)" }
        var written = FileImage(members: names.map { (name: $0, value: bytes("0")) })
        // Twelve changes of mixed lengths, given out of order.
        let changed = [19, 0, 3, 4, 5, 7, 8, 11, 12, 15, 16, 2]
        written.apply(changed.map { (name: names[$0], value: bytes($0 % 2 == 0 ? "\"\($0)\"" : "\($0 % 3)")) })
        var expected = names.map { (name: $0, value: bytes("0")) }
        for index in changed { expected[index].value = bytes(index % 2 == 0 ? "\"\(index)\"" : "\(index % 3)") }
        #expect(written.bytes == FileImage(members: expected).bytes)
        try expectConsistent(written)
    }

    @Test func aNameChangedTwiceTakesItsLastValue() throws {
        var written = image(["a": "1", "b": "2"])
        written.apply([(name: "b", value: bytes("3")), (name: "a", value: bytes("4")), (name: "b", value: bytes("55"))])
        #expect(text(written) == "{\n  \"a\": 4,\n  \"b\": 55\n}\n")
        written.apply([(name: "b", value: nil), (name: "b", value: bytes("6")), (name: "c", value: bytes("7"))])
        written.apply([(name: "c", value: nil)])
        #expect(text(written) == "{\n  \"a\": 4,\n  \"b\": 6\n}\n")
        written.apply([(name: "x", value: bytes("1")), (name: "x", value: nil), (name: "a", value: bytes("4"))])
        #expect(text(written) == "{\n  \"a\": 4,\n  \"b\": 6\n}\n")
        try expectConsistent(written)
    }

    // MARK: Rebuilding

    @Test func addedNamesAreMergedIntoTheOrder() throws {
        var written = image(["b": "2", "d": "4"])
        written.apply([(name: "e", value: bytes("5")), (name: "a", value: bytes("1")), (name: "c", value: bytes("3"))])
        #expect(text(written) == "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"e\": 5\n}\n")
        #expect(written.names == ["a", "b", "c", "d", "e"])
        try expectConsistent(written)
    }

    @Test func removedNamesLeaveTheOrder() throws {
        var written = image(["a": "1", "b": "2", "c": "3"])
        written.apply([(name: "a", value: nil), (name: "c", value: bytes("[3]"))])
        #expect(text(written) == "{\n  \"b\": 2,\n  \"c\": [3]\n}\n")
        #expect(written.index(of: "a") == nil)
        try expectConsistent(written)
        written.apply([(name: "b", value: nil), (name: "c", value: nil)])
        #expect(written.bytes == bytes("{}\n"))
        #expect(written.count == 0)
        written.apply([(name: "\u{E9}", value: bytes("1")), (name: "e\u{301}", value: bytes("2"))])
        #expect(text(written) == "{\n  \"e\u{301}\": 2,\n  \"\u{E9}\": 1\n}\n")
        #expect(written.count == 2)
        try expectConsistent(written)
    }

    @Test func aRebuildKeepsUnchangedMembersAsTheyAre() throws {
        let odd = "quote\"back\\slash\n\u{0}"
        var written = image([odd: "{\"a\":[1,2.50e-3,\"\\u0041\"]}", "z": "1"])
        written.apply([(name: "m", value: bytes("null"))])
        #expect(
            text(written)
                == "{\n  \"m\": null,\n  \"quote\\\"back\\\\slash\\n\\u0000\": {\"a\":[1,2.50e-3,\"\\u0041\"]},\n  \"z\": 1\n}\n"
        )
        try expectConsistent(written)
    }

    // MARK: Equivalence

    /// A small deterministic generator (SplitMix64), so a failure replays.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }

    @Test(arguments: [1, 2, 3, 42, 2024] as [UInt64])
    func applyingChangesGivesTheBytesOfAFreshImage(seed: UInt64) throws {
        var generator = SeededGenerator(state: seed)
        let pool = (0..<40).map { "key\($0)" } + ["", "\u{E9}", "e\u{301}", "e", "\"", "\u{1}", "😀", "z\u{301}"]
        let values = ["0", "12345", "-1.5e10", "\"text\"", "\"a much longer string value\"", "[1,[2,{}]]", "null"]
        var image = FileImage()
        var expected: [MemberName: [UInt8]] = [:]
        for round in 0..<200 {
            var changes: [(name: String, value: [UInt8]?)] = []
            // Every other round changes only values the image holds, to take the splicing path.
            let replaceOnly = round % 2 == 1 && image.count > 0
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let name =
                    replaceOnly
                    ? image.name(at: Int.random(in: 0..<image.count, using: &generator))
                    : pool.randomElement(using: &generator) ?? ""
                let value: [UInt8]? =
                    !replaceOnly && Int.random(in: 0..<4, using: &generator) == 0
                    ? nil : bytes(values.randomElement(using: &generator) ?? "0")
                changes.append((name, value))
                expected[MemberName(name)] = value
            }
            image.apply(changes)
            let fresh = FileImage(
                members: expected.map { (name: $0.key.string, value: $0.value) }.sorted {
                    precedesInFile($0.name, $1.name)
                })
            #expect(image.bytes == fresh.bytes, "round \(round)")
            #expect(image.names.map { Array($0.utf8) } == fresh.names.map { Array($0.utf8) }, "round \(round)")
            try expectConsistent(image)
        }
    }

    // MARK: Images of indexed files

    /// The address of a byte array's buffer.
    func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    /// Indexes `text`, builds its image, and checks it against the image of the parsed members: the same bytes and
    /// the same lookups. Returns the index and the image.
    @discardableResult
    func indexedImage(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (index: JSONIndex, image: FileImage) {
        let input = bytes(text)
        let index = try JSONIndex(bytes: input)
        let image = FileImage(index: index)
        let fresh = FileImage(members: try JSONParser.parse(input))
        #expect(image.bytes == fresh.bytes, sourceLocation: sourceLocation)
        #expect(image.members == fresh.members, sourceLocation: sourceLocation)
        for position in 0..<fresh.count {
            #expect(image.index(of: fresh.name(at: position)) == position, sourceLocation: sourceLocation)
        }
        try expectConsistent(image, sourceLocation: sourceLocation)
        return (index, image)
    }

    @Test func aCanonicalFileIsAdoptedWithoutACopy() throws {
        let written = image([
            "plain": "1", "quote\"back\\slash\n\u{1}": "[1,{\"a\":\"b c\"}]", "\u{E9}": "\"é\"", "e\u{301}": "null",
            "": "{}",
        ])
        let (index, adopted) = try indexedImage(text(written))
        #expect(index.isCanonical)
        #expect(adopted.bytes == written.bytes)
        #expect(address(adopted.bytes) == address(index.bytes))
        #expect(adopted.names.map { Array($0.utf8) } == written.names.map { Array($0.utf8) })
        #expect(adopted.index(of: "quote\"back\\slash\n\u{1}") == 3)
        #expect(adopted.value(at: 3).elementsEqual(bytes("[1,{\"a\":\"b c\"}]")))
        #expect(adopted.index(of: "quote") == nil)
    }

    @Test func otherFilesAreLaidOutAgain() throws {
        let texts = [
            "{\n  \"a\":  1\n}\n",  // one space too many
            "{\n  \"b\": 1,\n  \"a\": 2\n}\n",  // unsorted
            "{\n  \"\\u0041\": 1\n}\n",  // an escape FileImage does not write
            "{\n  \"\\u00e9\": 1,\n  \"e\\u0301\": 2,\n  \"\\/\": [1, 2]\n}\n",
            #"{"z": {"b": 1, "a": [1, 2]}, "\u0042": "x y", "a\u0000": 0, "\n": 1}"#, " {} ", "{}",
        ]
        for text in texts {
            let (index, image) = try indexedImage(text)
            #expect(!index.isCanonical, "\(text.debugDescription)")
            #expect(address(image.bytes) != address(index.bytes), "\(text.debugDescription)")
        }
        let (_, image) = try indexedImage("{\n  \"\\u0041\": 1\n}\n")
        #expect(text(image) == "{\n  \"A\": 1\n}\n")
        let (_, unsorted) = try indexedImage(#"{"b": 1, "\u0061": [1, 2], "\"": {"y": 2, "x": 1}}"#)
        #expect(text(unsorted) == "{\n  \"\\\"\": {\"y\":2,\"x\":1},\n  \"a\": [1,2],\n  \"b\": 1\n}\n")
        #expect(try indexedImage("{}\n").image.bytes == bytes("{}\n"))
    }

    @Test func changesToAnAdoptedImageGiveTheBytesOfAFreshOne() throws {
        let names = (0..<50).map { "key\($0 < 10 ? "0" : "")\($0)" } + ["say \"hi\"", "\u{E9}"]
        let written = FileImage(members: names.map { (name: $0, value: bytes("[\"\($0.count)\"]")) })
        let index = try JSONIndex(bytes: written.bytes)
        let original = index.bytes
        var adopted = FileImage(index: index)
        #expect(address(adopted.bytes) == address(index.bytes))
        var expected = written.members.map { (name: $0.key, value: $0.value) }
        // A value of the same length, one longer, a removal, an addition, a name with escapes changed.
        let rounds: [[(name: String, value: [UInt8]?)]] = [
            [(name: "key07", value: bytes("[\"x\"]"))], [(name: "key20", value: bytes("[1,2,3,4,5]"))],
            [(name: "key03", value: nil), (name: "key300", value: bytes("3"))],
            [(name: "say \"hi\"", value: bytes("\"hello\"")), (name: "\u{E9}", value: nil)],
        ]
        for changes in rounds {
            adopted.apply(changes)
            for change in changes {
                expected.removeAll { sameBytes($0.name, change.name) }
                if let value = change.value { expected.append((name: change.name, value: value)) }
            }
            let fresh = FileImage(members: expected.sorted { precedesInFile($0.name, $1.name) })
            #expect(adopted.bytes == fresh.bytes)
            try expectConsistent(adopted)
        }
        // The index's bytes were not changed under it.
        #expect(index.bytes == original)
        #expect(index.bytes == written.bytes)
    }
}
