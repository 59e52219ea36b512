// The image of a file that has been indexed, made without a `ParsedMember` (or a `String`) per member.

extension FileImage {
    /// The image of an indexed file's members: byte for byte the image
    /// ``init(members:)-(Collection<(String,[UInt8])>)`` makes of the members `JSONParser.parse` returns for the
    /// same bytes.
    ///
    /// A canonical file (`index.isCanonical`: exactly the bytes this type writes, as every file this library wrote)
    /// is adopted: the image shares the index's `bytes` (no copy; the first change that is not in place copies them)
    /// and takes its offsets from the index's spans in one pass, without decoding a name. Any other file is laid out
    /// again from the index: in name order (sorted first when the file is not), each name quoted again from its
    /// decoded bytes, each value compacted.
    init(index: JSONIndex) {
        let count = index.count
        guard count > 0 else {
            self.init()
            return
        }
        if index.isCanonical {
            // The index's flag of a name with escapes is the image's: the file quotes names as the image does.
            let offsets = index.spans.withUnsafeBufferPointer { spans in
                [UInt32](unsafeUninitializedCapacity: 2 * count) { buffer, initialized in
                    for position in 0..<count {
                        buffer[2 * position] = spans[4 * position + 2] | (spans[4 * position + 1] & JSONIndex.flag)
                        buffer[2 * position + 1] = spans[4 * position + 3]
                    }
                    initialized = 2 * count
                }
            }
            self.init(bytes: index.bytes, offsets: offsets)
            return
        }
        self.init(laidOut: index)
    }

    /// The image of the members of `index`, which is not canonical, laid out again.
    private init(laidOut index: JSONIndex) {
        let count = index.count
        var order = Array(0..<count)
        if !index.isSorted { Self.sortByName(&order, of: index) }
        // Each member may gain up to six bytes of layout (`,\n  "` and ` `); names and values never grow.
        var built: [UInt8] = [0x7B]  // {
        built.reserveCapacity(index.bytes.count + 6 * count + 4)
        var offsets: [UInt32] = []
        offsets.reserveCapacity(2 * count)
        var decoded: [UInt8] = []
        index.bytes.withUnsafeBytes { source in
            for position in order {
                built.append(contentsOf: offsets.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
                let name = UnsafeRawBufferPointer(rebasing: source[index.keyRange(at: position)])
                let hasEscapes: Bool
                if index.keyHasEscapes(at: position) {
                    JSONParser.decodeBytes(name, into: &decoded)
                    let quoteStart = built.count
                    JSONParser.appendQuoted(utf8: decoded, to: &built)
                    hasEscapes = built.count - quoteStart != decoded.count + 2
                } else {
                    // JSON allows no raw quote, backslash or control character in a name: it is quoted as written.
                    built.append(0x22)  // "
                    built.append(contentsOf: name)
                    built.append(0x22)
                    hasEscapes = false
                }
                built.append(contentsOf: [0x3A, 0x20])  // ": "
                let valueStart = built.count
                let value = UnsafeRawBufferPointer(rebasing: source[index.valueRange(at: position)])
                if index.valueHasWhitespace(at: position) {
                    built.append(contentsOf: JSONParser.compacted(value, hasWhitespace: true))
                } else {
                    built.append(contentsOf: value)
                }
                Self.appendOffsets(value: valueStart..<built.count, nameHasEscapes: hasEscapes, to: &offsets)
            }
        }
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        self.init(bytes: built, offsets: offsets)
    }

    /// Sorts `positions` of members of `index` by their decoded names (which are distinct: the index holds no
    /// duplicate).
    private static func sortByName(_ positions: inout [Int], of index: JSONIndex) {
        index.bytes.withUnsafeBytes { bytes in
            var left: [UInt8] = []
            var right: [UInt8] = []
            positions.sort { lhs, rhs in
                let written = UnsafeRawBufferPointer(rebasing: bytes[index.keyRange(at: rhs)])
                let rhsHasEscapes = index.keyHasEscapes(at: rhs)
                let name = UnsafeRawBufferPointer(rebasing: bytes[index.keyRange(at: lhs)])
                guard index.keyHasEscapes(at: lhs) else {
                    return JSONIndex.order(
                        ofWritten: written, hasEscapes: rhsHasEscapes, comparedWith: name, scratch: &right) > 0
                }
                JSONParser.decodeBytes(name, into: &left)
                return left.withUnsafeBytes {
                    JSONIndex.order(
                        ofWritten: written, hasEscapes: rhsHasEscapes, comparedWith: $0, scratch: &right) > 0
                }
            }
        }
    }
}
