import Foundation

// The gateway's JSON written and read by hand: a request is a few fields of base64 text, int64 strings and
// arrays; an answer a few known fields among others that are skipped. JSONEncoder and JSONDecoder (with their
// snake-case key conversion) cost most of a call's time on an answer of many keys, and most of the time of a
// watch's message; see `Wire+JSON.swift` for the types.

/// Why the gateway's JSON could not be read: what is wrong, and where (a byte offset, or a field's path).
struct WireJSONError: Error, CustomStringConvertible, Equatable {
    /// What is wrong and where, in words.
    var description: String

    /// The error of the JSON text at byte `offset`.
    static func syntax(_ what: String, at offset: Int) -> WireJSONError {
        WireJSONError(description: "invalid JSON at byte \(offset): \(what)")
    }
}

/// Base64 of the standard alphabet, padded, as the gateway writes bytes.
enum WireBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Each byte's value in the alphabet; 0xFF for a byte that is not in it.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(index) }
        return values
    }()

    /// Appends the base64 text of `bytes` to `output`.
    static func encode(_ bytes: [UInt8], into output: inout [UInt8]) {
        output.reserveCapacity(output.count + (bytes.count + 2) / 3 * 4)
        alphabet.withUnsafeBufferPointer { alphabet in
            var index = 0
            while index + 3 <= bytes.count {
                let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                output.append(alphabet[Int(word >> 18)])
                output.append(alphabet[Int(word >> 12 & 0x3F)])
                output.append(alphabet[Int(word >> 6 & 0x3F)])
                output.append(alphabet[Int(word & 0x3F)])
                index += 3
            }
            switch bytes.count - index {
            case 1:
                let word = UInt32(bytes[index]) << 16
                output.append(alphabet[Int(word >> 18)])
                output.append(alphabet[Int(word >> 12 & 0x3F)])
                output.append(0x3D)
                output.append(0x3D)
            case 2:
                let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
                output.append(alphabet[Int(word >> 18)])
                output.append(alphabet[Int(word >> 12 & 0x3F)])
                output.append(alphabet[Int(word >> 6 & 0x3F)])
                output.append(0x3D)
            default: break
            }
        }
    }

    /// The bytes of the base64 text `text` (its length a multiple of 4, `=` only as its last one or two
    /// characters); `nil` when it is not such text.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        if text.isEmpty { return [] }
        let padding = text[text.count - 1] != 0x3D ? 0 : text[text.count - 2] != 0x3D ? 1 : 2
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.count / 4 * 3 - padding)
        return values.withUnsafeBufferPointer { values -> [UInt8]? in
            var index = 0
            let whole = text.count - (padding > 0 ? 4 : 0)
            while index < whole {
                let a = values[Int(text[index])]
                let b = values[Int(text[index + 1])]
                let c = values[Int(text[index + 2])]
                let d = values[Int(text[index + 3])]
                guard (a | b | c | d) & 0xC0 == 0 else { return nil }
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                bytes.append(UInt8(word >> 16))
                bytes.append(UInt8(word >> 8 & 0xFF))
                bytes.append(UInt8(word & 0xFF))
                index += 4
            }
            if padding > 0 {
                let a = values[Int(text[index])]
                let b = values[Int(text[index + 1])]
                let c = padding == 1 ? values[Int(text[index + 2])] : 0
                guard (a | b | c) & 0xC0 == 0 else { return nil }
                let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                bytes.append(UInt8(word >> 16))
                if padding == 1 { bytes.append(UInt8(word >> 8 & 0xFF)) }
            }
            return bytes
        }
    }
}

/// Writes a request's JSON: objects of fields, each field's name given as it goes on the wire.
struct WireJSONWriter {
    /// The JSON so far.
    private(set) var bytes: [UInt8] = []
    /// Whether the object being written has a field already (so that the next one needs a comma).
    private var needsComma = false

    /// Writes an object whose fields `body` writes.
    mutating func object(_ body: (inout WireJSONWriter) -> Void) {
        if needsComma { bytes.append(0x2C) }  // An element of an array after the first.
        bytes.append(0x7B)
        needsComma = false
        body(&self)
        bytes.append(0x7D)
        needsComma = true
    }

    /// Writes the name of a field, and the colon after it.
    private mutating func name(_ name: StaticString) {
        if needsComma { bytes.append(0x2C) }
        bytes.append(0x22)
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(0x22)
        bytes.append(0x3A)
        needsComma = false
    }

    /// A field of bytes, as base64 text.
    mutating func field(_ name: StaticString, base64 value: [UInt8]) {
        self.name(name)
        bytes.append(0x22)
        WireBase64.encode(value, into: &bytes)
        bytes.append(0x22)
        needsComma = true
    }

    /// A field of an int64, as a string of digits (the gateway's spelling).
    mutating func field(_ name: StaticString, int64 value: Int64) {
        self.name(name)
        bytes.append(0x22)
        bytes.append(contentsOf: String(value).utf8)
        bytes.append(0x22)
        needsComma = true
    }

    /// A field of text, escaped as JSON requires.
    mutating func field(_ name: StaticString, string value: String) {
        self.name(name)
        Self.string(value, into: &bytes)
        needsComma = true
    }

    /// A field of a boolean.
    mutating func field(_ name: StaticString, bool value: Bool) {
        self.name(name)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
        needsComma = true
    }

    /// A field that is an object: `value`'s.
    mutating func field(_ name: StaticString, _ value: some WireEncodable) {
        self.name(name)
        value.write(to: &self)
    }

    /// A field that is an array of `elements`, each an object that `write` writes (with ``object(_:)``).
    mutating func field<Element>(
        _ name: StaticString, array elements: [Element], _ write: (inout WireJSONWriter, Element) -> Void
    ) {
        self.name(name)
        bytes.append(0x5B)
        for (index, element) in elements.enumerated() {
            needsComma = index > 0
            write(&self, element)
        }
        bytes.append(0x5D)
        needsComma = true
    }

    /// Appends `text` as a JSON string: quoted, with `"`, `\` and the control characters escaped.
    static func string(_ text: String, into bytes: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
            case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
            case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20:
                bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }
}

/// Reads the gateway's JSON from its bytes, strictly (what is not JSON is an error, whatever the field), one
/// value at a time: the answer types (`Wire+JSON.swift`) take the fields they know and skip the others.
///
/// It holds a pointer into the bytes: use it only within the `withUnsafeBytes` that gave them (see
/// ``read(_:_:)``).
struct WireJSONReader {
    private let text: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    private(set) var offset = 0
    /// How many arrays and objects are open around the value being read.
    private var depth = 0
    /// The most arrays and objects one value nests (etcd's answers nest 5 deep): deeper is an error, never a
    /// stack overflow, even on a thread with a small stack.
    static let maximumDepth = 128

    private init(_ text: UnsafeBufferPointer<UInt8>) { self.text = text }

    /// Reads the one JSON value of `data` with `body` (only whitespace may follow it).
    static func read<Value>(_ data: Data, _ body: (inout WireJSONReader) throws(WireJSONError) -> Value)
        throws(WireJSONError) -> Value
    {
        let result: Result<Value, WireJSONError> = data.withUnsafeBytes { raw in
            var reader = WireJSONReader(raw.bindMemory(to: UInt8.self))
            do throws(WireJSONError) {
                let value = try body(&reader)
                reader.skipWhitespace()
                guard reader.offset == reader.text.count else {
                    throw .syntax("more text after the value", at: reader.offset)
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private mutating func skipWhitespace() {
        while offset < text.count {
            switch text[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    /// The next byte after whitespace, not consumed.
    private mutating func peek() throws(WireJSONError) -> UInt8 {
        skipWhitespace()
        guard offset < text.count else { throw .syntax("the text ends before the value does", at: offset) }
        return text[offset]
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(WireJSONError) {
        guard try peek() == byte else { throw .syntax("expected \(what)", at: offset) }
        offset += 1
    }

    /// Consumes a `null` when it comes next: `true` if it did.
    mutating func readNull() throws(WireJSONError) -> Bool {
        guard try peek() == 0x6E else { return false }
        try literal("null")
        return true
    }

    private mutating func literal(_ word: StaticString) throws(WireJSONError) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= text.count,
            memcmp(text.baseAddress! + offset, word.utf8Start, count) == 0
        else { throw .syntax("expected \(word)", at: offset) }
        offset += count
    }

    /// Reads an object: `field` is called with each name (as it is on the wire, unescaped) and reads its value.
    mutating func readObject(
        _ field: (inout WireJSONReader, UnsafeBufferPointer<UInt8>) throws(WireJSONError) -> Void
    ) throws(WireJSONError) {
        try expect(0x7B, "an object")
        depth += 1
        guard depth <= Self.maximumDepth else { throw .syntax("nested deeper than \(Self.maximumDepth)", at: offset) }
        if try peek() == 0x7D {
            offset += 1
            depth -= 1
            return
        }
        while true {
            guard try peek() == 0x22 else { throw .syntax("expected a field name", at: offset) }
            let (raw, escaped) = try scanString()
            try expect(0x3A, "a colon")
            if escaped {
                let name = try unescape(raw)
                try name.withUnsafeBufferPointer { (name) throws(WireJSONError) in try field(&self, name) }
            } else {
                try field(&self, UnsafeBufferPointer(rebasing: text[raw]))
            }
            switch try peek() {
            case 0x2C: offset += 1
            case 0x7D:
                offset += 1
                depth -= 1
                return
            default: throw .syntax("expected a comma or the end of the object", at: offset)
            }
        }
    }

    /// Reads an array: `element` is called for each element and reads it.
    mutating func readArray(_ element: (inout WireJSONReader) throws(WireJSONError) -> Void) throws(WireJSONError) {
        try expect(0x5B, "an array")
        depth += 1
        guard depth <= Self.maximumDepth else { throw .syntax("nested deeper than \(Self.maximumDepth)", at: offset) }
        if try peek() == 0x5D {
            offset += 1
            depth -= 1
            return
        }
        while true {
            try element(&self)
            switch try peek() {
            case 0x2C: offset += 1
            case 0x5D:
                offset += 1
                depth -= 1
                return
            default: throw .syntax("expected a comma or the end of the array", at: offset)
            }
        }
    }

    /// Reads a string's bytes, its escapes decoded.
    mutating func readStringBytes() throws(WireJSONError) -> [UInt8] {
        guard try peek() == 0x22 else { throw .syntax("expected a string", at: offset) }
        let (raw, escaped) = try scanString()
        return escaped ? try unescape(raw) : Array(text[raw])
    }

    /// Reads a string.
    mutating func readString() throws(WireJSONError) -> String {
        String(decoding: try readStringBytes(), as: UTF8.self)
    }

    /// Reads a string of base64 text as the bytes it spells.
    mutating func readBase64() throws(WireJSONError) -> [UInt8] {
        let start = offset
        guard try peek() == 0x22 else { throw .syntax("expected a string of base64", at: offset) }
        let (raw, escaped) = try scanString()
        let bytes =
            escaped
            ? try unescape(raw).withUnsafeBufferPointer { WireBase64.decode($0) }
            : WireBase64.decode(UnsafeBufferPointer(rebasing: text[raw]))
        guard let bytes else { throw .syntax("the string is not base64", at: start) }
        return bytes
    }

    /// Reads an int64 as the gateway writes it: a string of decimal digits (with a `-` for a negative one).
    mutating func readInt64() throws(WireJSONError) -> Int64 {
        let start = offset
        guard try peek() == 0x22 else { throw .syntax("expected an int64 (a string of digits)", at: offset) }
        let (raw, escaped) = try scanString()
        guard !escaped, let value = Int64(String(decoding: text[raw], as: UTF8.self)) else {
            throw .syntax("the string is not an int64", at: start)
        }
        return value
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(WireJSONError) -> Bool {
        switch try peek() {
        case 0x74:
            try literal("true")
            return true
        case 0x66:
            try literal("false")
            return false
        default: throw .syntax("expected true or false", at: offset)
        }
    }

    /// Reads a number that is an integer (as `Int`).
    mutating func readInt() throws(WireJSONError) -> Int {
        let start = offset
        let range = try scanNumber()
        guard let value = Int(String(decoding: text[range], as: UTF8.self)) else {
            throw .syntax("the number is not an integer", at: start)
        }
        return value
    }

    /// Reads any value and forgets it (checking that it is JSON).
    mutating func skipValue() throws(WireJSONError) {
        switch try peek() {
        case 0x7B: try readObject { (reader, _) throws(WireJSONError) in try reader.skipValue() }
        case 0x5B: try readArray { (reader) throws(WireJSONError) in try reader.skipValue() }
        case 0x22:
            let (raw, escaped) = try scanString()
            if escaped { _ = try unescape(raw) }  // Its escapes are checked too.
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6E: try literal("null")
        default: _ = try scanNumber()
        }
    }

    /// Moves past a string (at its opening quote); the range of its bytes between the quotes, and whether they
    /// hold an escape.
    private mutating func scanString() throws(WireJSONError) -> (Range<Int>, escaped: Bool) {
        offset += 1
        let start = offset
        var escaped = false
        while offset < text.count {
            let byte = text[offset]
            if byte == 0x22 {
                offset += 1
                return (start..<offset - 1, escaped)
            }
            if byte == 0x5C {
                escaped = true
                offset += 2
                continue
            }
            guard byte >= 0x20 else { throw .syntax("a control character in a string", at: offset) }
            offset += 1
        }
        throw .syntax("the text ends inside a string", at: start - 1)
    }

    /// The bytes of the string whose text (between the quotes) is `raw`, its escapes decoded.
    private func unescape(_ raw: Range<Int>) throws(WireJSONError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.lowerBound
        while index < raw.upperBound {
            let byte = text[index]
            guard byte == 0x5C else {
                bytes.append(byte)
                index += 1
                continue
            }
            guard index + 1 < raw.upperBound else { throw .syntax("an escape cut off", at: index) }
            switch text[index + 1] {
            case 0x22: bytes.append(0x22)
            case 0x5C: bytes.append(0x5C)
            case 0x2F: bytes.append(0x2F)
            case 0x62: bytes.append(0x08)
            case 0x66: bytes.append(0x0C)
            case 0x6E: bytes.append(0x0A)
            case 0x72: bytes.append(0x0D)
            case 0x74: bytes.append(0x09)
            case 0x75:
                var scalar = try hex4(at: index + 2, end: raw.upperBound)
                index += 6
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate: its low one must follow, as another \u escape.
                    guard index + 1 < raw.upperBound, text[index] == 0x5C, text[index + 1] == 0x75 else {
                        throw .syntax("a lone surrogate in an escape", at: index - 6)
                    }
                    let low = try hex4(at: index + 2, end: raw.upperBound)
                    guard (0xDC00..<0xE000).contains(low) else {
                        throw .syntax("a lone surrogate in an escape", at: index - 6)
                    }
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    index += 6
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw .syntax("a lone surrogate in an escape", at: index - 6)
                }
                guard let character = Unicode.Scalar(scalar) else {
                    throw .syntax("an escape of no character", at: index - 6)
                }
                bytes.append(contentsOf: String(Character(character)).utf8)
                continue
            default: throw .syntax("an unknown escape", at: index)
            }
            index += 2
        }
        return bytes
    }

    /// The value of the four hexadecimal digits at `index` (before `end`).
    private func hex4(at index: Int, end: Int) throws(WireJSONError) -> UInt32 {
        guard index + 4 <= end else { throw .syntax("a \\u escape cut off", at: index - 2) }
        var value: UInt32 = 0
        for byte in text[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            case 0x41...0x46: digit = byte - 0x41 + 10
            default: throw .syntax("a \\u escape with a character that is not hexadecimal", at: index - 2)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Moves past a number, checking its grammar; its range.
    private mutating func scanNumber() throws(WireJSONError) -> Range<Int> {
        skipWhitespace()
        let start = offset
        func digits(_ reader: inout WireJSONReader) -> Int {
            let first = reader.offset
            while reader.offset < reader.text.count, (0x30...0x39).contains(reader.text[reader.offset]) {
                reader.offset += 1
            }
            return reader.offset - first
        }
        if offset < text.count && text[offset] == 0x2D { offset += 1 }
        let integer = offset
        guard digits(&self) > 0 else { throw .syntax("expected a value", at: start) }
        guard text[integer] != 0x30 || offset - integer == 1 else {
            throw .syntax("a number with a leading zero", at: start)
        }
        if offset < text.count && text[offset] == 0x2E {
            offset += 1
            guard digits(&self) > 0 else { throw .syntax("a number with no digit after its point", at: start) }
        }
        if offset < text.count && (text[offset] == 0x65 || text[offset] == 0x45) {
            offset += 1
            if offset < text.count && (text[offset] == 0x2B || text[offset] == 0x2D) { offset += 1 }
            guard digits(&self) > 0 else { throw .syntax("a number with no digit in its exponent", at: start) }
        }
        return start..<offset
    }
}

/// Whether the field name `name` is `snake` or its camel-case spelling `camel` (the gateway writes the first;
/// the second is read too, as the decoder that converted names from snake case did).
@inline(__always)
func wireName(_ name: UnsafeBufferPointer<UInt8>, _ snake: StaticString, _ camel: StaticString? = nil) -> Bool {
    if name.count == snake.utf8CodeUnitCount && memcmp(name.baseAddress!, snake.utf8Start, name.count) == 0 {
        return true
    }
    guard let camel else { return false }
    return name.count == camel.utf8CodeUnitCount && memcmp(name.baseAddress!, camel.utf8Start, name.count) == 0
}
