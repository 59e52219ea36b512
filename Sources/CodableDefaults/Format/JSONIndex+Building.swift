// How `JSONIndex` is built: the sink of `JSONParser.scan`.
//
// While the names come in strictly increasing order (by decoded UTF-8 bytes, as in every file this library writes)
// no name can repeat an earlier one, so each is only compared with the one before and no hash table is kept. At the
// first name that is not greater than the one before, a hash table of the members so far is built, and from then on
// every name is inserted into it, a name already there being the duplicate the scan reports. The same calls check,
// a few bytes per member, whether the file is exactly the layout `FileImage` writes.

extension JSONIndex {
    /// The sink of the scan: appends spans, compares each name with the one before or inserts it into the table,
    /// reporting duplicates, and follows whether the file is canonical.
    struct Builder: ParsedMemberSink {
        /// The input.
        let bytes: UnsafeRawBufferPointer
        /// The spans so far (see `JSONIndex.spans`): `spanCount` entries of `spanCapacity` initialized. Held as
        /// a raw allocation rather than an array so that appending costs no uniqueness check; `finish` copies them
        /// into an array of exactly their size, `release` frees them.
        var spans: UnsafeMutablePointer<UInt32>
        /// The number of entries of `spans` in use: four per member whose value has been scanned, two more while a
        /// name waits for its value.
        var spanCount = 0
        /// The number of entries `spans` has room for.
        var spanCapacity: Int
        /// See `JSONIndex.slots`: empty while `isSorted`.
        var slots: [UInt64] = []
        /// Whether every name so far is greater than the one before.
        var isSorted = true
        /// Whether the bytes so far are laid out as `FileImage` writes them (see `JSONIndex.isCanonical`).
        var isCanonical = true
        /// The members the table is first sized for: one per 64 bytes of input (as `JSONParser.parse` reserves).
        let expected: Int
        /// Decoded bytes of an escaped name being inserted.
        var decoded: [UInt8] = []
        /// Decoded bytes of the previous name when it has escapes (while sorted).
        var previousDecoded: [UInt8] = []
        /// Decoded bytes of an escaped name it is compared with.
        var scratch: [UInt8] = []
        /// An escaped name quoted again, to compare with how the file quotes it.
        var quoted: [UInt8] = []

        /// An empty index of `bytes`, with room for one member per 64 bytes.
        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            expected = max(bytes.count / 64, 4)
            spanCapacity = 4 * expected
            spans = .allocate(capacity: spanCapacity)
        }

        /// The spans so far.
        var spanBuffer: UnsafeBufferPointer<UInt32> { UnsafeBufferPointer(start: spans, count: spanCount) }

        mutating func insertName(_ key: Range<Int>, hasEscapes: Bool) -> Bool {
            let position = spanCount / 4
            if spanCount + 4 > spanCapacity { reserve(afterOffset: key.lowerBound) }
            if hasEscapes {
                JSONParser.decodeBytes(UnsafeRawBufferPointer(rebasing: bytes[key]), into: &decoded)
            }
            if isSorted {
                if followsPrevious(key, hasEscapes: hasEscapes, position: position) {
                    if isCanonical { isCanonical = isCanonicalName(key, hasEscapes: hasEscapes, position: position) }
                    if hasEscapes { swap(&decoded, &previousDecoded) }
                    appendName(key, hasEscapes: hasEscapes)
                    return true
                }
                isSorted = false
                isCanonical = false
                buildTable()
            }
            let inserted: Bool
            if hasEscapes {
                let decoded = self.decoded
                inserted = decoded.withUnsafeBytes { insert($0) }
            } else {
                inserted = insert(UnsafeRawBufferPointer(rebasing: bytes[key]))
            }
            guard inserted else { return false }
            appendName(key, hasEscapes: hasEscapes)
            return true
        }

        mutating func append(value: Range<Int>, hasWhitespace: Bool) {
            if isCanonical {
                // After the name's closing quote: exactly ": " and the value, which has no whitespace.
                let keyEnd = Int(spans[spanCount - 1] & ~JSONIndex.flag)
                isCanonical =
                    !hasWhitespace && value.lowerBound == keyEnd + 3 && bytes[keyEnd + 1] == 0x3A  // :
                    && bytes[keyEnd + 2] == 0x20
            }
            spans[spanCount] = UInt32(value.lowerBound)
            spans[spanCount + 1] = UInt32(value.upperBound) | (hasWhitespace ? JSONIndex.flag : 0)
            spanCount += 2
        }

        /// Ends the build once the scan has succeeded: checks the end of a canonical file, and returns the spans as
        /// an array of exactly their size (freeing their allocation).
        mutating func finish() -> [UInt32] {
            if isCanonical {
                if spanCount == 0 {
                    isCanonical = bytes.elementsEqual([0x7B, 0x7D, 0x0A])  // {}\n
                } else {
                    let end = Int(spans[spanCount - 1] & ~JSONIndex.flag)
                    isCanonical =
                        bytes.count == end + 3 && bytes[end] == 0x0A && bytes[end + 1] == 0x7D  // \n }
                        && bytes[end + 2] == 0x0A
                }
            }
            let spans = self.spans
            let result = [UInt32](unsafeUninitializedCapacity: spanCount) { buffer, initialized in
                if spanCount > 0, let base = buffer.baseAddress { base.initialize(from: spans, count: spanCount) }
                initialized = spanCount
            }
            release()
            return result
        }

        /// Frees the spans' allocation (in `finish`, or when the scan failed). The builder is not used after.
        mutating func release() {
            spans.deallocate()
            spanCount = 0
            spanCapacity = 0
        }

        /// Makes room in `spans` when it is full, `offset` bytes into the input: for as many members as the density
        /// so far predicts for the whole input plus a sixteenth, and at least a quarter more than now.
        mutating func reserve(afterOffset offset: Int) {
            let members = spanCount / 4
            let predicted = offset > 0 ? members * bytes.count / offset : 2 * members
            let wanted = 4 * max(predicted + predicted / 16 + 16, members + members / 4 + 16)
            let grown = UnsafeMutablePointer<UInt32>.allocate(capacity: wanted)
            grown.moveInitialize(from: spans, count: spanCount)
            spans.deallocate()
            spans = grown
            spanCapacity = wanted
        }

        /// Appends the spans of a name that has been accepted.
        @inline(__always)
        mutating func appendName(_ key: Range<Int>, hasEscapes: Bool) {
            spans[spanCount] = UInt32(key.lowerBound)
            spans[spanCount + 1] = UInt32(key.upperBound) | (hasEscapes ? JSONIndex.flag : 0)
            spanCount += 2
        }

        // MARK: Sorted

        /// Whether the name `key` (decoded into `decoded` when it has escapes) is greater than the name of the
        /// member before it, by decoded UTF-8 bytes; true for the first member.
        @inline(__always)
        func followsPrevious(_ key: Range<Int>, hasEscapes: Bool, position: Int) -> Bool {
            guard position > 0 else { return true }
            let previousStart = Int(spans[4 * position - 4])
            let previousEnd = spans[4 * position - 3]
            let previousWritten = UnsafeRawBufferPointer(
                rebasing: bytes[previousStart..<Int(previousEnd & ~JSONIndex.flag)])
            let written = UnsafeRawBufferPointer(rebasing: bytes[key])
            switch (previousEnd & JSONIndex.flag != 0, hasEscapes) {
            case (false, false):
                return JSONIndex.order(previousWritten, written) < 0
            case (false, true):
                return decoded.withUnsafeBytes { JSONIndex.order(previousWritten, $0) < 0 }
            case (true, false):
                return previousDecoded.withUnsafeBytes { JSONIndex.order($0, written) < 0 }
            case (true, true):
                return previousDecoded.withUnsafeBytes { previous in
                    decoded.withUnsafeBytes { JSONIndex.order(previous, $0) < 0 }
                }
            }
        }

        /// Whether the name `key` of the member at `position` (in order) is where and as `FileImage` writes it: its
        /// opening quote after `{`, a line break and two spaces for the first member, after the previous value, `,`,
        /// a line break and two spaces for the others; quoted as `JSONParser.appendQuoted` quotes its decoded bytes
        /// (a name without escapes always is: JSON allows no raw quote, backslash or control character in it).
        @inline(__always)
        mutating func isCanonicalName(_ key: Range<Int>, hasEscapes: Bool, position: Int) -> Bool {
            // The bytes before the opening quote start at the top of the file or at the end of the previous value.
            let leadStart = position == 0 ? 0 : Int(spans[4 * position - 1] & ~JSONIndex.flag)
            guard key.lowerBound == leadStart + 5,
                bytes[leadStart] == (position == 0 ? 0x7B : 0x2C),  // { or ,
                bytes[leadStart + 1] == 0x0A, bytes[leadStart + 2] == 0x20, bytes[leadStart + 3] == 0x20
            else { return false }
            guard hasEscapes else { return true }
            quoted.removeAll(keepingCapacity: true)
            JSONParser.appendQuoted(utf8: decoded, to: &quoted)
            return bytes[key.lowerBound - 1..<key.upperBound + 1].elementsEqual(quoted)
        }

        // MARK: Hashed

        /// Builds the hash table of the members so far, which are sorted (so distinct), when the first name out of
        /// order comes: sized for `expected` members, or more.
        mutating func buildTable() {
            let members = spanCount / 4
            var capacity = 8
            while 3 * capacity < 4 * max(expected, members + 1) { capacity <<= 1 }
            slots = [UInt64](repeating: 0, count: capacity)
            let mask = capacity - 1
            var scratch = self.scratch
            self.scratch = []
            defer { self.scratch = scratch }
            let bytes = self.bytes
            let spans = spanBuffer
            slots.withUnsafeMutableBufferPointer { slots in
                for position in 0..<members {
                    let start = Int(spans[4 * position])
                    let endEntry = spans[4 * position + 1]
                    let written = UnsafeRawBufferPointer(rebasing: bytes[start..<Int(endEntry & ~JSONIndex.flag)])
                    let tag: UInt64
                    if endEntry & JSONIndex.flag != 0 {
                        JSONParser.decodeBytes(written, into: &scratch)
                        tag = scratch.withUnsafeBytes { JSONIndex.tag($0) }
                    } else {
                        tag = JSONIndex.tag(written)
                    }
                    // The names are distinct: no comparison, only a free slot.
                    var slot = JSONIndex.firstSlot(tag, mask: mask)
                    while slots[slot] != 0 { slot = (slot + 1) & mask }
                    slots[slot] = tag | UInt64(position + 1)
                }
            }
        }

        /// Inserts the member about to be appended (position `spanCount / 4`) under the decoded name `name`;
        /// returns false if a member already has that name.
        mutating func insert(_ name: UnsafeRawBufferPointer) -> Bool {
            let position = spanCount / 4
            if 4 * (position + 1) > 3 * slots.count {
                grow()
            }
            let tag = JSONIndex.tag(name)
            let bytes = self.bytes
            var scratch = self.scratch
            self.scratch = []
            defer { self.scratch = scratch }
            let spans = spanBuffer
            return slots.withUnsafeMutableBufferPointer { slots in
                let (existing, slot) = JSONIndex.probe(
                    for: name, tag: tag, slots: UnsafeBufferPointer(slots), spans: spans, in: bytes, scratch: &scratch)
                guard existing == nil else { return false }
                slots[slot] = tag | UInt64(position + 1)
                return true
            }
        }

        /// Doubles the table and moves every entry to its place in it (its hash bits say where).
        mutating func grow() {
            var grown = [UInt64](repeating: 0, count: slots.count * 2)
            let mask = grown.count - 1
            for entry in slots where entry != 0 {
                var slot = JSONIndex.firstSlot(entry, mask: mask)
                while grown[slot] != 0 { slot = (slot + 1) & mask }
                grown[slot] = entry
            }
            slots = grown
        }
    }
}
