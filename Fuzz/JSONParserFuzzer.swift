// libFuzzer entry point for the store file's parser (`JSONParser.parse`), its index scan (`JSONIndex`), the value
// validator (`JSONParser.compactValue`) and the file's writer (`FileImage`).
//
// This file is compiled together with Sources/CodableDefaults/Format/JSONParser.swift, JSONParser+Position.swift,
// JSONIndex.swift, JSONIndex+Building.swift, FileImage.swift, FileImage+Index.swift and
// Sources/CodableDefaults/Storage/MemberName.swift into one module by Scripts/fuzz.sh (they use only the standard
// library and the C library), so it needs no package target:
//
//     swiftc -parse-as-library -package-name CodableDefaults -sanitize=fuzzer,address -O -g \
//         Sources/CodableDefaults/Format/JSONParser.swift \
//         Sources/CodableDefaults/Format/JSONParser+Position.swift Sources/CodableDefaults/Format/JSONIndex.swift \
//         Sources/CodableDefaults/Format/JSONIndex+Building.swift Sources/CodableDefaults/Format/FileImage.swift \
//         Sources/CodableDefaults/Format/FileImage+Index.swift \
//         Sources/CodableDefaults/Storage/MemberName.swift Fuzz/JSONParserFuzzer.swift -o json-parser-fuzzer
//
// Beyond "does not crash, does not hang, no memory error", it checks properties every accepted input must
// have, and traps (so libFuzzer records the input) when one does not hold:
// - the `FileImage` of a parsed document parses back to the same members in file order (sorted by UTF-8 bytes),
//   names byte for byte (two canonically equivalent names, such as "\u00E9" and "e\u0301", stay two members
//   with their own bytes), and finds each member by name;
// - applying changes drawn from the input (values replaced, members removed, names added, some repeated) to that
//   image gives exactly the bytes of a fresh `FileImage` of the resulting members, over several rounds;
// - the index scan (`JSONIndex`) agrees with `JSONParser.parse`: both accept or both reject with the same error
//   (kind, offset, line, column, key, message); on acceptance every member's name (byte for byte) and compacted
//   value are the same, each name is found at its position, and a few absent names are not found;
// - the image of the index (`FileImage(index:)`) has the bytes of the image of the parsed members and the same
//   lookups; the index calls the input canonical exactly when the input is those bytes; those bytes, indexed again,
//   are canonical and adopted by `FileImage(index:)` (the same buffer, no copy), with the same lookups, and changes
//   applied to the adopted image give the bytes of a fresh image;
// - every member value is compact: `compactValue` accepts it and returns it unchanged;
// - `compactValue` of any input is idempotent;
// - errors point inside the input: 0 <= offset <= count, line >= 1, column >= 1.

/// Stops the fuzzer with `message` when `condition` is false: the trap makes libFuzzer save the input.
@inline(never)
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("JSONParserFuzzer: property failed: \(message())") }
}

/// Checks that an error's position lies inside the input.
func checkPosition(_ error: JSONParseError, count: Int) {
    require(error.offset >= 0 && error.offset <= count, "offset \(error.offset) outside 0...\(count)")
    require(error.line >= 1 && error.column >= 1, "position \(error.line):\(error.column)")
    require(!error.message.isEmpty, "empty message")
}

/// Runs every check on one input.
func fuzzOne(_ bytes: [UInt8]) {
    for maxDepth in [512, 4] {
        checkIndex(bytes, maxDepth: maxDepth)
        do {
            let members = try JSONParser.parse(bytes, maxDepth: maxDepth)
            let image = FileImage(members: members)
            checkRoundTrip(image, of: members, maxDepth: maxDepth)
            if maxDepth == 512 { checkApply(to: image, members: members, seed: bytes) }
            for member in members {
                do {
                    let compact = try JSONParser.compactValue(member.value, maxDepth: maxDepth)
                    require(compact == member.value, "a member value is not compact")
                } catch {
                    require(false, "a member value does not validate: \(error.message)")
                }
            }
        } catch {
            checkPosition(error, count: bytes.count)
        }
        do {
            let compact = try JSONParser.compactValue(bytes, maxDepth: maxDepth)
            do {
                let again = try JSONParser.compactValue(compact, maxDepth: maxDepth)
                require(again == compact, "compactValue is not idempotent")
            } catch {
                require(false, "compactValue's output does not validate: \(error.message)")
            }
        } catch {
            checkPosition(error, count: bytes.count)
        }
    }
}

/// Checks that `JSONIndex` accepts `bytes` exactly when `JSONParser.parse` does, with the same error, the same
/// names and values, and a lookup that finds every name and no absent one.
func checkIndex(_ bytes: [UInt8], maxDepth: Int) {
    let parsed = Result { () throws(JSONParseError) in try JSONParser.parse(bytes, maxDepth: maxDepth) }
    let indexed = Result { () throws(JSONParseError) in try JSONIndex(bytes: bytes, maxDepth: maxDepth) }
    switch (parsed, indexed) {
    case (.success(let members), .success(let index)):
        checkIndexedImage(index, members: members, maxDepth: maxDepth, seed: bytes)
        require(index.count == members.count, "the index has \(index.count) members, parse \(members.count)")
        for (position, member) in members.enumerated() {
            require(sameBytes(index.key(at: position), member.key), "the index decoded another name")
            require(index.value(at: position) == member.value, "the index compacted another value")
            require(index.position(of: member.key) == position, "the index did not find a name")
            for absent in [member.key + "\u{301}", member.key + "\u{0}", "\u{1}" + member.key]
            where !members.contains(where: { sameBytes($0.key, absent) }) {
                require(index.position(of: absent) == nil, "the index found an absent name")
            }
        }
    case (.failure(let parseError), .failure(let indexError)):
        require(indexError == parseError, "the index threw \(indexError), parse \(parseError)")
    case (.success, .failure(let indexError)):
        require(false, "parse accepted, the index refused: \(indexError.message)")
    case (.failure(let parseError), .success):
        require(false, "the index accepted, parse refused: \(parseError.message)")
    }
}

/// Checks that the image of an accepted input's index is the image of its parsed members, byte for byte, with the
/// same lookups; that the index calls the input canonical exactly when it is that image's bytes; and that the image's
/// bytes, indexed again, are canonical and adopted (the same buffer), and take changes as a fresh image does.
func checkIndexedImage(_ index: JSONIndex, members: [ParsedMember], maxDepth: Int, seed: [UInt8]) {
    let fresh = FileImage(members: members)
    let image = FileImage(index: index)
    require(image.bytes == fresh.bytes, "FileImage(index:) gave other bytes than FileImage(members:)")
    checkSameLookups(image, fresh)
    require(index.isCanonical == (index.bytes == fresh.bytes), "the index misjudged whether the input is canonical")
    let canonical = Result { () throws(JSONParseError) in try JSONIndex(bytes: fresh.bytes, maxDepth: maxDepth) }
    guard case .success(let reindexed) = canonical else {
        require(false, "the index refused a FileImage's bytes")
        return
    }
    require(reindexed.isSorted && reindexed.isCanonical, "a FileImage's bytes are not canonical to the index")
    let adopted = FileImage(index: reindexed)
    require(adopted.bytes == fresh.bytes, "an adopted image has other bytes")
    let shared = adopted.bytes.withUnsafeBufferPointer { image in
        reindexed.bytes.withUnsafeBufferPointer { $0.baseAddress == image.baseAddress }
    }
    require(shared || reindexed.count == 0, "a canonical file was copied, not adopted")
    checkSameLookups(adopted, fresh)
    if maxDepth == 512 { checkApply(to: adopted, members: fresh.members, seed: seed) }
}

/// Checks that two images with the same bytes find the same names, and do not find names they do not hold.
func checkSameLookups(_ image: FileImage, _ fresh: FileImage) {
    require(image.count == fresh.count, "the images have \(image.count) and \(fresh.count) members")
    for position in 0..<fresh.count {
        let name = fresh.name(at: position)
        require(sameBytes(image.name(at: position), name), "the images have other names")
        require(image.index(of: name) == position, "an image did not find a name")
        for absent in [name + "\u{301}", name + "\u{0}", "\u{1}" + name] where fresh.index(of: absent) == nil {
            require(image.index(of: absent) == nil, "an image found an absent name")
        }
    }
}

/// Checks that `image`, built from parsed `members`, parses back to them in file order and finds each by name.
func checkRoundTrip(_ image: FileImage, of members: [ParsedMember], maxDepth: Int) {
    let sorted = members.sorted { precedesInFile($0.key, $1.key) }
    do {
        let reparsed = try JSONParser.parse(image.bytes, maxDepth: maxDepth)
        require(reparsed == sorted, "FileImage/parse round trip changed the members")
    } catch {
        require(false, "the FileImage of a document does not parse: \(error.message)")
    }
    require(image.members == sorted, "the FileImage's members are not the sorted members")
    for (position, member) in sorted.enumerated() {
        require(image.index(of: member.key) == position, "index(of:) did not find a member")
    }
}

/// A small deterministic generator (SplitMix64) seeded from the input, so a saved input replays exactly.
struct Generator {
    var state: UInt64

    init(seed: [UInt8]) {
        state = 0x9E37_79B9_7F4A_7C15
        for byte in seed { state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
    }

    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Int(mixed % UInt64(max(bound, 1)))
    }
}

/// Applies rounds of changes drawn from the input to `image` and checks each result against a fresh image of the
/// members it should hold.
func checkApply(to image: FileImage, members: [ParsedMember], seed: [UInt8]) {
    var generator = Generator(seed: seed)
    var image = image
    var expected: [MemberName: [UInt8]] = [:]
    for member in members { expected[MemberName(member.key)] = member.value }
    let values: [[UInt8]] =
        members.map(\.value) + [Array("1".utf8), Array("null".utf8), Array("\"a longer value than most\"".utf8), []]
    // New names: variants of the input's names (some canonically equivalent to others) and a few fixed ones.
    let names: [String] =
        members.map(\.key) + members.map { $0.key + "\u{301}" } + members.map { "e" + $0.key }
        + ["", "e\u{301}", "\u{E9}", "z", "\u{0}", "\"\\"]
    for _ in 0..<3 {
        var changes: [(name: String, value: [UInt8]?)] = []
        let replaceOnly = generator.next(2) == 0
        for _ in 0..<generator.next(14) {
            let name =
                replaceOnly && image.count > 0
                ? image.name(at: generator.next(image.count)) : names[generator.next(names.count)]
            let value: [UInt8]? = !replaceOnly && generator.next(3) == 0 ? nil : values[generator.next(values.count)]
            // An empty value stands for "the value it has, once more" (an unchanged value to skip).
            let written = value == [] ? expected[MemberName(name)] ?? Array("0".utf8) : value
            changes.append((name, written))
            expected[MemberName(name)] = written
        }
        image.apply(changes)
        let fresh = FileImage(
            members: expected.map { (name: $0.key.string, value: $0.value) }.sorted { precedesInFile($0.name, $1.name) }
        )
        require(image.bytes == fresh.bytes, "apply gave other bytes than a fresh FileImage of the result")
        require(image.members == fresh.members, "apply gave other members than a fresh FileImage of the result")
        for position in 0..<fresh.count {
            require(image.index(of: fresh.name(at: position)) == position, "index(of:) lost a member after apply")
        }
    }
}

/// The libFuzzer entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    fuzzOne(bytes)
    return 0
}
