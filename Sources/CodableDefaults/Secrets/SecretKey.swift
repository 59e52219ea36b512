import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A 32-byte key that secret values are encrypted with at rest (``SecretEnvelope``), from where keys are kept: a
/// file only its owner can read, an environment variable, or the output of a command (as SOPS's key commands).
///
/// Its text, wherever it comes from, is the 32 bytes themselves (a file only), 64 hexadecimal digits, or their
/// base64 (with padding); white space around it is ignored. No error quotes any part of it. A value type, `Sendable`.
struct SecretKey: Sendable, Equatable {
    /// The key's bytes.
    let bytes: [UInt8]
    /// Its id as envelopes show it (``SecretEnvelope/keyID(of:)``).
    let id: String

    /// The key of `bytes`.
    ///
    /// - Throws: `invalidArgument` unless there are 32 of them; `readFailed` when the platform has no SHA-256.
    init(bytes: [UInt8]) throws(DefaultsError) {
        guard bytes.count == AESGCM.keySize else {
            throw DefaultsError(
                .invalidArgument, "an encryption key is 32 bytes, and this one is \(bytes.count)", key: nil)
        }
        self.bytes = bytes
        do {
            id = try SecretEnvelope.keyID(of: bytes)
        } catch {
            throw DefaultsError(.readFailed, "the key's id cannot be computed: \(error)", key: nil)
        }
    }

    /// The key a key's text holds (see the type), read from `source` (named in errors).
    ///
    /// - Throws: `invalidArgument` naming `source` when the text is no key; it quotes none of it.
    init(text: [UInt8], source: String, rawBytesAllowed: Bool) throws(DefaultsError) {
        if rawBytesAllowed && text.count == AESGCM.keySize {
            try self.init(bytes: text)
            return
        }
        let trimmed = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.utf8.count == 64, let bytes = Self.hex(trimmed) {
            try self.init(bytes: bytes)
        } else if let data = Data(base64Encoded: trimmed), data.count == AESGCM.keySize {
            try self.init(bytes: Array(data))
        } else {
            throw DefaultsError(
                .invalidArgument,
                "\(source) holds no encryption key: a key is 32 bytes\(rawBytesAllowed ? " (a file of them)" : ""), "
                    + "64 hexadecimal digits or their base64 (e.g. `openssl rand -hex 32`)",
                key: nil)
        }
    }

    /// The key in the file at `path`, which only its owner may read or write.
    ///
    /// - Throws: `readFailed` naming the file when it cannot be read, is not a regular file, or others than its
    ///   owner can read or write it (the error says how to fix it); `invalidArgument` when it holds no key.
    init(contentsOf path: String) throws(DefaultsError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw DefaultsError(
                .readFailed, "the encryption key file cannot be opened: \(String(cString: strerror(errno)))",
                path: path, errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw DefaultsError(.readFailed, "the encryption key file is not a regular file", path: path)
        }
        guard info.st_mode & 0o077 == 0 else {
            throw DefaultsError(
                .readFailed,
                "the encryption key file can be read or written by others than its owner (mode "
                    + String(info.st_mode & 0o777, radix: 8) + "); make it the owner's only: chmod 600 " + path,
                path: path)
        }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while text.count <= 4096 {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw DefaultsError(
                    .readFailed, "the encryption key file cannot be read: \(String(cString: strerror(errno)))",
                    path: path, errno: errno)
            }
            if count == 0 { break }
            text += chunk[..<count]
        }
        try self.init(text: text, source: "the file \(path)", rawBytesAllowed: true)
    }

    /// The key in the environment variable `name`.
    ///
    /// - Throws: `invalidArgument` naming the variable when it is not set or holds no key.
    init(environmentVariable name: String) throws(DefaultsError) {
        guard let value = getenv(name) else {
            throw DefaultsError(.invalidArgument, "the environment variable \(name) is not set", key: nil)
        }
        try self.init(
            text: Array(String(cString: value).utf8), source: "the environment variable \(name)",
            rawBytesAllowed: false)
    }

    #if os(macOS) || os(Linux)
        /// The key a command prints (its standard output), as SOPS's key commands: `arguments` is the program (found
        /// in `PATH`) and its arguments, run without a shell.
        ///
        /// - Throws: `invalidArgument` naming the program when it cannot run, fails (with the first line of its
        ///   standard error), or prints no key.
        init(command arguments: [String]) throws(DefaultsError) {
            guard let program = arguments.first else {
                throw DefaultsError(.invalidArgument, "the key command is empty", key: nil)
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                throw DefaultsError(.invalidArgument, "the key command \(program) cannot run: \(error)", key: nil)
            }
            // Standard error is read on its own thread, so that a command writing much of it cannot block on a full
            // pipe while its standard output is read here.
            let said = Locked(Data())
            let drained = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let data = errors.fileHandleForReading.readDataToEndOfFile()
                said.withLock { $0 = data }
                drained.signal()
            }
            let text = output.fileHandleForReading.readDataToEndOfFile()
            drained.wait()
            process.waitUntilExit()
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                let first = String(decoding: said.withLock { $0 }, as: UTF8.self).split(separator: "\n").first ?? ""
                throw DefaultsError(
                    .invalidArgument,
                    "the key command \(program) failed (status \(process.terminationStatus))"
                        + (first.isEmpty ? "" : ": \(first.prefix(200))"), key: nil)
            }
            try self.init(text: Array(text), source: "the output of the key command \(program)", rawBytesAllowed: false)
        }
    #endif

    /// The bytes of `text`, two hexadecimal digits (either case) a byte; `nil` when it is not that.
    private static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Byte.hexValue(digits[index]), let low = Byte.hexValue(digits[index + 1])
            else { return nil }
            bytes.append(UInt8(high << 4 | low))
        }
        return bytes
    }
}
