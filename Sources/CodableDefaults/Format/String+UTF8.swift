extension String {
    /// The string whose UTF-8 encoding is `bytes`, or `nil` when they are not well-formed UTF-8 (a stray
    /// continuation byte, a truncated sequence, an overlong form, a surrogate, a code point above U+10FFFF).
    ///
    /// The standard library's `String(validating:as:)` does the same from macOS 15, iOS 18, tvOS 18, watchOS 11
    /// and visionOS 2 on, above this package's minimums; this checks with the UTF-8 parser that exists on every
    /// platform the package supports, then decodes (no byte is replaced, since every sequence was valid).
    package init?(utf8Validating bytes: some Collection<UInt8>) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        scalars: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: break scalars
            case .error: return nil
            }
        }
        self.init(decoding: bytes, as: UTF8.self)
    }
}
