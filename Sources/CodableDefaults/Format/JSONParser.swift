// Strict JSON scanning for the store file.
//
// The store file is a JSON object (RFC 8259) whose members are the stored settings. This file parses it into
// top-level members whose values stay as compact JSON bytes and validates single values given as text; FileImage.swift
// writes the file back out. It uses only the standard library.

/// Where and why a store file (or a value given as text) failed to parse.
///
/// `offset` is a byte offset into the input. `line` and `column` are 1-based; a line ends at LF, CR or CR LF, and
/// `column` counts Unicode scalars from the start of the line. For `unexpectedEnd` the position is the end of the input.
struct JSONParseError: Error, Sendable, Equatable {
    /// What went wrong.
    enum Kind: Sendable, Equatable {
        /// A byte sequence that is not well-formed UTF-8 (overlong, encoded surrogate, above U+10FFFF, truncated, ...).
        case invalidUTF8
        /// The top-level value of a store file is valid JSON but not an object.
        case notAnObject
        /// A character that cannot appear at this point of the JSON grammar.
        case unexpectedCharacter
        /// The input ended before the JSON text was complete (including empty or whitespace-only input).
        case unexpectedEnd
        /// A number that does not follow the RFC 8259 grammar (leading `+` or zeros, missing digits, NaN, Infinity).
        case invalidNumber
        /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
        case invalidEscape
        /// A `\u` high surrogate not followed by a `\u` low surrogate, or a low surrogate on its own.
        case loneSurrogate
        /// A raw control character (U+0000 to U+001F) inside a string.
        case controlCharacterInString
        /// An object that has the same member name twice.
        case duplicateKey
        /// Objects and arrays nested deeper than the allowed maximum.
        case tooDeep
        /// Something other than whitespace after the complete JSON text.
        case trailingGarbage
        /// The input starts with a UTF-8 byte-order mark (EF BB BF).
        case byteOrderMark
    }

    /// What went wrong.
    var kind: Kind
    /// The byte offset of the problem in the input.
    var offset: Int
    /// The 1-based line of the problem.
    var line: Int
    /// The 1-based column of the problem, counted in Unicode scalars from the start of the line.
    var column: Int
    /// The top-level member being parsed when the error occurred, if known. For `duplicateKey` it is the duplicated
    /// key itself, which may belong to a nested object.
    var key: String?
    /// A sentence a person can act on, such as `duplicate key "volume"`.
    var message: String
}

/// One top-level member of a store file: its decoded key and its value as compact JSON bytes.
struct ParsedMember: Sendable, Equatable {
    /// The member name with all escapes resolved, as the bytes the file spells it with (never normalized).
    var key: String
    /// The member value as compact JSON text in UTF-8 (no whitespace outside strings).
    var value: [UInt8]

    /// Creates a member from a decoded key and compact JSON value bytes.
    init(key: String, value: [UInt8]) {
        self.key = key
        self.value = value
    }

    /// Whether two members have the same name, byte for byte, and the same value bytes.
    static func == (lhs: ParsedMember, rhs: ParsedMember) -> Bool {
        sameBytes(lhs.key, rhs.key) && lhs.value == rhs.value
    }
}

/// Parsing of the store file format, and the escaping of its strings (`FileImage` writes the file).
///
/// Parsing is strict RFC 8259 JSON: valid UTF-8 throughout, no byte-order mark, only space, tab, LF and CR as
/// whitespace, exact number grammar and literals, only the standard escapes, paired surrogates, no duplicate keys at
/// any depth, and a bounded nesting depth. The scanner is iterative, so adversarially deep input cannot overflow the
/// stack. Empty or whitespace-only input is reported as `unexpectedEnd`.
enum JSONParser {
    /// Parses a store file: strict RFC 8259 JSON whose top level is an object.
    ///
    /// Returns the top-level members in file order with decoded keys. Each value is returned compact: whitespace
    /// outside strings is removed and everything else (escapes, number spelling, member order inside nested objects)
    /// is kept byte for byte as in the file. `maxDepth` bounds the nesting of objects and arrays; the top-level object
    /// is depth 1. Duplicate keys are detected by comparing decoded keys code point by code point (their UTF-8 bytes),
    /// as RFC 8259 does: `"\u00E9"` and `"\u00e9"` are the same name, but `"\u00E9"` and `"e\u0301"` (canonically
    /// equivalent, and equal as Swift strings) are two names.
    static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 512) throws(JSONParseError) -> [ParsedMember] {
        var parser = ByteParser(bytes: bytes, maxDepth: maxDepth, inputName: "the file")
        var members = MemberList(bytes: bytes)
        try parser.scanDocument(into: &members)
        return members.members
    }

    /// Scans a store file with exactly the rules and errors of `parse(_:maxDepth:)`, handing each top-level member
    /// to `sink` as byte ranges of `bytes` instead of building members.
    ///
    /// `sink.insertName` is called when a top-level name has been scanned (before its `:`), so that a duplicate is
    /// reported at the same point as by `parse`; `sink.append` when its value has been scanned. Nested objects are
    /// checked for duplicate names by the scanner itself.
    static func scan<Sink: ParsedMemberSink>(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int = 512, into sink: inout Sink
    ) throws(JSONParseError) {
        var parser = ByteParser(bytes: bytes, maxDepth: maxDepth, inputName: "the file")
        try parser.scanDocument(into: &sink)
    }

    /// Parses a store file held in an array; see `parse(_:maxDepth:)` for the rules.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 512) throws(JSONParseError) -> [ParsedMember] {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try parse(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Validates one JSON value of any kind (object, array, string, number, `true`, `false`, `null`) and returns it
    /// compacted, like the member values returned by `parse`.
    ///
    /// Whitespace before and after the value is allowed. The same rules and errors apply as for `parse`, except that
    /// the value need not be an object and `maxDepth` counts from the value itself (a bare object is depth 1). Errors
    /// never carry a `key` other than a duplicated one.
    static func compactValue(_ bytes: [UInt8], maxDepth: Int = 512) throws(JSONParseError) -> [UInt8] {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in
                var parser = ByteParser(bytes: buffer, maxDepth: maxDepth, inputName: "the input")
                return try parser.parseSingleValue()
            }
        }
        return try result.get()
    }

    /// Appends the JSON string literal for `key`, quotes included, to `out`.
    ///
    /// `"` and `\` are escaped with a backslash; control characters U+0000 to U+001F as `\b \f \n \r \t` where such an
    /// escape exists and as `\u00xx` (lowercase hex) otherwise. Everything else, including non-ASCII and U+007F, is
    /// written as raw UTF-8.
    static func appendQuoted(_ key: String, to out: inout [UInt8]) {
        appendQuoted(utf8: key.utf8, to: &out)
    }

    /// Appends the JSON string literal of the UTF-8 bytes `key`, quotes included, to `out`, escaped as
    /// `appendQuoted(_:to:)` escapes a string (for a name decoded from a file without making a `String` of it).
    @inline(__always)
    static func appendQuoted(utf8 key: some Sequence<UInt8>, to out: inout [UInt8]) {
        out.append(Byte.quote)
        for byte in key {
            switch byte {
            case Byte.quote, Byte.backslash:
                out.append(Byte.backslash)
                out.append(byte)
            case 0x08:
                out.append(Byte.backslash)
                out.append(Byte.letterB)
            case 0x0C:
                out.append(Byte.backslash)
                out.append(Byte.letterF)
            case Byte.lineFeed:
                out.append(Byte.backslash)
                out.append(Byte.letterN)
            case Byte.carriageReturn:
                out.append(Byte.backslash)
                out.append(Byte.letterR)
            case Byte.tab:
                out.append(Byte.backslash)
                out.append(Byte.letterT)
            case 0x00..<0x20:
                out.append(contentsOf: [Byte.backslash, Byte.letterU, Byte.zero, Byte.zero])
                out.append(Byte.lowercaseHexDigits[Int(byte >> 4)])
                out.append(Byte.lowercaseHexDigits[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(Byte.quote)
    }
}

/// Where `JSONParser.scan` puts the top-level members of a store file: byte ranges of its input, in file order.
protocol ParsedMemberSink {
    /// Records the top-level member name whose contents (between the quotes) are `key` of the input, `hasEscapes`
    /// telling whether it contains a backslash escape. Returns false if the object already has a name with the same
    /// decoded bytes; the scan then fails with `duplicateKey`.
    mutating func insertName(_ key: Range<Int>, hasEscapes: Bool) -> Bool

    /// Records the value, as written, of the member whose name was inserted last: `value` of the input,
    /// `hasWhitespace` telling whether it contains whitespace outside strings.
    mutating func append(value: Range<Int>, hasWhitespace: Bool)
}

/// The sink of `JSONParser.parse`: decoded names (checked for duplicates) and compacted values.
private struct MemberList: ParsedMemberSink {
    /// The input.
    let bytes: UnsafeRawBufferPointer
    /// The members so far.
    var members: [ParsedMember] = []
    /// The names so far.
    var names = KeyTable()
    /// The name inserted last, waiting for its value.
    var pendingKey = ""
    /// Scratch storage for decoding names that contain escapes.
    var scratch: [UInt8] = []

    /// An empty list for the members of `bytes`.
    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        // Growing a large key set rehashes every key on each doubling, which costs more than the parse itself;
        // reserve for one member per 64 bytes, which covers typical files and costs little memory.
        names.reserve(bytes.count / 64)
    }

    mutating func insertName(_ key: Range<Int>, hasEscapes: Bool) -> Bool {
        pendingKey = ByteParser.decodeString(
            UnsafeRawBufferPointer(rebasing: bytes[key]), hasEscapes: hasEscapes, scratch: &scratch)
        return names.insert(pendingKey)
    }

    mutating func append(value: Range<Int>, hasWhitespace: Bool) {
        let compact = ByteParser.compacted(
            UnsafeRawBufferPointer(rebasing: bytes[value]), hasWhitespace: hasWhitespace)
        members.append(ParsedMember(key: pendingKey, value: compact))
    }
}

extension JSONParser {
    /// `source`, valid JSON value text, with whitespace outside strings removed (copied as is when `hasWhitespace`
    /// is false), as `parse` returns values.
    static func compacted(_ source: UnsafeRawBufferPointer, hasWhitespace: Bool) -> [UInt8] {
        ByteParser.compacted(source, hasWhitespace: hasWhitespace)
    }

    /// Replaces the contents of `out` with the UTF-8 bytes of the string whose contents (between the quotes) are
    /// `source`, escapes resolved. The contents must be valid, as in a name scanned by `scan`.
    static func decodeBytes(_ source: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        ByteParser.decodeBytes(source, into: &out)
    }

    /// The string whose contents (between the quotes) are `source`, escapes resolved. The contents must be valid,
    /// as in a value returned by `compactValue` or `parse`; `scratch` is working storage reused between calls.
    static func decodeString(_ source: UnsafeRawBufferPointer, hasEscapes: Bool, scratch: inout [UInt8]) -> String {
        ByteParser.decodeString(source, hasEscapes: hasEscapes, scratch: &scratch)
    }
}

/// ASCII byte values and classes: the scanner's and the writer's, and hexadecimal digits for the encryption key's text.
enum Byte {
    /// `"`
    static let quote: UInt8 = 0x22
    /// `\`
    static let backslash: UInt8 = 0x5C
    /// `/`
    static let slash: UInt8 = 0x2F
    /// `{`
    static let openBrace: UInt8 = 0x7B
    /// `}`
    static let closeBrace: UInt8 = 0x7D
    /// `[`
    static let openBracket: UInt8 = 0x5B
    /// `]`
    static let closeBracket: UInt8 = 0x5D
    /// `:`
    static let colon: UInt8 = 0x3A
    /// `,`
    static let comma: UInt8 = 0x2C
    /// `-`
    static let minus: UInt8 = 0x2D
    /// `+`
    static let plus: UInt8 = 0x2B
    /// `.`
    static let dot: UInt8 = 0x2E
    /// `0`
    static let zero: UInt8 = 0x30
    /// `9`
    static let nine: UInt8 = 0x39
    /// Space.
    static let space: UInt8 = 0x20
    /// Horizontal tab.
    static let tab: UInt8 = 0x09
    /// Line feed.
    static let lineFeed: UInt8 = 0x0A
    /// Carriage return.
    static let carriageReturn: UInt8 = 0x0D
    /// `b`
    static let letterB: UInt8 = 0x62
    /// `f`
    static let letterF: UInt8 = 0x66
    /// `n`
    static let letterN: UInt8 = 0x6E
    /// `r`
    static let letterR: UInt8 = 0x72
    /// `t`
    static let letterT: UInt8 = 0x74
    /// `u`
    static let letterU: UInt8 = 0x75
    /// `e`
    static let lowercaseE: UInt8 = 0x65
    /// `E`
    static let uppercaseE: UInt8 = 0x45
    /// `0123456789abcdef`
    static let lowercaseHexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether `byte` is JSON whitespace: space, tab, LF or CR.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || byte == lineFeed || byte == carriageReturn || byte == tab
    }

    /// Whether `byte` is an ASCII decimal digit.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- zero <= 9
    }

    /// The value of an ASCII hexadecimal digit, or nil if `byte` is not one.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte &- 0x30)
        case 0x41...0x46: return UInt32(byte &- 0x41 &+ 10)
        case 0x61...0x66: return UInt32(byte &- 0x61 &+ 10)
        default: return nil
        }
    }
}

/// The member names seen so far in one object, for finding duplicates.
///
/// Names compare by their UTF-8 bytes (see ``MemberName``), not by canonical equivalence. Most objects have a few
/// members, for which a linear search is much cheaper than hashing; past `linearLimit` names the table switches to a
/// hash set.
private struct KeyTable {
    /// How many names are searched linearly before switching to `set`.
    static let linearLimit = 12
    /// The names, while there are at most `linearLimit` of them.
    var list: [MemberName] = []
    /// All names, once there are more than `linearLimit`.
    var set: Set<MemberName> = []
    /// Whether `set` is in use.
    var usesSet = false

    /// Empties the table, keeping small storage for reuse.
    mutating func reset() {
        list.removeAll(keepingCapacity: true)
        if usesSet {
            set = []
            usesSet = false
        }
    }

    /// Switches to the hash set with room for `capacity` names if that is more than `linearLimit`. Only for an empty
    /// table.
    mutating func reserve(_ capacity: Int) {
        guard capacity > Self.linearLimit, list.isEmpty, !usesSet else { return }
        set.reserveCapacity(capacity)
        usesSet = true
    }

    /// Adds `name`; returns false if a name with the same bytes was already present.
    mutating func insert(_ name: String) -> Bool {
        let key = MemberName(name)
        if usesSet {
            return set.insert(key).inserted
        }
        for existing in list where existing == key {
            return false
        }
        if list.count < Self.linearLimit {
            list.append(key)
        } else {
            set = Set(list)
            set.insert(key)
            list.removeAll(keepingCapacity: true)
            usesSet = true
        }
        return true
    }
}

/// The member names seen so far in one nested object, as ranges of the input, for finding duplicates without
/// building a `String` per name.
///
/// Names compare by their decoded UTF-8 bytes, as `KeyTable` compares them: two names without escapes by their bytes
/// as written, others after decoding. Past `KeyTable.linearLimit` names the table switches to a hash set of decoded
/// names, which only large nested objects need.
private struct NameTable {
    /// The names (contents between the quotes, and whether they have escapes), while there are few of them.
    var list: [(start: Int, end: Int, hasEscapes: Bool)] = []
    /// The names, decoded, once there are more than `KeyTable.linearLimit`.
    var set = KeyTable()
    /// Whether `set` is in use.
    var usesSet = false

    /// Empties the table, keeping small storage for reuse.
    mutating func reset() {
        list.removeAll(keepingCapacity: true)
        if usesSet {
            set.reset()
            usesSet = false
        }
    }

    /// Adds `name`, a range of `bytes`; returns false if a name with the same decoded bytes was already present.
    /// `decoded` and `other` are scratch storage.
    mutating func insert(
        _ name: (start: Int, end: Int, hasEscapes: Bool), in bytes: UnsafeRawBufferPointer,
        decoded: inout [UInt8], other: inout [UInt8]
    ) -> Bool {
        let written = UnsafeRawBufferPointer(rebasing: bytes[name.start..<name.end])
        if usesSet {
            return set.insert(ByteParser.decodeString(written, hasEscapes: name.hasEscapes, scratch: &decoded))
        }
        if name.hasEscapes {
            ByteParser.decodeBytes(written, into: &decoded)
        }
        for existing in list {
            let existingBytes = UnsafeRawBufferPointer(rebasing: bytes[existing.start..<existing.end])
            let same: Bool
            switch (name.hasEscapes, existing.hasEscapes) {
            case (false, false):
                same = Self.equal(written, existingBytes)
            case (true, false):
                same = decoded.withUnsafeBytes { Self.equal($0, existingBytes) }
            case (false, true):
                ByteParser.decodeBytes(existingBytes, into: &other)
                same = other.withUnsafeBytes { Self.equal(written, $0) }
            case (true, true):
                ByteParser.decodeBytes(existingBytes, into: &other)
                same = decoded == other
            }
            if same { return false }
        }
        list.append(name)
        if list.count > KeyTable.linearLimit {
            for entry in list {
                let entryBytes = UnsafeRawBufferPointer(rebasing: bytes[entry.start..<entry.end])
                _ = set.insert(ByteParser.decodeString(entryBytes, hasEscapes: entry.hasEscapes, scratch: &other))
            }
            list.removeAll(keepingCapacity: true)
            usesSet = true
        }
        return true
    }

    /// Whether two byte buffers hold the same bytes.
    @inline(__always)
    static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}

/// The state of one parse: the input, a cursor, and scratch storage reused across values.
///
/// Containers are tracked on an explicit stack, so nesting depth costs heap memory bounded by `maxDepth`, never call
/// stack. Line and column are computed only when an error is created.
private struct ByteParser {
    /// The input.
    let bytes: UnsafeRawBufferPointer
    /// `bytes.count`.
    let count: Int
    /// The deepest nesting of objects and arrays allowed.
    let maxDepth: Int
    /// How messages refer to the input, such as "the file".
    let inputName: String
    /// The offset of the next byte to read.
    var index = 0
    /// Where the name of the top-level member being scanned is, for reporting it in errors. A range rather than a
    /// string so that the hot path does not retain and release a string per member.
    var currentKey: (start: Int, end: Int, hasEscapes: Bool)?
    /// Where the member name most recently scanned by `scanMemberName` is.
    var lastName: (start: Int, end: Int, hasEscapes: Bool) = (0, 0, false)
    /// The containers open inside the value being scanned, innermost last; `true` for an object, `false` for an array.
    var containers: [Bool] = []
    /// The keys seen so far in each open object, indexed by object nesting. Kept between objects to reuse storage.
    var keySets: [NameTable] = []
    /// The number of objects open, which is the number of entries of `keySets` in use.
    var openObjects = 0
    /// Scratch storage for decoding keys that contain escapes.
    var scratch: [UInt8] = []
    /// Scratch storage for decoding the keys a key is compared with.
    var otherScratch: [UInt8] = []

    /// Creates a parser at the start of `bytes`.
    init(bytes: UnsafeRawBufferPointer, maxDepth: Int, inputName: String) {
        self.bytes = bytes
        self.count = bytes.count
        self.maxDepth = maxDepth
        self.inputName = inputName
    }

    // MARK: Entry points

    /// Scans the whole input as a store file whose top level is an object, handing its members to `sink` in order.
    mutating func scanDocument<Sink: ParsedMemberSink>(into sink: inout Sink) throws(JSONParseError) {
        try rejectByteOrderMark()
        _ = skipWhitespace()
        guard index < count else {
            throw error(.unexpectedEnd, at: index, "\(inputName) is empty; expected a JSON object starting with '{'")
        }
        guard bytes[index] == Byte.openBrace else {
            let found = try describeCharacter(at: index)
            throw error(
                .notAnObject, at: index, "the top level must be a JSON object starting with '{', found \(found)")
        }
        try checkDepth(1)
        index += 1
        // The sink checks the top-level names; `keySets` serves the nested objects.
        var isFirst = true
        var ignoredWhitespace = false
        _ = skipWhitespace()
        if index < count && bytes[index] == Byte.closeBrace {
            index += 1
        } else {
            while true {
                currentKey = nil
                let nameOffset = try scanName(afterComma: !isFirst)
                isFirst = false
                if !sink.insertName(lastName.start..<lastName.end, hasEscapes: lastName.hasEscapes) {
                    throw duplicateKey(at: nameOffset)
                }
                try scanColon(sawWhitespace: &ignoredWhitespace)
                currentKey = lastName
                let start = index
                let valueHasWhitespace = try scanValue(baseDepth: 1)
                sink.append(value: start..<index, hasWhitespace: valueHasWhitespace)
                _ = skipWhitespace()
                guard index < count else {
                    throw unexpected("expected ',' or '}' after a member")
                }
                let byte = bytes[index]
                if byte == Byte.comma {
                    index += 1
                    _ = skipWhitespace()
                } else if byte == Byte.closeBrace {
                    index += 1
                    break
                } else {
                    throw unexpected("expected ',' or '}' after a member")
                }
            }
        }
        currentKey = nil
        _ = skipWhitespace()
        if index < count {
            let found = try describeCharacter(at: index)
            throw error(
                .trailingGarbage, at: index, "unexpected \(found) after the closing '}' of the top-level object")
        }
    }

    /// Parses the whole input as one JSON value of any kind surrounded by optional whitespace; returns it compacted.
    mutating func parseSingleValue() throws(JSONParseError) -> [UInt8] {
        try rejectByteOrderMark()
        _ = skipWhitespace()
        guard index < count else {
            throw error(.unexpectedEnd, at: index, "\(inputName) is empty; expected a JSON value")
        }
        let start = index
        let hasWhitespace = try scanValue(baseDepth: 0)
        let end = index
        _ = skipWhitespace()
        if index < count {
            let found = try describeCharacter(at: index)
            throw error(.trailingGarbage, at: index, "unexpected \(found) after the end of the JSON value")
        }
        return Self.compacted(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), hasWhitespace: hasWhitespace)
    }

    // MARK: Values

    /// Scans one complete value starting at `index` (which must not be whitespace) and leaves `index` just after it.
    ///
    /// `baseDepth` is the number of containers already open around the value. Returns whether any whitespace
    /// appeared inside the value, so the caller knows whether the value bytes need compacting.
    mutating func scanValue(baseDepth: Int) throws(JSONParseError) -> Bool {
        // Every value closes what it opens, so the stack is empty here unless a scan failed; emptying an empty
        // array still costs a call per member.
        if !containers.isEmpty {
            containers.removeAll(keepingCapacity: true)
        }
        var sawWhitespace = false
        valueLoop: while true {
            guard index < count else {
                throw unexpected("expected a value")
            }
            switch bytes[index] {
            case Byte.openBrace:
                try checkDepth(baseDepth + containers.count + 1)
                index += 1
                containers.append(true)
                openObject()
                sawWhitespace = skipWhitespace() || sawWhitespace
                if index < count && bytes[index] == Byte.closeBrace {
                    index += 1
                    containers.removeLast()
                    openObjects -= 1
                } else {
                    try scanMemberName(afterComma: false, sawWhitespace: &sawWhitespace)
                    continue valueLoop
                }
            case Byte.openBracket:
                try checkDepth(baseDepth + containers.count + 1)
                index += 1
                containers.append(false)
                sawWhitespace = skipWhitespace() || sawWhitespace
                if index < count && bytes[index] == Byte.closeBracket {
                    index += 1
                    containers.removeLast()
                } else {
                    continue valueLoop
                }
            case Byte.quote:
                _ = try scanString()
            case Byte.minus, Byte.zero...Byte.nine:
                try scanNumber()
            case Byte.letterT:
                try scanLiteral("true")
            case Byte.letterF:
                try scanLiteral("false")
            case Byte.letterN:
                try scanLiteral("null")
            default:
                throw try invalidValueStart()
            }
            // A value is complete: close containers or move to the next element or member.
            while let isObject = containers.last {
                sawWhitespace = skipWhitespace() || sawWhitespace
                guard index < count else {
                    throw unexpected(
                        isObject ? "expected ',' or '}' after a member" : "expected ',' or ']' after an element")
                }
                let byte = bytes[index]
                if byte == Byte.comma {
                    index += 1
                    sawWhitespace = skipWhitespace() || sawWhitespace
                    if isObject {
                        try scanMemberName(afterComma: true, sawWhitespace: &sawWhitespace)
                    }
                    continue valueLoop
                }
                guard byte == (isObject ? Byte.closeBrace : Byte.closeBracket) else {
                    throw unexpected(
                        isObject ? "expected ',' or '}' after a member" : "expected ',' or ']' after an element")
                }
                index += 1
                containers.removeLast()
                if isObject {
                    openObjects -= 1
                }
            }
            return sawWhitespace
        }
    }

    /// Scans a member name, checks it against the other names of the innermost open object, and consumes the
    /// following `:` and whitespace.
    mutating func scanMemberName(afterComma: Bool, sawWhitespace: inout Bool) throws(JSONParseError) {
        let nameOffset = try scanName(afterComma: afterComma)
        if !keySets[openObjects - 1].insert(lastName, in: bytes, decoded: &scratch, other: &otherScratch) {
            throw duplicateKey(at: nameOffset)
        }
        try scanColon(sawWhitespace: &sawWhitespace)
    }

    /// Scans a member name at `index` into `lastName` and returns the offset of its opening quote.
    mutating func scanName(afterComma: Bool) throws(JSONParseError) -> Int {
        guard index < count, bytes[index] == Byte.quote else {
            if afterComma && index < count && bytes[index] == Byte.closeBrace {
                throw error(
                    .unexpectedCharacter, at: index,
                    "expected a member name after ',', found '}' "
                        + "(JSON does not allow a trailing comma)")
            }
            throw unexpected("expected a member name in double quotes")
        }
        let nameOffset = index
        lastName = try scanString()
        return nameOffset
    }

    /// The `duplicateKey` error for the name in `lastName`, whose opening quote is at `nameOffset`.
    func duplicateKey(at nameOffset: Int) -> JSONParseError {
        var scratch: [UInt8] = []
        let key = Self.decodeString(
            UnsafeRawBufferPointer(rebasing: bytes[lastName.start..<lastName.end]), hasEscapes: lastName.hasEscapes,
            scratch: &scratch)
        var quoted: [UInt8] = []
        JSONParser.appendQuoted(key, to: &quoted)
        return error(
            .duplicateKey, at: nameOffset, "duplicate key \(String(decoding: quoted, as: UTF8.self))", key: key)
    }

    /// Consumes whitespace, the `:` after a member name, and whitespace.
    mutating func scanColon(sawWhitespace: inout Bool) throws(JSONParseError) {
        sawWhitespace = skipWhitespace() || sawWhitespace
        guard index < count, bytes[index] == Byte.colon else {
            throw unexpected("expected ':' after the member name")
        }
        index += 1
        sawWhitespace = skipWhitespace() || sawWhitespace
    }

    /// Scans a string starting at the opening quote at `index` and leaves `index` after the closing quote.
    ///
    /// Returns the range of the contents (between the quotes) and whether it contains any escape.
    mutating func scanString() throws(JSONParseError) -> (start: Int, end: Int, hasEscapes: Bool) {
        let openingQuote = index
        index += 1
        let start = index
        var hasEscapes = false
        while true {
            // Fastest path: eight bytes at a time while none is a quote, a backslash, a control character or
            // non-ASCII (the classic "has a zero byte" bit trick on each condition).
            while index + 8 <= count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                let quotes = word ^ (ones &* UInt64(Byte.quote))
                let backslashes = word ^ (ones &* UInt64(Byte.backslash))
                let special =
                    ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
                    | (word &- (ones &* 0x20)) | word
                guard special & highs == 0 else { break }
                index += 8
            }
            // Fast path: plain printable ASCII.
            while index < count {
                let byte = bytes[index]
                guard byte >= 0x20 && byte < 0x80 && byte != Byte.quote && byte != Byte.backslash else { break }
                index += 1
            }
            guard index < count else {
                let (line, column) = position(of: openingQuote)
                throw error(
                    .unexpectedEnd, at: index,
                    "expected '\"' to close the string that starts at line \(line), "
                        + "column \(column), found the end of \(inputName)")
            }
            let byte = bytes[index]
            if byte == Byte.quote {
                index += 1
                return (start, index - 1, hasEscapes)
            } else if byte == Byte.backslash {
                hasEscapes = true
                try scanEscape()
            } else if byte < 0x20 {
                throw error(
                    .controlCharacterInString, at: index,
                    "\(describeASCII(byte)) must be escaped inside a "
                        + "string (for example as \(escapeSpelling(byte)))")
            } else {
                guard let length = Self.utf8SequenceLength(in: bytes, at: index) else {
                    throw invalidUTF8(at: index)
                }
                index += length
            }
        }
    }

    /// Scans an escape sequence starting at the backslash at `index`, including a following low surrogate escape when
    /// the first one is a high surrogate.
    mutating func scanEscape() throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < count else {
            throw unexpected("expected an escape character after '\\'")
        }
        switch bytes[index] {
        case Byte.quote, Byte.backslash, Byte.slash, Byte.letterB, Byte.letterF, Byte.letterN, Byte.letterR,
            Byte.letterT:
            index += 1
        case Byte.letterU:
            index += 1
            let unit = try scanHex4(escapeStart: escapeStart)
            if unit >= 0xDC00 && unit <= 0xDFFF {
                throw error(
                    .loneSurrogate, at: escapeStart,
                    "the escape \\u\(hex4(unit)) is a low surrogate that "
                        + "does not follow a high surrogate; a string cannot contain an unpaired surrogate")
            }
            guard unit >= 0xD800 && unit <= 0xDBFF else { return }
            guard index < count else {
                throw unexpected("expected a low surrogate escape after \\u\(hex4(unit))")
            }
            guard index + 1 < count && bytes[index] == Byte.backslash && bytes[index + 1] == Byte.letterU else {
                throw error(
                    .loneSurrogate, at: escapeStart,
                    "the escape \\u\(hex4(unit)) is a high surrogate that is "
                        + "not followed by a low surrogate escape (\\uDC00 to \\uDFFF)")
            }
            let secondStart = index
            index += 2
            let low = try scanHex4(escapeStart: secondStart)
            guard low >= 0xDC00 && low <= 0xDFFF else {
                throw error(
                    .loneSurrogate, at: escapeStart,
                    "the escape \\u\(hex4(unit)) is a high surrogate that is "
                        + "followed by \\u\(hex4(low)) instead of a low surrogate (\\uDC00 to \\uDFFF)")
            }
        default:
            let found = try describeCharacter(at: index)
            throw error(
                .invalidEscape, at: escapeStart,
                "invalid escape '\\' followed by \(found); the valid "
                    + "escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX")
        }
    }

    /// Reads the four hexadecimal digits of a `\u` escape at `index` and returns their value.
    mutating func scanHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < count else {
                throw unexpected("expected four hexadecimal digits after \\u")
            }
            guard let digit = Byte.hexValue(bytes[index]) else {
                let found = try describeCharacter(at: index)
                throw error(
                    .invalidEscape, at: escapeStart,
                    "expected four hexadecimal digits after \\u, found "
                        + found)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Scans a number starting at `index` (a `-` or a digit) following the RFC 8259 grammar exactly.
    mutating func scanNumber() throws(JSONParseError) {
        let start = index
        if bytes[index] == Byte.minus {
            index += 1
            guard index < count else {
                throw unexpected("expected a digit after '-'")
            }
            if !Byte.isDigit(bytes[index]) {
                if matches("Infinity", at: index) {
                    throw error(.invalidNumber, at: start, "-Infinity is not a valid JSON number")
                }
                throw unexpected("expected a digit after '-'", kind: .invalidNumber)
            }
        }
        if bytes[index] == Byte.zero {
            index += 1
            if index < count && Byte.isDigit(bytes[index]) {
                throw error(.invalidNumber, at: start, "a number must not have a leading zero")
            }
        } else {
            while index < count && Byte.isDigit(bytes[index]) {
                index += 1
            }
        }
        if index < count && bytes[index] == Byte.dot {
            index += 1
            guard index < count && Byte.isDigit(bytes[index]) else {
                throw unexpected("expected a digit after the decimal point", kind: .invalidNumber)
            }
            while index < count && Byte.isDigit(bytes[index]) {
                index += 1
            }
        }
        if index < count && (bytes[index] == Byte.lowercaseE || bytes[index] == Byte.uppercaseE) {
            index += 1
            if index < count && (bytes[index] == Byte.plus || bytes[index] == Byte.minus) {
                index += 1
            }
            guard index < count && Byte.isDigit(bytes[index]) else {
                throw unexpected("expected a digit in the exponent", kind: .invalidNumber)
            }
            while index < count && Byte.isDigit(bytes[index]) {
                index += 1
            }
        }
    }

    /// Scans the literal `word` (`true`, `false` or `null`) at `index`.
    mutating func scanLiteral(_ word: StaticString) throws(JSONParseError) {
        for position in 0..<word.utf8CodeUnitCount {
            guard index < count && bytes[index] == word.utf8Start[position] else {
                throw unexpected("expected '\(word)'")
            }
            index += 1
        }
    }

    /// The error for a byte at `index` that cannot start a value, with a specific message for common mistakes.
    func invalidValueStart() throws(JSONParseError) -> JSONParseError {
        switch bytes[index] {
        case Byte.plus:
            return error(.invalidNumber, at: index, "a number must not start with '+'")
        case Byte.dot:
            return error(.invalidNumber, at: index, "a number must have a digit before the decimal point")
        case _ where matches("NaN", at: index):
            return error(.invalidNumber, at: index, "NaN is not a valid JSON number")
        case _ where matches("Infinity", at: index):
            return error(.invalidNumber, at: index, "Infinity is not a valid JSON number")
        default:
            return unexpected("expected a value (an object, array, string, number, true, false or null)")
        }
    }

    /// Whether the input at `offset` starts with the ASCII text `word`.
    func matches(_ word: StaticString, at offset: Int) -> Bool {
        let length = word.utf8CodeUnitCount
        guard count - offset >= length else { return false }
        for position in 0..<length where bytes[offset + position] != word.utf8Start[position] {
            return false
        }
        return true
    }

    // MARK: Structure helpers

    /// Throws `tooDeep` at `index` if a container opened there, at nesting `depth`, exceeds `maxDepth`.
    @inline(__always)
    func checkDepth(_ depth: Int) throws(JSONParseError) {
        if depth > maxDepth {
            throw tooDeep()
        }
    }

    /// The `tooDeep` error for a container opened at `index`.
    func tooDeep() -> JSONParseError {
        error(.tooDeep, at: index, "objects and arrays are nested more than \(maxDepth) levels deep")
    }

    /// Starts duplicate-key tracking for a newly opened object.
    mutating func openObject() {
        if keySets.count == openObjects {
            keySets.append(NameTable())
        } else {
            keySets[openObjects].reset()
        }
        openObjects += 1
    }

    /// Skips JSON whitespace at `index`; returns whether any was skipped.
    @inline(__always)
    mutating func skipWhitespace() -> Bool {
        let start = index
        while index < count && Byte.isWhitespace(bytes[index]) {
            index += 1
        }
        return index != start
    }

    /// Throws `byteOrderMark` if the input starts with EF BB BF.
    func rejectByteOrderMark() throws(JSONParseError) {
        if count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            throw error(
                .byteOrderMark, at: 0,
                "\(inputName) starts with a UTF-8 byte-order mark, which JSON forbids (RFC 8259 section 8.1 says "
                    + "implementations must not add one); it is refused so that nothing is silently changed; "
                    + "remove the first three bytes (EF BB BF)")
        }
    }

    // MARK: Output

    /// `source` with whitespace outside strings removed; copies it directly when `hasWhitespace` is false. `source`
    /// must hold a valid JSON value. Static so that calling it does not copy the parser.
    static func compacted(_ source: UnsafeRawBufferPointer, hasWhitespace: Bool) -> [UInt8] {
        guard hasWhitespace else {
            return [UInt8](unsafeUninitializedCapacity: source.count) { buffer, initialized in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: source)
                initialized = source.count
            }
        }
        return [UInt8](unsafeUninitializedCapacity: source.count) { buffer, initialized in
            var written = 0
            var position = 0
            var inString = false
            while position < source.count {
                let byte = source[position]
                position += 1
                if inString {
                    buffer[written] = byte
                    written += 1
                    if byte == Byte.quote {
                        inString = false
                    } else if byte == Byte.backslash && position < source.count {
                        buffer[written] = source[position]
                        written += 1
                        position += 1
                    }
                } else if !Byte.isWhitespace(byte) {
                    buffer[written] = byte
                    written += 1
                    inString = byte == Byte.quote
                }
            }
            initialized = written
        }
    }

    /// The string with contents `source` (between the quotes) with escapes resolved, using `scratch` as working
    /// storage when there are escapes. The contents must have been validated by `scanString`.
    static func decodeString(_ source: UnsafeRawBufferPointer, hasEscapes: Bool, scratch: inout [UInt8]) -> String {
        guard hasEscapes else {
            return String(decoding: source, as: UTF8.self)
        }
        decodeBytes(source, into: &scratch)
        return String(decoding: scratch, as: UTF8.self)
    }

    /// Replaces the contents of `scratch` with the bytes of the string with contents `source` (between the quotes),
    /// escapes resolved. The contents must have been validated by `scanString`.
    static func decodeBytes(_ source: UnsafeRawBufferPointer, into scratch: inout [UInt8]) {
        scratch.removeAll(keepingCapacity: true)
        let bytes = source
        let end = source.count
        var position = 0
        while position < end {
            let byte = bytes[position]
            position += 1
            guard byte == Byte.backslash, position < end else {
                scratch.append(byte)
                continue
            }
            let escaped = bytes[position]
            position += 1
            switch escaped {
            case Byte.letterB: scratch.append(0x08)
            case Byte.letterF: scratch.append(0x0C)
            case Byte.letterN: scratch.append(Byte.lineFeed)
            case Byte.letterR: scratch.append(Byte.carriageReturn)
            case Byte.letterT: scratch.append(Byte.tab)
            case Byte.letterU:
                var scalar = hexValue(bytes, at: position, end: end)
                position += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    // Validated: a `\uXXXX` low surrogate follows.
                    let low = hexValue(bytes, at: position + 2, end: end)
                    position += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low &- 0xDC00)
                }
                appendUTF8(scalar, to: &scratch)
            default: scratch.append(escaped)
            }
        }
    }

    /// The value of the four hexadecimal digits at `offset` of `bytes`, treating anything missing or invalid as zero.
    static func hexValue(_ bytes: UnsafeRawBufferPointer, at offset: Int, end: Int) -> UInt32 {
        var value: UInt32 = 0
        var position = offset
        while position < offset + 4 && position < end {
            value = value << 4 | (Byte.hexValue(bytes[position]) ?? 0)
            position += 1
        }
        return value
    }

    /// Appends the UTF-8 encoding of `scalar` to `out`; appends U+FFFD for a value that is not a Unicode scalar.
    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        out.append(contentsOf: (Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
    }

    // MARK: UTF-8

    /// The length of the well-formed UTF-8 sequence starting with the non-ASCII byte at `offset`, or nil if it is
    /// malformed (bad lead byte, overlong, encoded surrogate, above U+10FFFF, or truncated).
    @inline(__always)
    func utf8SequenceLength(at offset: Int) -> Int? {
        Self.utf8SequenceLength(in: bytes, at: offset)
    }

    /// The length of the well-formed UTF-8 sequence starting with the non-ASCII byte at `offset` of `bytes`, or nil if
    /// it is malformed. Static so that the hot path does not copy the parser.
    static func utf8SequenceLength(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        let count = bytes.count
        let lead = bytes[offset]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            secondRange = 0x80...0x9F
        case 0xF0:
            length = 4
            secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            secondRange = 0x80...0x8F
        default: return nil
        }
        guard count - offset >= length, secondRange.contains(bytes[offset + 1]) else { return nil }
        for position in 2..<length where bytes[offset + position] & 0xC0 != 0x80 {
            return nil
        }
        return length
    }

    /// The `invalidUTF8` error for the malformed sequence starting at `offset`.
    func invalidUTF8(at offset: Int) -> JSONParseError {
        let shown = (offset..<min(offset + 4, count)).map { hex2(bytes[$0]) }.joined(separator: " ")
        return error(
            .invalidUTF8, at: offset,
            "\(inputName) is not valid UTF-8: malformed byte sequence starting "
                + "with \(shown)")
    }

    // MARK: Errors

    /// The error for the byte at `index` (or the end of the input) not meeting `expectation`.
    ///
    /// Reports `unexpectedEnd` at the end of the input and `invalidUTF8` for a malformed sequence; otherwise `kind`.
    func unexpected(_ expectation: String, kind: JSONParseError.Kind = .unexpectedCharacter) -> JSONParseError {
        guard index < count else {
            return error(.unexpectedEnd, at: index, "\(expectation), found the end of \(inputName)")
        }
        guard bytes[index] < 0x80 || utf8SequenceLength(at: index) != nil else {
            return invalidUTF8(at: index)
        }
        return error(kind, at: index, "\(expectation), found \(describeValidCharacter(at: index))")
    }

    /// A description of the character at `offset` for messages; throws `invalidUTF8` if it is malformed.
    func describeCharacter(at offset: Int) throws(JSONParseError) -> String {
        guard bytes[offset] < 0x80 || utf8SequenceLength(at: offset) != nil else {
            throw invalidUTF8(at: offset)
        }
        return describeValidCharacter(at: offset)
    }

    /// A description of the well-formed character at `offset`, such as `'x'` or `'é' (U+00E9)`.
    func describeValidCharacter(at offset: Int) -> String {
        let byte = bytes[offset]
        if byte < 0x80 {
            return describeASCII(byte)
        }
        let length = utf8SequenceLength(at: offset) ?? 1
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
        let scalar = text.unicodeScalars.first.map { $0.value } ?? 0xFFFD
        return "'\(text)' (U+\(hex4(scalar)))"
    }

    /// A description of an ASCII byte for messages.
    func describeASCII(_ byte: UInt8) -> String {
        switch byte {
        case Byte.space: return "a space"
        case Byte.tab: return "a tab"
        case Byte.lineFeed, Byte.carriageReturn: return "a line break"
        case 0x27: return "\"'\""
        case 0x00..<0x20, 0x7F: return "control character U+\(hex4(UInt32(byte)))"
        default: return "'\(Character(Unicode.Scalar(byte)))'"
        }
    }

    /// How the control character `byte` is written as a JSON escape, such as `\n` or `\u0001`.
    func escapeSpelling(_ byte: UInt8) -> String {
        var quoted: [UInt8] = []
        JSONParser.appendQuoted(String(Character(Unicode.Scalar(byte))), to: &quoted)
        return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self)
    }

    /// An error of `kind` at `offset` with line and column computed from the input.
    func error(_ kind: JSONParseError.Kind, at offset: Int, _ message: String, key: String? = nil) -> JSONParseError {
        let (line, column) = position(of: offset)
        var memberKey = key
        if memberKey == nil, let (start, end, hasEscapes) = currentKey {
            var scratch: [UInt8] = []
            memberKey = Self.decodeString(
                UnsafeRawBufferPointer(rebasing: bytes[start..<end]), hasEscapes: hasEscapes, scratch: &scratch)
        }
        return JSONParseError(
            kind: kind, offset: offset, line: line, column: column, key: memberKey, message: message)
    }

    /// The 1-based line and column (in Unicode scalars) of `offset`. LF, CR and CR LF each end a line.
    func position(of offset: Int) -> (line: Int, column: Int) {
        JSONParser.position(of: offset, in: bytes)
    }

    /// `value` as at least four uppercase hexadecimal digits.
    func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// `byte` as two uppercase hexadecimal digits.
    func hex2(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }
}
