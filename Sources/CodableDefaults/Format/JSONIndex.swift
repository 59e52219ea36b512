#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// An index of a store file's top-level members as byte ranges of the file, built by a validating scan.
//
// `JSONIndex` runs the parser of JSONParser.swift over the bytes (`JSONParser.scan`) with exactly the rules and
// errors of `JSONParser.parse`, but instead of a key `String` and a value array per member it records four offsets
// per member in one flat array. Files this library writes have strictly sorted names, so they cannot hold a
// duplicate and need no hash table: while each name is greater than the one before, none is kept and lookups are a
// binary search. At the first name out of order, a hash table of the members so far is built and every later name
// is checked against it. The scan also notes whether the file is exactly the layout `FileImage` writes, so that an
// image can take the file's bytes as they are. Keys and values are decoded or copied only when asked for.

/// The top-level members of a valid store file, as offsets into its bytes, with a lookup by name.
///
/// Building one validates the whole file as `JSONParser.parse` does and throws the same `JSONParseError` on a bad file.
/// It then holds the file's bytes (shared, not copied) and `spans`, four `UInt32` per member (16 bytes, in an array
/// of exactly that size). A file whose names are strictly increasing (``isSorted``, as every file this
/// library writes) needs nothing more: lookups are a binary search. Any other file also gets a hash table of
/// `UInt64` slots at most three quarters full: 11 to 21 bytes more per member, whatever the keys and values.
/// Names compare by their decoded UTF-8 bytes, as `JSONParser.parse` compares them: `"\u00E9"` and `"é"` are one name,
/// `"é"` and `"e\u0301"` two. A value type without locks: use it from one thread at a time, or share it read-only.
struct JSONIndex: Sendable {
    /// The largest input an index can hold: its offsets are 31 bits, one bit of each 32 being a flag.
    static let maximumCount = Int(Int32.max)

    /// The bytes of the store file.
    let bytes: [UInt8]
    /// Four entries per member, in file order: the start and end of the name's contents (between the quotes), then of
    /// the value as written. The top bit of the name's end says the name has escapes, that of the value's end that
    /// the value has whitespace outside strings.
    private(set) var spans: [UInt32] = []
    /// Empty when ``isSorted``. Otherwise open addressing, linear probing: each slot holds the top 32 bits of a
    /// member's name hash (which also choose its first slot) over its position plus one, or 0 when empty. Its count
    /// is a power of two; it is at most three quarters full. The hash bits spare most comparisons of names, which
    /// would each touch the file's bytes.
    private(set) var slots: [UInt64] = []
    /// Whether the members' decoded names are strictly increasing by their UTF-8 bytes, as in every file this
    /// library writes (and in an empty file). Lookups are then a binary search.
    let isSorted: Bool
    /// Whether ``bytes`` are exactly the bytes `FileImage` writes for these members: `{}` and a line break when
    /// there are none; otherwise `{`, a line break, one `  "<name>": <value>` line per member joined by `,` and a
    /// line break, then a line break, `}` and a line break, with the names sorted (``isSorted``) and escaped as
    /// `JSONParser.appendQuoted` escapes them and the values without whitespace.
    let isCanonical: Bool

    /// The top bit of a 32-bit span entry.
    static let flag: UInt32 = 0x8000_0000

    /// Scans `bytes`, a whole store file, with the rules of `JSONParser.parse(_:maxDepth:)`, and indexes its members.
    ///
    /// Throws the `JSONParseError` that `JSONParser.parse` throws on the same bytes (a duplicate name after a sorted
    /// prefix included). `bytes.count` must be at most `maximumCount` (2 GiB); larger inputs need `JSONParser.parse`.
    /// Runs on the calling thread.
    init(bytes: [UInt8], maxDepth: Int = 512) throws(JSONParseError) {
        self.bytes = bytes
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> (Builder, [UInt32]) in
                var builder = Builder(bytes: buffer)
                do throws(JSONParseError) {
                    try JSONParser.scan(buffer, maxDepth: maxDepth, into: &builder)
                } catch {
                    builder.release()
                    throw error
                }
                let spans = builder.finish()
                return (builder, spans)
            }
        }
        let (builder, spans) = try result.get()
        self.spans = spans
        slots = builder.slots
        isSorted = builder.isSorted
        isCanonical = builder.isCanonical
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

    /// Whether the value of the member at `position` contains whitespace outside strings.
    func valueHasWhitespace(at position: Int) -> Bool {
        spans[4 * position + 3] & Self.flag != 0
    }

    /// The name of the member at `position`, escapes resolved; built on each call.
    func key(at position: Int) -> String {
        var scratch: [UInt8] = []
        let range = keyRange(at: position)
        let escaped = keyHasEscapes(at: position)
        return bytes.withUnsafeBytes { buffer in
            JSONParser.decodeString(
                UnsafeRawBufferPointer(rebasing: buffer[range]), hasEscapes: escaped, scratch: &scratch)
        }
    }

    /// The value of the member at `position` as compact JSON bytes, equal to the value `JSONParser.parse` returns for
    /// it; built on each call.
    func value(at position: Int) -> [UInt8] {
        let range = valueRange(at: position)
        let hasWhitespace = valueHasWhitespace(at: position)
        return bytes.withUnsafeBytes { buffer in
            JSONParser.compacted(UnsafeRawBufferPointer(rebasing: buffer[range]), hasWhitespace: hasWhitespace)
        }
    }

    /// The position of the member whose decoded name has the UTF-8 bytes `name`, or nil if there is none: a binary
    /// search when ``isSorted``, a probe of the hash table otherwise.
    func position(ofName name: UnsafeRawBufferPointer) -> Int? {
        bytes.withUnsafeBytes { buffer in
            spans.withUnsafeBufferPointer { spans in
                var scratch: [UInt8] = []
                if isSorted {
                    return Self.search(for: name, spans: spans, in: buffer, scratch: &scratch)
                }
                return slots.withUnsafeBufferPointer { slots in
                    let (position, _) = Self.probe(
                        for: name, tag: Self.tag(name), slots: slots, spans: spans, in: buffer, scratch: &scratch)
                    return position
                }
            }
        }
    }

    /// The position of the member named `name`, compared by UTF-8 bytes (never by canonical equivalence).
    func position(of name: String) -> Int? {
        var name = name
        return name.withUTF8 { position(ofName: UnsafeRawBufferPointer($0)) }
    }

    // MARK: Sorted lookup

    /// The position of the member whose decoded name is `name` among members sorted by name, by binary search.
    static func search(
        for name: UnsafeRawBufferPointer, spans: UnsafeBufferPointer<UInt32>, in bytes: UnsafeRawBufferPointer,
        scratch: inout [UInt8]
    ) -> Int? {
        var low = 0
        var high = spans.count / 4
        while low < high {
            let middle = (low + high) >> 1
            let start = Int(spans[4 * middle])
            let endEntry = spans[4 * middle + 1]
            let written = UnsafeRawBufferPointer(rebasing: bytes[start..<Int(endEntry & ~flag)])
            let order = Self.order(
                ofWritten: written, hasEscapes: endEntry & flag != 0, comparedWith: name, scratch: &scratch)
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Compares byte strings as memcmp does (then shorter first): negative when `lhs` comes first, zero when they
    /// are equal, positive when `rhs` comes first.
    @inline(__always)
    static func order(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        let shared = min(lhs.count, rhs.count)
        if shared > 0, let left = lhs.baseAddress, let right = rhs.baseAddress {
            let order = memcmp(left, right, shared)
            if order != 0 { return Int(order) }
        }
        return lhs.count - rhs.count
    }

    /// Compares the decoded bytes of the name whose contents are `written` with `name`, as ``order(_:_:)``. A name
    /// without escapes is compared as written; one with escapes is decoded into `scratch` first.
    @inline(__always)
    static func order(
        ofWritten written: UnsafeRawBufferPointer, hasEscapes: Bool, comparedWith name: UnsafeRawBufferPointer,
        scratch: inout [UInt8]
    ) -> Int {
        guard hasEscapes else { return order(written, name) }
        JSONParser.decodeBytes(written, into: &scratch)
        return scratch.withUnsafeBytes { order($0, name) }
    }

    // MARK: Hashing

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
        JSONParser.decodeBytes(written, into: &scratch)
        return scratch.withUnsafeBytes { sameBytes($0, name) }
    }

    /// Whether two byte buffers hold the same bytes.
    @inline(__always)
    static func sameBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard let left = lhs.baseAddress, let right = rhs.baseAddress, lhs.count > 0 else { return true }
        return memcmp(left, right, lhs.count) == 0
    }
}
