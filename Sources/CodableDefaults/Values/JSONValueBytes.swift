// JSONValue <-> JSON bytes without Foundation's coders, so that nothing is rounded: a number keeps its literal,
// a string its characters. Both directions are iterative: deep values cost heap, never call stack.

/// Reading and writing ``JSONValue`` as JSON bytes with the store's own scanner and writer.
enum JSONValueBytes {
    // MARK: Reading

    /// Two member names of one object that differ in their bytes but that a `[String: JSONValue]` holds as
    /// one key, because Swift's `String` compares them by canonical equivalence (`"\u00E9"` and `"e\u0301"`).
    struct NameCollision: Error {
        /// The earlier name, as spelled.
        var first: String
        /// The later name, as spelled.
        var second: String
        /// The byte offset of the later name's opening quote in the compact bytes.
        var offset: Int

        /// A sentence naming both spellings, escaped so that they look different.
        var message: String {
            "the member names \(KeyDescription.spelled(first)) and \(KeyDescription.spelled(second)) differ only "
                + "in Unicode normalization; a JSONValue object cannot hold both (its String keys would merge them)"
        }
    }

    /// Parses one JSON value strictly (the rules of `JSONParser.compactValue`) into a ``JSONValue``.
    ///
    /// - Throws: What `JSONParser.compactValue` throws, or a `duplicateKey` error at the later of two names of one
    ///   object that a ``JSONValue`` cannot tell apart (see ``NameCollision``), with its line and column in
    ///   `bytes`.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 512) throws(JSONParseError) -> JSONValue {
        let compact = try JSONParser.compactValue(bytes, maxDepth: maxDepth)
        let result = compact.withUnsafeBytes { buffer in
            Result { () throws(NameCollision) in try value(fromCompact: buffer) }
        }
        switch result {
        case .success(let value):
            return value
        case .failure(let collision):
            let (offset, line, column) = bytes.withUnsafeBytes { text in
                let offset = JSONParser.offset(ofCompact: collision.offset, in: text)
                let (line, column) = JSONParser.position(of: offset, in: text)
                return (offset, line, column)
            }
            throw JSONParseError(
                kind: .duplicateKey, offset: offset, line: line, column: column, key: collision.second,
                message: collision.message)
        }
    }

    /// A container being built, innermost last on the stack.
    private struct Open {
        /// Whether it is an object (else an array).
        var isObject: Bool
        /// The elements so far, of an array.
        var elements: [JSONValue] = []
        /// The members so far, of an object.
        var members: [String: JSONValue] = [:]
        /// The name of the member whose value comes next, of an object.
        var key = ""
        /// Where that name starts in the bytes, for ``NameCollision/offset``.
        var keyOffset = 0
    }

    /// The value of compact, valid JSON bytes, as returned by `JSONParser.compactValue` or held by a
    /// `ParsedMember`, or produced by an encoder. Nothing is validated again: garbage in gives an unspecified
    /// value, never a crash beyond the bounds checks.
    ///
    /// - Throws: ``NameCollision`` for two names of one object that the ``JSONValue`` would merge.
    static func value(fromCompact bytes: UnsafeRawBufferPointer) throws(NameCollision) -> JSONValue {
        var stack: [Open] = []
        var scratch: [UInt8] = []
        var index = 0

        func string() -> String {
            index += 1
            let start = index
            var hasEscapes = false
            while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\") {
                    hasEscapes = true
                    index += 1
                }
                index += 1
            }
            let end = min(index, bytes.count)
            index += 1
            return JSONParser.decodeString(
                UnsafeRawBufferPointer(rebasing: bytes[start..<end]), hasEscapes: hasEscapes, scratch: &scratch)
        }
        func memberName() -> (name: String, offset: Int) {
            let offset = index
            let name = string()
            index += 1  // ':'
            return (name, offset)
        }
        func byte(at offset: Int) -> UInt8 { offset < bytes.count ? bytes[offset] : 0 }

        valueLoop: while true {
            var value: JSONValue
            switch byte(at: index) {
            case UInt8(ascii: "{"):
                index += 1
                if byte(at: index) == UInt8(ascii: "}") {
                    index += 1
                    value = .object([:])
                } else {
                    let (key, keyOffset) = memberName()
                    stack.append(Open(isObject: true, key: key, keyOffset: keyOffset))
                    continue valueLoop
                }
            case UInt8(ascii: "["):
                index += 1
                if byte(at: index) == UInt8(ascii: "]") {
                    index += 1
                    value = .array([])
                } else {
                    stack.append(Open(isObject: false))
                    continue valueLoop
                }
            case UInt8(ascii: "\""):
                value = .string(string())
            case UInt8(ascii: "t"):
                index += 4
                value = .bool(true)
            case UInt8(ascii: "f"):
                index += 5
                value = .bool(false)
            case UInt8(ascii: "n"):
                index += 4
                value = .null
            default:
                let start = index
                while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
                let literal = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                value = .number(JSONNumber(validatedLiteral: literal))
            }
            // A value is complete: add it to the open containers, closing those that end here.
            while var open = stack.popLast() {
                if open.isObject {
                    // One lookup; a name already there (which keeps its earlier spelling) is a collision unless
                    // its bytes are equal, which the scanner refuses.
                    if open.members.updateValue(value, forKey: open.key) != nil,
                        let index = open.members.index(forKey: open.key),
                        !sameBytes(open.members[index].key, open.key)
                    {
                        throw NameCollision(
                            first: open.members[index].key, second: open.key, offset: open.keyOffset)
                    }
                } else {
                    open.elements.append(value)
                }
                if byte(at: index) == UInt8(ascii: ",") {
                    index += 1
                    if open.isObject { (open.key, open.keyOffset) = memberName() }
                    stack.append(open)
                    continue valueLoop
                }
                index += 1  // '}' or ']'
                value = open.isObject ? .object(open.members) : .array(open.elements)
            }
            return value
        }
    }

    /// Whether `byte` can be part of a JSON number.
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    // MARK: Writing

    /// A container being written, innermost last on the stack, with the position of its next element.
    private enum Frame {
        case array([JSONValue], next: Int)
        case object([(key: String, value: JSONValue)], next: Int)
    }

    /// `value` as compact JSON: object members sorted by the UTF-8 bytes of their names (as in the store file),
    /// numbers as their literals, strings escaped as the store file's member names are. Never fails.
    ///
    /// - Returns: The bytes, and how deeply arrays and objects nest (0 for a scalar, 1 for `[]` or `[1]`).
    static func write(_ value: JSONValue) -> (bytes: [UInt8], depth: Int) {
        var out: [UInt8] = []
        var stack: [Frame] = []
        var depth = 0
        var next: JSONValue? = value
        while true {
            if let current = next {
                next = nil
                switch current {
                case .null: out.append(contentsOf: "null".utf8)
                case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
                case .number(let number): out.append(contentsOf: number.literal.utf8)
                case .string(let text): JSONParser.appendQuoted(text, to: &out)
                case .array(let elements):
                    depth = max(depth, stack.count + 1)
                    out.append(UInt8(ascii: "["))
                    stack.append(.array(elements, next: 0))
                case .object(let members):
                    depth = max(depth, stack.count + 1)
                    out.append(UInt8(ascii: "{"))
                    let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                    stack.append(.object(sorted.map { (key: $0.key, value: $0.value) }, next: 0))
                }
            }
            guard let frame = stack.popLast() else { return (out, depth) }
            switch frame {
            case .array(let elements, let position):
                guard position < elements.count else {
                    out.append(UInt8(ascii: "]"))
                    continue
                }
                if position > 0 { out.append(UInt8(ascii: ",")) }
                next = elements[position]
                stack.append(.array(elements, next: position + 1))
            case .object(let members, let position):
                guard position < members.count else {
                    out.append(UInt8(ascii: "}"))
                    continue
                }
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONParser.appendQuoted(members[position].key, to: &out)
                out.append(UInt8(ascii: ":"))
                next = members[position].value
                stack.append(.object(members, next: position + 1))
            }
        }
    }

    /// `value` as the compact fragment a store keeps for `key`.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - key: The key it is stored under, for the error.
    ///   - maxDepth: The nesting limit of the file (``Defaults/Options/maximumDepth``), whose top-level object is
    ///     level 1: the value may nest one level less.
    /// - Throws: ``DefaultsError/Code-swift.struct/encodingFailed`` naming the key when the value nests deeper
    ///   than that, so that the file stays readable.
    static func fragment(_ value: JSONValue, key: String, maxDepth: Int) throws(DefaultsError) -> [UInt8] {
        let (bytes, depth) = write(value)
        guard depth < maxDepth else { throw Codec.tooDeep(depth, maxDepth: maxDepth, key: key) }
        return bytes
    }

    // MARK: The JSONValue types

    /// `value` as a ``JSONValue`` when its type is one the store reads and writes itself (`JSONValue`,
    /// `JSONValue?`, `[JSONValue]`, `[String: JSONValue]`); `nil` for any other type. A type check, no cast, for
    /// other types.
    static func jsonValue<Value>(of value: Value) -> JSONValue? {
        let type = ObjectIdentifier(Value.self)
        if type == ObjectIdentifier(JSONValue.self) { return value as? JSONValue }
        if type == ObjectIdentifier(JSONValue?.self) { return (value as? JSONValue?).map { $0 ?? .null } }
        if type == ObjectIdentifier([JSONValue].self) { return (value as? [JSONValue]).map { .array($0) } }
        if type == ObjectIdentifier([String: JSONValue].self) {
            return (value as? [String: JSONValue]).map { .object($0) }
        }
        return nil
    }

    /// Whether `type` is one of the types of ``jsonValue(of:)``.
    static func isJSONValueType<Value>(_ type: Value.Type) -> Bool {
        let type = ObjectIdentifier(type)
        return type == ObjectIdentifier(JSONValue.self) || type == ObjectIdentifier(JSONValue?.self)
            || type == ObjectIdentifier([JSONValue].self) || type == ObjectIdentifier([String: JSONValue].self)
    }

    /// `value` as `type`, one of the types of ``jsonValue(of:)``; `nil` when the value is of another kind (an
    /// object read as `[JSONValue]`). A JSON `null` read as `JSONValue?` is `nil`.
    static func typed<Value>(_ value: JSONValue, as type: Value.Type) -> Value? {
        let type = ObjectIdentifier(type)
        if type == ObjectIdentifier(JSONValue.self) { return value as? Value }
        if type == ObjectIdentifier(JSONValue?.self) {
            let optional: JSONValue? = if case .null = value { nil } else { value }
            return optional as? Value
        }
        switch value {
        case .array(let elements) where type == ObjectIdentifier([JSONValue].self): return elements as? Value
        case .object(let members) where type == ObjectIdentifier([String: JSONValue].self): return members as? Value
        default: return nil
        }
    }
}
