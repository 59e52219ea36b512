#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A member name as the file holds it: its UTF-8 bytes, compared and hashed byte for byte.
///
/// Swift's `String` compares and hashes by Unicode canonical equivalence, so `"\u{E9}"` and `"e\u{301}"`
/// are one `String` key but two members of a JSON object (RFC 8259 compares names code point by code point).
/// Every table of the store keyed by a member name uses this type, so that each spelling keeps its own value,
/// observers and bytes. Native strings hold contiguous UTF-8, so equality is one `memcmp` and hashing
/// feeds the bytes to the hasher once; a name that is not contiguous (a bridged string) is compared through
/// its UTF-8 view.
struct MemberName: Hashable, Sendable, CustomStringConvertible {
    /// The name.
    let string: String

    @inline(__always)
    init(_ string: String) {
        self.string = string
    }

    var description: String { string }

    @inline(__always)
    static func == (lhs: MemberName, rhs: MemberName) -> Bool {
        sameBytes(lhs.string, rhs.string)
    }

    @inline(__always)
    func hash(into hasher: inout Hasher) {
        let hashed: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        if hashed == nil {
            Array(string.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        // A byte no UTF-8 text holds ends the name (as `String` hashing does), so no name's bytes are a prefix of
        // another's hash input.
        hasher.combine(0xFF as UInt8)
    }
}

/// Whether two names have the same UTF-8 bytes (unlike `==` on `String`, which compares by canonical
/// equivalence).
@inline(__always)
func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
    // Two strings with the same representation (the same small string, or the same storage) have the same bytes.
    // This settles the common case, a lookup of a name equal to the one found, without touching the bytes.
    if MemoryLayout<String>.size == 16 {
        let left = unsafeBitCast(lhs, to: (UInt64, UInt64).self)
        let right = unsafeBitCast(rhs, to: (UInt64, UInt64).self)
        if left == right { return true }
    }
    let left = lhs.utf8
    let right = rhs.utf8
    guard left.count == right.count else { return false }
    let compared: Bool? =
        left.withContiguousStorageIfAvailable { a in
            right.withContiguousStorageIfAvailable { b in
                guard let x = a.baseAddress, let y = b.baseAddress, a.count > 0 else { return true }
                return memcmp(x, y, a.count) == 0
            }
        } ?? nil
    return compared ?? left.elementsEqual(right)
}
