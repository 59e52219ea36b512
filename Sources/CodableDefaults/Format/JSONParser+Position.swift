extension JSONParser {
    /// The 1-based line and column (in Unicode scalars) of `offset` in `bytes`. LF, CR and CR LF each end a
    /// line.
    static func position(of offset: Int, in bytes: UnsafeRawBufferPointer) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var position = 0
        let end = min(offset, bytes.count)
        while position < end {
            let byte = bytes[position]
            position += 1
            if byte == 0x0A {  // LF
                line += 1
                column = 1
            } else if byte == 0x0D {  // CR
                line += 1
                column = 1
                if position < end && bytes[position] == 0x0A {
                    position += 1
                }
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// The offset in `text`, valid JSON, of the byte at `compactOffset` in its compact form (as
    /// `compactValue` returns it: `text` without the whitespace outside strings).
    static func offset(ofCompact compactOffset: Int, in text: UnsafeRawBufferPointer) -> Int {
        var kept = 0
        var index = 0
        var inString = false
        while index < text.count {
            let byte = text[index]
            if inString {
                if byte == 0x5C {  // \ : the escaped byte is kept too
                    if kept == compactOffset { return index }
                    kept += 1
                    index += 1
                } else if byte == 0x22 {  // "
                    inString = false
                }
            } else if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            } else if byte == 0x22 {
                inString = true
            }
            if kept == compactOffset { return index }
            kept += 1
            index += 1
        }
        return index
    }
}
