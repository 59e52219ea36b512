// The one writer of the store file format.
//
// Saves, migrations, the command-line tool's `export`, the tests and the fuzzer all build a file's bytes through
// `FileImage`, so the layout lives in one place. It uses only the standard library and the C library (the fuzzer
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
/// `"\n}\n"`; an empty store is exactly `"{}\n"`. Names are escaped as `Document.appendQuoted` does and written in
/// file order: sorted by their UTF-8 bytes (``precedesInFile(_:_:)``), never normalized, so two canonically
/// equivalent spellings (`"\u{E9}"` and `"e\u{301}"`) are two members. Values are copied verbatim; they must be
/// valid compact JSON (as `Document.parse`, `Document.compactValue` and the store's encoders produce).
///
/// A value type with no locking of its own: the store keeps one under its lock, and the same bytes always come
/// out of the same members however the image was reached (a fresh build, or any sequence of ``apply(_:)``).
package struct FileImage: Sendable {
    /// The file's bytes.
    package private(set) var bytes: [UInt8]
    /// The member names in file order: strictly increasing by UTF-8 bytes.
    private(set) var names: [String]
    /// Where each member's value lies in ``bytes``, by index in ``names``.
    private var spans: [Range<Int>]

    /// The image of an empty store: `"{}\n"`.
    init() {
        bytes = [0x7B, 0x7D, 0x0A]  // {}\n
        names = []
        spans = []
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
        names.reserveCapacity(members.count)
        spans.reserveCapacity(members.count)
        var inFileOrder = true
        for member in members {
            if inFileOrder, let last = names.last, !precedesInFile(last, member.name) { inFileOrder = false }
            Self.appendMember(quoting: member.name, value: member.value[...], first: names.isEmpty, to: &built)
            names.append(member.name)
            spans.append(built.count - member.value.count..<built.count)
        }
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        bytes = built
        if !inFileOrder { sortMembers() }
    }

    /// The image of parsed members (see ``init(members:)``).
    init(members: [DocumentMember]) {
        self.init(members: members.lazy.map { (name: $0.key, value: $0.value) })
    }

    /// How many members the file holds.
    var count: Int { names.count }

    /// The index of the member named `name`, compared by UTF-8 bytes, or `nil` when there is none.
    ///
    /// A binary search over ``names``: about log2(count) byte comparisons, no hashing.
    func index(of name: String) -> Int? {
        var low = 0
        var high = names.count
        while low < high {
            let middle = (low + high) / 2
            let order = compareInFileOrder(names[middle], name)
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The name of the member at `index`.
    func name(at index: Int) -> String { names[index] }

    /// The compact JSON bytes of the member at `index`.
    func value(at index: Int) -> ArraySlice<UInt8> { bytes[spans[index]] }

    /// The members in file order (a copy of each value), for tests and tools.
    var members: [DocumentMember] {
        names.indices.map { DocumentMember(key: names[$0], value: Array(value(at: $0))) }
    }
}

extension FileImage {
    /// Applies `changes`: each name gets its new compact value, or is removed when the value is `nil`. A name
    /// that occurs more than once takes its last change; removing a name the image does not hold does nothing.
    ///
    /// When no member is added or removed, the new values are spliced into ``bytes``: a value equal to the one
    /// held is skipped; up to eight changes are replaced in place, last first, so one change costs about moving
    /// the bytes after it (nothing when its length is kept, unless ``bytes`` is shared); more are copied into a
    /// new buffer once. Otherwise the image is rebuilt: the new names are sorted and merged into the existing
    /// order (which is not sorted again), and unchanged members are copied from the old bytes as they are.
    /// Either way the result is byte for byte the image ``init(members:)`` makes of the resulting members.
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
        changes.removeAll { bytes[spans[$0.index]].elementsEqual($0.value ?? []) }
        guard let first = changes.first else { return }
        if changes.count <= 8 {
            // Few changes: replace in place, last first so earlier positions stay right.
            for change in changes.reversed() {
                bytes.replaceSubrange(spans[change.index], with: change.value ?? [])
            }
        } else {
            var spliced: [UInt8] = []
            spliced.reserveCapacity(bytes.count + changes.reduce(0) { $0 + ($1.value?.count ?? 0) })
            var copied = 0
            for change in changes {
                spliced.append(contentsOf: bytes[copied..<spans[change.index].lowerBound])
                spliced.append(contentsOf: change.value ?? [])
                copied = spans[change.index].upperBound
            }
            spliced.append(contentsOf: bytes[copied...])
            bytes = spliced
        }
        // Move the value positions after each change by the growth so far.
        var shift = 0
        var nextChange = 0
        for index in first.index..<spans.count {
            let start = spans[index].lowerBound + shift
            var length = spans[index].count
            if nextChange < changes.count && changes[nextChange].index == index {
                let newLength = changes[nextChange].value?.count ?? 0
                shift += newLength - length
                length = newLength
                nextChange += 1
            }
            spans[index] = start..<start + length
        }
    }

    /// Lays the image out again with `edits` (sorted by index, distinct; `nil` removes) and `additions` (sorted
    /// by name, distinct, none in the image, all with a value) merged into the order.
    private mutating func rebuild(
        edits: [(index: Int, sequence: Int, value: [UInt8]?)],
        additions: [(name: String, sequence: Int, value: [UInt8]?)]
    ) {
        let added = additions.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) + 8 }
        var built: [UInt8] = [0x7B]  // {
        built.reserveCapacity(bytes.count + added)
        var keptNames: [String] = []
        var keptSpans: [Range<Int>] = []
        keptNames.reserveCapacity(names.count + additions.count)
        keptSpans.reserveCapacity(names.count + additions.count)

        func append(quoting name: String, value: ArraySlice<UInt8>) {
            Self.appendMember(quoting: name, value: value, first: keptNames.isEmpty, to: &built)
            keptNames.append(name)
            keptSpans.append(built.count - value.count..<built.count)
        }
        var nextAddition = 0
        var nextEdit = 0
        for index in names.indices {
            let name = names[index]
            while nextAddition < additions.count && precedesInFile(additions[nextAddition].name, name) {
                append(quoting: additions[nextAddition].name, value: additions[nextAddition].value?[...] ?? [])
                nextAddition += 1
            }
            if nextEdit < edits.count && edits[nextEdit].index == index {
                let edit = edits[nextEdit]
                nextEdit += 1
                if let value = edit.value { append(quoting: name, value: value[...]) }
                continue
            }
            // Unchanged: copy the quoted name, ": " and the value as the old bytes hold them.
            built.append(contentsOf: keptNames.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
            built.append(contentsOf: bytes[nameStart(of: index)..<spans[index].upperBound])
            keptNames.append(name)
            keptSpans.append(built.count - spans[index].count..<built.count)
        }
        for addition in additions[nextAddition...] {
            append(quoting: addition.name, value: addition.value?[...] ?? [])
        }
        if keptNames.isEmpty {
            self = FileImage()
            return
        }
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        bytes = built
        names = keptNames
        spans = keptSpans
    }

    /// Where the quoted name of the member at `index` starts in ``bytes``: after `{\n  ` for the first member,
    /// after the previous value and `,\n  ` for the others.
    private func nameStart(of index: Int) -> Int {
        index == 0 ? 4 : spans[index - 1].upperBound + 4
    }

    /// Sorts the members by name, the last of each repeated name winning, and lays the bytes out again.
    private mutating func sortMembers() {
        var order = Array(names.indices)
        order.sort {
            let comparison = compareInFileOrder(names[$0], names[$1])
            return comparison < 0 || (comparison == 0 && $0 < $1)
        }
        Self.keepLast(&order) { compareInFileOrder(names[$0], names[$1]) == 0 }
        var sorted = FileImage()
        var built: [UInt8] = [0x7B]  // {
        built.reserveCapacity(bytes.count)
        sorted.names.reserveCapacity(order.count)
        sorted.spans.reserveCapacity(order.count)
        for index in order {
            built.append(contentsOf: sorted.names.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
            built.append(contentsOf: bytes[nameStart(of: index)..<spans[index].upperBound])
            sorted.names.append(names[index])
            sorted.spans.append(built.count - spans[index].count..<built.count)
        }
        built.append(contentsOf: [0x0A, 0x7D, 0x0A])  // \n}\n
        sorted.bytes = built
        self = sorted
    }

    /// Appends one member's line, preceded by `{`'s line break or by the separator `,\n`, to `out`.
    private static func appendMember(
        quoting name: String, value: ArraySlice<UInt8>, first: Bool, to out: inout [UInt8]
    ) {
        out.append(contentsOf: first ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])  // \n or ,\n, then two spaces
        Document.appendQuoted(name, to: &out)
        out.append(contentsOf: [0x3A, 0x20])  // ": "
        out.append(contentsOf: value)
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
