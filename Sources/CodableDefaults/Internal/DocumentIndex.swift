#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// An index of a store file's top-level members as byte ranges of the file, built by a validating scan.
//
// `DocumentIndex` runs the parser of Document.swift over the bytes (`Document.scan`) with exactly the rules and
// errors of `Document.parse`, but instead of a key `String` and a value array per member it records four offsets
// per member in one flat array and a hash table of member positions. Keys and values are decoded or copied only
// when asked for.

/// The top-level members of a valid store file, as offsets into its bytes, with a lookup by name.
///
/// Building one validates the whole file as `Document.parse` does and throws the same `DocumentError` on a bad file.
/// It then holds the file's bytes (shared, not copied), `spans` (four `UInt32` per member) and a hash table of
/// `UInt64` slots at most three quarters full: 16 bytes per member plus 11 to 21 bytes of table, whatever the keys
/// and values.
/// Names compare by their decoded UTF-8 bytes, as `Document.parse` compares them: `"\u00E9"` and `"é"` are one name,
/// `"é"` and `"e\u0301"` two. A value type without locks: use it from one thread at a time, or share it read-only.
struct DocumentIndex: Sendable {
    /// The largest input an index can hold: its offsets are 31 bits, one bit of each 32 being a flag.
    static let maximumCount = Int(Int32.max)

    /// The bytes of the store file.
    let bytes: [UInt8]
    /// Four entries per member, in file order: the start and end of the name's contents (between the quotes), then of
    /// the value as written. The top bit of the name's end says the name has escapes, that of the value's end that
    /// the value has whitespace outside strings.
    private(set) var spans: [UInt32] = []
    /// Open addressing, linear probing: each slot holds the top 32 bits of a member's name hash (which also choose
    /// its first slot) over its position plus one, or 0 when empty. Its count is a power of two; it is at most three
    /// quarters full. The hash bits spare most comparisons of names, which would each touch the file's bytes.
    private(set) var slots: [UInt64] = []

    /// The top bit of a 32-bit span entry.
    private static let flag: UInt32 = 0x8000_0000

    /// Scans `bytes`, a whole store file, with the rules of `Document.parse(_:maxDepth:)`, and indexes its members.
    ///
    /// Throws the `DocumentError` that `Document.parse` throws on the same bytes. `bytes.count` must be at most
    /// `maximumCount` (2 GiB); larger inputs need `Document.parse`. Runs on the calling thread.
    init(bytes: [UInt8], maxDepth: Int = 512) throws(DocumentError) {
        self.bytes = bytes
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DocumentError) -> Builder in
                var builder = Builder(bytes: buffer)
                try Document.scan(buffer, maxDepth: maxDepth, into: &builder)
                return builder
            }
        }
        let builder = try result.get()
        spans = builder.spans
        slots = builder.slots
    }

    /// The number of top-level members.
    var count: Int { spans.count / 4 }

    /// The range of the contents (between the quotes) of the name of the member at `position`, as written.
    func keyRange(at position: Int) -> Range<Int> {
        Int(spans[4 * position])..<Int(spans[4 * position + 1] & ~Self.flag)
    }

    /// Whether the name of the member at `position` contains a backslash escape.
    func keyHasEscapes(at position: Int) -> Bool {
        spans[4 * position + 1] & Self.flag != 0
    }

    /// The range of the value of the member at `position`, as written (it may hold whitespace).
    func valueRange(at position: Int) -> Range<Int> {
        Int(spans[4 * position + 2])..<Int(spans[4 * position + 3] & ~Self.flag)
    }

    /// The name of the member at `position`, escapes resolved; built on each call.
    func key(at position: Int) -> String {
        var scratch: [UInt8] = []
        let range = keyRange(at: position)
        let escaped = keyHasEscapes(at: position)
        return bytes.withUnsafeBytes { buffer in
            Document.decodeString(
                UnsafeRawBufferPointer(rebasing: buffer[range]), hasEscapes: escaped, scratch: &scratch)
        }
    }

    /// The value of the member at `position` as compact JSON bytes, equal to the value `Document.parse` returns for
    /// it; built on each call.
    func value(at position: Int) -> [UInt8] {
        let range = valueRange(at: position)
        let hasWhitespace = spans[4 * position + 3] & Self.flag != 0
        return bytes.withUnsafeBytes { buffer in
            Document.compacted(UnsafeRawBufferPointer(rebasing: buffer[range]), hasWhitespace: hasWhitespace)
        }
    }

    /// The position of the member whose decoded name has the UTF-8 bytes `name`, or nil if there is none.
    func position(ofName name: UnsafeRawBufferPointer) -> Int? {
        guard !slots.isEmpty else { return nil }
        return bytes.withUnsafeBytes { buffer in
            spans.withUnsafeBufferPointer { spans in
                slots.withUnsafeBufferPointer { slots in
                    var scratch: [UInt8] = []
                    let (position, _) = Self.probe(
                        for: name, tag: Self.tag(name), slots: slots, spans: spans, in: buffer, scratch: &scratch)
                    return position
                }
            }
        }
    }

    /// Where `name`, whose hash bits are `tag`, is in the table: the position of the member with that name and its
    /// slot, or nil and the empty slot where it would go. `slots` must have an empty slot.
    @inline(__always)
    static func probe(
        for name: UnsafeRawBufferPointer, tag: UInt64, slots: UnsafeBufferPointer<UInt64>,
        spans: UnsafeBufferPointer<UInt32>, in bytes: UnsafeRawBufferPointer, scratch: inout [UInt8]
    ) -> (position: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = firstSlot(tag, mask: mask)
        while slots[slot] != 0 {
            let entry = slots[slot]
            let position = Int(truncatingIfNeeded: entry & positionMask) - 1
            if entry & ~positionMask == tag
                && Self.name(at: position, spans: spans, in: bytes, equals: name, scratch: &scratch)
            {
                return (position, slot)
            }
            slot = (slot + 1) & mask
        }
        return (nil, slot)
    }

    /// The position of the member named `name`, compared by UTF-8 bytes (never by canonical equivalence).
    func position(of name: String) -> Int? {
        var name = name
        return name.withUTF8 { position(ofName: UnsafeRawBufferPointer($0)) }
    }

    // MARK: Hashing

    /// The low 32 bits of a slot: a position plus one.
    static let positionMask: UInt64 = 0xFFFF_FFFF

    /// The top 32 bits of the hash of a name's decoded UTF-8 bytes, in place (the low 32 bits zero).
    @inline(__always)
    static func tag(_ name: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: name)
        return UInt64(truncatingIfNeeded: hasher.finalize()) & ~positionMask
    }

    /// The first slot to probe for a name with hash bits `tag`, in a table of `mask + 1` slots.
    @inline(__always)
    static func firstSlot(_ tag: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: tag >> 32) & mask
    }

    /// Whether the decoded name of the member at `position` has the bytes `name`. Without escapes the name is
    /// compared as written; with escapes it is decoded into `scratch` first.
    @inline(__always)
    static func name(
        at position: Int, spans: UnsafeBufferPointer<UInt32>, in bytes: UnsafeRawBufferPointer,
        equals name: UnsafeRawBufferPointer, scratch: inout [UInt8]
    ) -> Bool {
        let start = Int(spans[4 * position])
        let endEntry = spans[4 * position + 1]
        let written = UnsafeRawBufferPointer(rebasing: bytes[start..<Int(endEntry & ~flag)])
        guard endEntry & flag != 0 else {
            return sameBytes(written, name)
        }
        Document.decodeBytes(written, into: &scratch)
        return scratch.withUnsafeBytes { sameBytes($0, name) }
    }

    /// Whether two byte buffers hold the same bytes.
    @inline(__always)
    static func sameBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard let left = lhs.baseAddress, let right = rhs.baseAddress, lhs.count > 0 else { return true }
        return memcmp(left, right, lhs.count) == 0
    }

    // MARK: Building

    /// The sink of the scan: appends spans and inserts each name into the table, reporting duplicates.
    private struct Builder: DocumentMemberSink {
        /// The input.
        let bytes: UnsafeRawBufferPointer
        /// See `DocumentIndex.spans`.
        var spans: [UInt32] = []
        /// See `DocumentIndex.slots`.
        var slots: [UInt64]
        /// Decoded bytes of an escaped name being inserted.
        var decoded: [UInt8] = []
        /// Decoded bytes of an escaped name it is compared with.
        var scratch: [UInt8] = []

        /// An empty index of `bytes`, with room for one member per 64 bytes (as `Document.parse` reserves).
        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            let expected = max(bytes.count / 64, 4)
            spans.reserveCapacity(4 * expected)
            var capacity = 8
            while 3 * capacity < 4 * expected { capacity <<= 1 }
            slots = [UInt64](repeating: 0, count: capacity)
        }

        mutating func insertName(_ key: Range<Int>, hasEscapes: Bool) -> Bool {
            let written = UnsafeRawBufferPointer(rebasing: bytes[key])
            let inserted: Bool
            if hasEscapes {
                var decoded = self.decoded
                self.decoded = []
                Document.decodeBytes(written, into: &decoded)
                inserted = decoded.withUnsafeBytes { insert($0) }
                self.decoded = decoded
            } else {
                inserted = insert(written)
            }
            guard inserted else { return false }
            spans.append(UInt32(key.lowerBound))
            spans.append(UInt32(key.upperBound) | (hasEscapes ? DocumentIndex.flag : 0))
            return true
        }

        mutating func append(value: Range<Int>, hasWhitespace: Bool) {
            spans.append(UInt32(value.lowerBound))
            spans.append(UInt32(value.upperBound) | (hasWhitespace ? DocumentIndex.flag : 0))
        }

        /// Inserts the member about to be appended (position `spans.count / 4`) under the decoded name `name`;
        /// returns false if a member already has that name.
        mutating func insert(_ name: UnsafeRawBufferPointer) -> Bool {
            let position = spans.count / 4
            if 4 * (position + 1) > 3 * slots.count {
                grow()
            }
            let tag = DocumentIndex.tag(name)
            let bytes = self.bytes
            var scratch = self.scratch
            self.scratch = []
            defer { self.scratch = scratch }
            return spans.withUnsafeBufferPointer { spans in
                slots.withUnsafeMutableBufferPointer { slots in
                    let (existing, slot) = DocumentIndex.probe(
                        for: name, tag: tag, slots: UnsafeBufferPointer(slots), spans: spans, in: bytes,
                        scratch: &scratch)
                    guard existing == nil else { return false }
                    slots[slot] = tag | UInt64(position + 1)
                    return true
                }
            }
        }

        /// Doubles the table and moves every entry to its place in it (its hash bits say where).
        mutating func grow() {
            var grown = [UInt64](repeating: 0, count: slots.count * 2)
            let mask = grown.count - 1
            for entry in slots where entry != 0 {
                var slot = DocumentIndex.firstSlot(entry, mask: mask)
                while grown[slot] != 0 { slot = (slot + 1) & mask }
                grown[slot] = entry
            }
            slots = grown
        }
    }
}
