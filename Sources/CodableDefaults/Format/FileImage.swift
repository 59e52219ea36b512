// The one writer of the store file format.
//
// Saves, migrations, the command-line tool's `export`, the tests and the fuzzer all build a file's bytes through
// `FileImage`, so the layout is written in one place. One other place reads it: the index scan recognizes a file in
// exactly this layout (`JSONIndex.isCanonical`, checked in JSONIndex+Building.swift), so that the image of
// such a file takes its buffer as it is (FileImage+Index.swift); the fuzzer checks that the two agree. An image holds
// the bytes and two offsets per member, no `String`. It uses only the standard library and the C library (the fuzzer
// compiles it on its own, see Scripts/fuzz.sh).

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The bytes of a store file and where each member's value lies in them: the one writer of the file format.
///
/// The layout is `"{\n"`, then one `  "<escaped key>": <compact value>` line per member joined by `",\n"`, then
/// `"\n}\n"`; an empty store is exactly `"{}\n"`. Names are escaped as `JSONParser.appendQuoted` does and written in
/// file order: sorted by their UTF-8 bytes (``precedesInFile(_:_:)``), never normalized, so two canonically
/// equivalent spellings (`"\u{E9}"` and `"e\u{301}"`) are two members. Values are copied verbatim; they must be
/// valid compact JSON (as `JSONParser.parse`, `JSONParser.compactValue` and the store's encoders produce).
///
/// The image holds no `String` per member: only ``bytes`` and two `UInt32` offsets per member (8 bytes), so an image
/// built from a file this library wrote can take the file's buffer as it is (``init(index:)``). Names are read from
/// the bytes when compared, and decoded only when they hold escapes. The offsets limit an image to
/// ``maximumByteCount`` bytes (2 GiB), which building one checks.
///
/// A value type with no locking of its own: the store keeps one under its lock, and the same bytes always come
/// out of the same members however the image was reached (a fresh build, an adopted file, or any sequence of
/// ``apply(_:)``).
package struct FileImage: Sendable {
    /// The file's bytes.
    package private(set) var bytes: [UInt8]
    /// Two entries per member, in file order: where its value starts in ``bytes``, the top bit set when its name has
    /// escapes, and where the value ends. The name lies between the previous value's end (or the `{` line) and the
    /// value: its opening quote is at ``nameStart(of:)``, its closing one three bytes before the value.
    private var offsets: [UInt32]

    /// The largest image: its offsets are 31 bits, one bit of each value start flagging a name with escapes. Every
    /// build (``init(members:)-(Collection<(String,[UInt8])>)``, ``apply(_:)``) stops the program rather than pass it:
    /// a store holds its file in memory, and its ``Defaults/Options/maximumFileSize`` (64 MiB by default) is far below.
    static let maximumByteCount = Int(Int32.max)

    /// The top bit of a value start: the name before it has escapes.
    static let escapesFlag: UInt32 = 0x8000_0000

    /// The image of an empty store: `"{}\n"`.
    init() {
        bytes = [0x7B, 0x7D, 0x0A]  // {}\n
        offsets = []
    }

    /// An image of `bytes` laid out as this type writes them, with `offsets` as described on ``offsets``.
    init(bytes: [UInt8], offsets: [UInt32]) {
        self.bytes = bytes
        self.offsets = offsets
    }

    /// The image of `members`, each value compact JSON.
    ///
    /// Members sorted by name (strictly, as files this library writes are) are laid out in one pass. Members in
    /// any other order are sorted by name; when a name occurs more than once, its last member wins.
    package init(members: some Collection<(name: String, value: [UInt8])>) {
        self.init()
        guard !members.isEmpty else { return }
        var built: [UInt8] = [0x7B]  // {
        built.reserveCapacity(members.count * 32 + 4)
        offsets.reserveCapacity(2 * members.count)
        var inFileOrder = true
        var previous: String?
        for member in members {
            if inFileOrder, let previous, !precedesInFile(previous, member.name) { inFileOrder = false }
            if inFileOrder { previous = member.name }
            Self.appendMember(quoting: member.name, value: member.value[...], to: &built, offsets: &offsets)
        }
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        bytes = built
        if !inFileOrder { sortMembers() }
    }

    /// The image of parsed members (see ``init(members:)``).
    init(members: [ParsedMember]) {
        self.init(members: members.lazy.map { (name: $0.key, value: $0.value) })
    }

    /// How many members the file holds.
    var count: Int { offsets.count / 2 }

    /// The index of the member named `name`, compared by UTF-8 bytes, or `nil` when there is none.
    ///
    /// A binary search over the names in ``bytes``: about log2(count) byte comparisons, no hashing; a name with
    /// escapes is decoded when compared.
    func index(of name: String) -> Int? {
        var name = name
        return name.withUTF8 { index(ofName: UnsafeRawBufferPointer($0)) }
    }

    /// The index of the member whose name has the UTF-8 bytes `name`, or `nil` (see ``index(of:)``).
    func index(ofName name: UnsafeRawBufferPointer) -> Int? {
        bytes.withUnsafeBytes { bytes in
            offsets.withUnsafeBufferPointer { offsets in
                var scratch: [UInt8] = []
                var low = 0
                var high = offsets.count / 2
                while low < high {
                    let middle = (low + high) >> 1
                    let order = Self.order(ofNameAt: middle, offsets: offsets, in: bytes, comparedWith: name, &scratch)
                    if order == 0 { return middle }
                    if order < 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
        }
    }

    /// The name of the member at `index`, decoded from ``bytes`` into a new `String` on each call (for tools and
    /// tests; lookups never build one).
    func name(at index: Int) -> String {
        var scratch: [UInt8] = []
        let range = nameContents(of: index)
        let escaped = offsets[2 * index] & Self.escapesFlag != 0
        return bytes.withUnsafeBytes { buffer in
            JSONParser.decodeString(
                UnsafeRawBufferPointer(rebasing: buffer[range]), hasEscapes: escaped, scratch: &scratch)
        }
    }

    /// The member names in file order, each decoded into a new `String` (for tools and tests).
    var names: [String] { (0..<count).map { name(at: $0) } }

    /// The compact JSON bytes of the member at `index`.
    func value(at index: Int) -> ArraySlice<UInt8> { bytes[valueRange(of: index)] }

    /// The members in file order (a copy of each value), for tests and tools.
    var members: [ParsedMember] {
        (0..<count).map { ParsedMember(key: name(at: $0), value: Array(value(at: $0))) }
    }

    // MARK: Offsets

    /// Where the value of the member at `index` lies in ``bytes``.
    @inline(__always)
    func valueRange(of index: Int) -> Range<Int> {
        Int(offsets[2 * index] & ~Self.escapesFlag)..<Int(offsets[2 * index + 1])
    }

    /// Where the quoted name of the member at `index` starts in ``bytes``: after `{\n  ` for the first member,
    /// after the previous value and `,\n  ` for the others.
    @inline(__always)
    func nameStart(of index: Int) -> Int {
        index == 0 ? 4 : Int(offsets[2 * index - 1]) + 4
    }

    /// Where the contents of the name of the member at `index` (between its quotes) lie in ``bytes``.
    @inline(__always)
    func nameContents(of index: Int) -> Range<Int> {
        nameStart(of: index) + 1..<Int(offsets[2 * index] & ~Self.escapesFlag) - 3
    }

}

extension FileImage {
    /// Applies `changes`: each name gets its new compact value, or is removed when the value is `nil`. A name
    /// that occurs more than once takes its last change; removing a name the image does not hold does nothing.
    ///
    /// When no member is added or removed, the new values are spliced into ``bytes``: a value equal to the one held is
    /// skipped; up to eight changes are replaced in place, last first, so one change costs about moving the bytes after
    /// it (nothing when its length is kept, unless ``bytes`` is shared); more are copied into a new buffer once; the
    /// offsets after a change that alters a length move by it. Otherwise the image is rebuilt: the new names are sorted
    /// and each is placed by a binary search over the existing order (which is not sorted again), and the unchanged
    /// members between changes are copied from the old bytes a run at a time, as they are. Either way the result is
    /// byte for byte the image ``init(members:)-(Collection<(String,[UInt8])>)`` makes of the resulting members.
    mutating func apply(_ changes: some Collection<(name: String, value: [UInt8]?)>) {
        // Changes of names the image holds, and of names it does not; `sequence` orders repeated names.
        var edits: [(index: Int, sequence: Int, value: [UInt8]?)] = []
        var additions: [(name: String, sequence: Int, value: [UInt8]?)] = []
        for (sequence, change) in changes.enumerated() {
            if let index = index(of: change.name) {
                edits.append((index, sequence, change.value))
            } else {
                additions.append((change.name, sequence, change.value))
            }
        }
        if edits.count > 1 {
            edits.sort { ($0.index, $0.sequence) < ($1.index, $1.sequence) }
            Self.keepLast(&edits) { $0.index == $1.index }
        }
        if additions.count > 1 {
            additions.sort {
                let order = compareInFileOrder($0.name, $1.name)
                return order < 0 || (order == 0 && $0.sequence < $1.sequence)
            }
            Self.keepLast(&additions) { compareInFileOrder($0.name, $1.name) == 0 }
        }
        additions.removeAll { $0.value == nil }
        if additions.isEmpty && !edits.contains(where: { $0.value == nil }) {
            splice(&edits)
        } else {
            rebuild(edits: edits, additions: additions)
        }
    }

    /// Replaces the values at the indices of `changes` (sorted, distinct, none a removal) when the set of members
    /// is unchanged. `changes` is working storage (taken `inout` so that filtering it does not copy it).
    private mutating func splice(_ changes: inout [(index: Int, sequence: Int, value: [UInt8]?)]) {
        changes.removeAll { bytes[valueRange(of: $0.index)].elementsEqual($0.value ?? []) }
        guard !changes.isEmpty else { return }
        let growth = changes.reduce(0) { $0 + ($1.value?.count ?? 0) - valueRange(of: $1.index).count }
        precondition(bytes.count + growth <= Self.maximumByteCount, "a store file image over 2 GiB")
        if changes.count <= 8 {
            // Few changes: replace in place, last first so earlier positions stay right.
            for change in changes.reversed() {
                bytes.replaceSubrange(valueRange(of: change.index), with: change.value ?? [])
            }
        } else {
            var spliced: [UInt8] = []
            spliced.reserveCapacity(bytes.count + growth)
            var copied = 0
            for change in changes {
                let range = valueRange(of: change.index)
                spliced.append(contentsOf: bytes[copied..<range.lowerBound])
                spliced.append(contentsOf: change.value ?? [])
                copied = range.upperBound
            }
            spliced.append(contentsOf: bytes[copied...])
            bytes = spliced
        }
        // Move the offsets after each change by the growth so far. Adding to a whole value start keeps its flag:
        // the offset in its low 31 bits stays in range.
        let memberCount = count
        offsets.withUnsafeMutableBufferPointer { offsets in
            var shift = 0
            for (number, change) in changes.enumerated() {
                let index = change.index
                let oldStart = Int(offsets[2 * index] & ~Self.escapesFlag)
                let oldEnd = Int(offsets[2 * index + 1])
                offsets[2 * index] &+= UInt32(truncatingIfNeeded: shift)
                shift += (change.value?.count ?? 0) - (oldEnd - oldStart)
                offsets[2 * index + 1] = UInt32(oldEnd + shift)
                guard shift != 0 else { continue }
                let next = number + 1 < changes.count ? changes[number + 1].index : memberCount
                let delta = UInt32(truncatingIfNeeded: shift)
                for entry in 2 * (index + 1)..<2 * next { offsets[entry] &+= delta }
            }
        }
    }

    /// Lays the image out again with `edits` (sorted by index, distinct; `nil` removes) and `additions` (sorted
    /// by name, distinct, none in the image, all with a value) merged into the order. The members between changes
    /// are copied from the old bytes a run at a time, their offsets moved by where the run lands.
    private mutating func rebuild(
        edits: [(index: Int, sequence: Int, value: [UInt8]?)],
        additions: [(name: String, sequence: Int, value: [UInt8]?)]
    ) {
        let old = bytes
        let oldOffsets = offsets
        let memberCount = count
        let added = additions.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) + 8 }
        var built: [UInt8] = [0x7B]  // {
        built.reserveCapacity(old.count + added)
        var kept: [UInt32] = []
        kept.reserveCapacity(oldOffsets.count + 2 * additions.count)
        // The old members before `copied` are in `built` (or removed).
        var copied = 0

        // Copies the unchanged old members from `copied` up to `end`, with their separators, as they are.
        func copyRun(upTo end: Int) {
            guard end > copied else { return }
            built.append(contentsOf: kept.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
            let start = copied == 0 ? 4 : Int(oldOffsets[2 * copied - 1]) + 4
            let delta = UInt32(truncatingIfNeeded: built.count - start)
            built.append(contentsOf: old[start..<Int(oldOffsets[2 * end - 1])])
            let first = kept.count
            kept.append(contentsOf: oldOffsets[2 * copied..<2 * end])
            kept.withUnsafeMutableBufferPointer { kept in
                for entry in first..<kept.count { kept[entry] &+= delta }
            }
            copied = end
        }
        var nextAddition = 0
        var nextEdit = 0
        // Where the next addition goes: before the first old member whose name comes after it.
        var place = additions.isEmpty ? Int.max : insertionPoint(of: additions[0].name, from: 0)
        while nextAddition < additions.count || nextEdit < edits.count {
            let editIndex = nextEdit < edits.count ? edits[nextEdit].index : Int.max
            if place <= editIndex {
                copyRun(upTo: place)
                let addition = additions[nextAddition]
                Self.appendMember(quoting: addition.name, value: addition.value ?? [], to: &built, offsets: &kept)
                nextAddition += 1
                place =
                    nextAddition < additions.count
                    ? insertionPoint(of: additions[nextAddition].name, from: place) : Int.max
            } else {
                copyRun(upTo: editIndex)
                if let value = edits[nextEdit].value {
                    // The quoted name and ": " as the old bytes hold them, then the new value.
                    built.append(contentsOf: kept.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
                    let valueStart = oldOffsets[2 * editIndex]
                    let start = editIndex == 0 ? 4 : Int(oldOffsets[2 * editIndex - 1]) + 4
                    built.append(contentsOf: old[start..<Int(valueStart & ~Self.escapesFlag)])
                    let newStart = built.count
                    built.append(contentsOf: value)
                    Self.appendOffsets(
                        value: newStart..<built.count, nameHasEscapes: valueStart & Self.escapesFlag != 0, to: &kept)
                }
                copied = editIndex + 1
                nextEdit += 1
            }
        }
        copyRun(upTo: memberCount)
        if kept.isEmpty {
            self = FileImage()
            return
        }
        precondition(built.count + 3 <= Self.maximumByteCount, "a store file image over 2 GiB")
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        bytes = built
        offsets = kept
    }

    /// The number of members, from `low` on, whose names come before `name` (which the image does not hold): the
    /// index the member named `name` would have. A binary search.
    private func insertionPoint(of name: String, from low: Int) -> Int {
        var name = name
        return name.withUTF8 { name in
            bytes.withUnsafeBytes { bytes in
                offsets.withUnsafeBufferPointer { offsets in
                    var scratch: [UInt8] = []
                    var low = low
                    var high = offsets.count / 2
                    while low < high {
                        let middle = (low + high) >> 1
                        let order = Self.order(
                            ofNameAt: middle, offsets: offsets, in: bytes, comparedWith: UnsafeRawBufferPointer(name),
                            &scratch)
                        if order < 0 { low = middle + 1 } else { high = middle }
                    }
                    return low
                }
            }
        }
    }

    /// Sorts the members by name, the last of each repeated name winning, and lays the bytes out again.
    private mutating func sortMembers() {
        var order = Array(0..<count)
        bytes.withUnsafeBytes { bytes in
            offsets.withUnsafeBufferPointer { offsets in
                var left: [UInt8] = []
                var right: [UInt8] = []
                // Compares the decoded names of two members.
                func compare(_ lhs: Int, _ rhs: Int) -> Int {
                    let valueStart = offsets[2 * lhs]
                    let start = lhs == 0 ? 5 : Int(offsets[2 * lhs - 1]) + 5
                    let written = UnsafeRawBufferPointer(
                        rebasing: bytes[start..<Int(valueStart & ~Self.escapesFlag) - 3])
                    guard valueStart & Self.escapesFlag != 0 else {
                        return -Self.order(ofNameAt: rhs, offsets: offsets, in: bytes, comparedWith: written, &right)
                    }
                    JSONParser.decodeBytes(written, into: &left)
                    return -left.withUnsafeBytes {
                        Self.order(ofNameAt: rhs, offsets: offsets, in: bytes, comparedWith: $0, &right)
                    }
                }
                order.sort {
                    let comparison = compare($0, $1)
                    return comparison < 0 || (comparison == 0 && $0 < $1)
                }
                Self.keepLast(&order) { compare($0, $1) == 0 }
            }
        }
        var built: [UInt8] = [0x7B]  // {
        built.reserveCapacity(bytes.count)
        var sorted: [UInt32] = []
        sorted.reserveCapacity(2 * order.count)
        for index in order {
            built.append(contentsOf: sorted.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
            let start = nameStart(of: index)
            let delta = UInt32(truncatingIfNeeded: built.count - start)
            built.append(contentsOf: bytes[start..<Int(offsets[2 * index + 1])])
            sorted.append(offsets[2 * index] &+ delta)
            sorted.append(offsets[2 * index + 1] &+ delta)
        }
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        self = FileImage(bytes: built, offsets: sorted)
    }

    /// Keeps only the last of each run of equal elements of `elements` (sorted so that equal ones are adjacent),
    /// in place.
    private static func keepLast<Element>(_ elements: inout [Element], _ areEqual: (Element, Element) -> Bool) {
        guard elements.count > 1 else { return }
        var kept = 0
        for position in 1..<elements.count {
            if !areEqual(elements[kept], elements[position]) { kept += 1 }
            if kept != position { elements.swapAt(kept, position) }
        }
        elements.removeLast(elements.count - kept - 1)
    }
}

/// Orders names as the file does: by their UTF-8 bytes.
@inline(__always)
func precedesInFile(_ lhs: String, _ rhs: String) -> Bool {
    compareInFileOrder(lhs, rhs) < 0
}

/// Compares names as the file orders them, by their UTF-8 bytes: negative when `lhs` comes first, zero when the
/// bytes are equal, positive when `rhs` comes first.
@inline(__always)
func compareInFileOrder(_ lhs: String, _ rhs: String) -> Int {
    var lhs = lhs
    var rhs = rhs
    // Contiguous UTF-8 (native strings are) compares with memcmp rather than byte by byte.
    return lhs.withUTF8 { left in
        rhs.withUTF8 { right in
            let shared = min(left.count, right.count)
            if shared > 0, let a = left.baseAddress, let b = right.baseAddress {
                let order = memcmp(a, b, shared)
                if order != 0 { return Int(order) }
            }
            return left.count - right.count
        }
    }
}
