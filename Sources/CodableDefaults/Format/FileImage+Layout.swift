// The layout of one member of the store file, as FileImage.swift writes it (and FileImage+Index.swift adopts it):
// its line, its two offsets, and how its name compares. Uses only the standard library, as FileImage.swift does (the
// fuzzer compiles it with it, see Scripts/fuzz.sh).

extension FileImage {
    /// Compares the decoded name of the member at `index` with `name` as `JSONIndex.order(_:_:)` does.
    @inline(__always)
    static func order(
        ofNameAt index: Int, offsets: UnsafeBufferPointer<UInt32>, in bytes: UnsafeRawBufferPointer,
        comparedWith name: UnsafeRawBufferPointer, _ scratch: inout [UInt8]
    ) -> Int {
        let valueStart = offsets[2 * index]
        let start = index == 0 ? 5 : Int(offsets[2 * index - 1]) + 5
        let written = UnsafeRawBufferPointer(rebasing: bytes[start..<Int(valueStart & ~escapesFlag) - 3])
        return JSONIndex.order(
            ofWritten: written, hasEscapes: valueStart & escapesFlag != 0, comparedWith: name, scratch: &scratch)
    }

    /// Appends the two offsets of a member whose value lies at `value` of the bytes, its name having escapes or not.
    @inline(__always)
    static func appendOffsets(value: Range<Int>, nameHasEscapes: Bool, to offsets: inout [UInt32]) {
        precondition(value.upperBound <= maximumByteCount, "a store file image over 2 GiB")
        offsets.append(UInt32(value.lowerBound) | (nameHasEscapes ? escapesFlag : 0))
        offsets.append(UInt32(value.upperBound))
    }

    /// Appends one member's line, preceded by `{`'s line break or by the separator `,\n`, to `out`, and its
    /// offsets to `offsets` (whose count tells whether it is the first).
    static func appendMember(
        quoting name: String, value: some Collection<UInt8>, to out: inout [UInt8], offsets: inout [UInt32]
    ) {
        // \n or ,\n, then two spaces.
        out.append(contentsOf: offsets.isEmpty ? [0x0A, 0x20, 0x20] : [0x2C, 0x0A, 0x20, 0x20])
        let quoteStart = out.count
        JSONParser.appendQuoted(name, to: &out)
        // Quoting added only the two quotes when the name needs no escape.
        let hasEscapes = out.count - quoteStart != name.utf8.count + 2
        out.append(contentsOf: [0x3A, 0x20])  // ": "
        let valueStart = out.count
        out.append(contentsOf: value)
        appendOffsets(value: valueStart..<out.count, nameHasEscapes: hasEscapes, to: &offsets)
    }
}
