extension JSONParser {
    /// How deeply the arrays and objects of one compact JSON fragment nest: 0 for a scalar, 1 for `[]` or
    /// `{"a":1}`, 2 for `[[1]]`. One pass over the bytes, skipping strings; the fragment must be valid JSON
    /// (as an encoder's output is).
    static func nestingDepth(of fragment: [UInt8]) -> Int {
        fragment.withUnsafeBufferPointer { bytes in
            var depth = 0
            var deepest = 0
            var index = 0
            let count = bytes.count
            while index < count {
                switch bytes[index] {
                case 0x5B, 0x7B:  // [ {
                    depth += 1
                    if depth > deepest { deepest = depth }
                case 0x5D, 0x7D:  // ] }
                    depth -= 1
                case 0x22:  // " : skip to the closing quote, stepping over escapes
                    index += 1
                    while index < count && bytes[index] != 0x22 {
                        index += bytes[index] == 0x5C ? 2 : 1
                    }
                default:
                    break
                }
                index += 1
            }
            return deepest
        }
    }
}
