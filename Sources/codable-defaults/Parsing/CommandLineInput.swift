/// The arguments of the process as it received them: the bytes of `argv`, checked to be UTF-8.
///
/// `CommandLine.arguments` repairs bytes that are not UTF-8 into U+FFFD, so a FILE named with such bytes
/// would name another file, and a KEY or VALUE would be stored changed. The library takes paths and keys as
/// `String`, so the tool refuses such an argument (a usage error naming it) rather than use it repaired.
struct CommandLineInput: Sendable {
    /// The arguments after the program's name; one that is not UTF-8 is repaired here, for messages only.
    var arguments: [String]
    /// For each argument (by its index in ``arguments``) that is not valid UTF-8: the argument with its
    /// invalid bytes written as `\xNN`, for the message that refuses it.
    var notUTF8: [Int: String]

    /// The arguments of this process.
    static func current() -> CommandLineInput {
        var input = CommandLineInput(arguments: [], notUTF8: [:])
        let count = Int(CommandLine.argc)
        guard count > 1 else { return input }
        for index in 1..<count {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            if let text = String(validatingCString: pointer) {
                input.arguments.append(text)
                continue
            }
            let length = strlenOfCString(pointer)
            let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
            input.notUTF8[input.arguments.count] = shown(Array(bytes))
            input.arguments.append(String(decoding: bytes, as: UTF8.self))
        }
        return input
    }

    /// `bytes` as text, with each byte that is not part of valid UTF-8 written as `\xNN`.
    static func shown(_ bytes: [UInt8]) -> String {
        var text = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                text.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<offset + length] {
                    let hex = String(byte, radix: 16, uppercase: true)
                    text += "\\x" + (hex.count == 1 ? "0" : "") + hex
                }
                offset += length
            case .emptyInput:
                return text
            }
        }
    }

    /// The length of a NUL-terminated C string.
    private static func strlenOfCString(_ pointer: UnsafePointer<CChar>) -> Int {
        var length = 0
        while pointer[length] != 0 { length += 1 }
        return length
    }
}
