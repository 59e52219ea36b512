import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The encryption of secret values at rest: AES-256-GCM from the platform, and the envelope format that "Keys and
/// Values" will document, checked against an independent implementation (python's `cryptography`).
@Suite struct SecretEnvelopeTests {
    let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
    let otherKey = (0..<32).map { UInt8(255 - $0) }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func aValueOpensWithItsKeyAndNameOnly() throws {
        let id = try SecretEnvelope.keyID(of: key)
        let otherID = try SecretEnvelope.keyID(of: otherKey)
        let fragment = Array(#"{"password":"hunter2"}"#.utf8)
        let text = try SecretEnvelope.seal(fragment, name: "db", key: key, keyID: id)
        #expect(text.hasPrefix("cdenc:1:" + id + ":"))
        #expect(!text.contains("hunter2"))
        #expect(try SecretEnvelope.open(text, name: "db", key: key, keyID: id) == fragment)

        // Moved to another name, opened with another key, changed, cut short: each its error, never the value.
        #expect(throws: SecretEnvelope.Failure.notAuthentic) {
            try SecretEnvelope.open(text, name: "other", key: key, keyID: id)
        }
        #expect(throws: SecretEnvelope.Failure.otherKey(id)) {
            try SecretEnvelope.open(text, name: "db", key: otherKey, keyID: otherID)
        }
        var sealed = Array(try #require(Data(base64Encoded: String(text.dropFirst(25)))))
        for index in [0, 12, sealed.count - 1] {
            var changed = sealed
            changed[index] ^= 0x01
            let tampered = "cdenc:1:" + id + ":" + Data(changed).base64EncodedString()
            #expect(throws: SecretEnvelope.Failure.notAuthentic) {
                try SecretEnvelope.open(tampered, name: "db", key: key, keyID: id)
            }
        }
        sealed.removeLast()
        let truncated = "cdenc:1:" + id + ":" + Data(sealed).base64EncodedString()
        #expect(throws: SecretEnvelope.Failure.notAuthentic) {
            try SecretEnvelope.open(truncated, name: "db", key: key, keyID: id)
        }
        for malformed in ["cdenc:2:\(id):AAAA", "cdenc:1:XYZ:AAAA", "cdenc:1:\(id):not base64!", "plain"] {
            #expect(throws: (any Error).self) { try SecretEnvelope.open(malformed, name: "db", key: key, keyID: id) }
        }
    }

    @Test func aHundredThousandSealsRepeatNoNonce() throws {
        var nonces = Set<[UInt8]>()
        for _ in 0..<100_000 {
            let sealed = try AESGCM.seal([1], key: key, associatedData: [])
            nonces.insert(Array(sealed.prefix(AESGCM.nonceSize)))
        }
        #expect(nonces.count == 100_000)
    }

    /// python's `cryptography` opens what the library sealed, from the format alone, and the library opens what it
    /// sealed.
    @Test(.enabled(if: hasPythonCryptography, "needs python3 with the cryptography package (python3-cryptography)"))
    func anIndependentImplementationOpensWhatTheLibrarySealsAndTheOtherWayRound() throws {
        let id = try SecretEnvelope.keyID(of: key)
        let names = ["token", "", "ключ/with:colons"]
        let values = [Array(#""s3cret""#.utf8), Array("42".utf8), Array(#"{"a":[1,2,{"b":null}]}"#.utf8)]
        var lines: [String] = []
        for (name, value) in zip(names, values) {
            let text = try SecretEnvelope.seal(value, name: name, key: key, keyID: id)
            lines.append(Data(name.utf8).base64EncodedString() + " " + text)
        }
        let dir = try TemporaryDirectory()
        let input = dir.file("sealed.txt")
        try Data(lines.joined(separator: "\n").utf8).write(to: input)
        let script = """
            import base64, hashlib, sys
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            key = bytes.fromhex(sys.argv[1])
            key_id = hashlib.sha256(key).digest()[:8].hex()
            for line in open(sys.argv[2]).read().split("\\n"):
                name64, text = line.split(" ")
                name = base64.b64decode(name64)
                version, found_id, sealed64 = text[len("cdenc:"):].split(":", 2)
                assert version == "1" and found_id == key_id, (version, found_id, key_id)
                sealed = base64.b64decode(sealed64, validate=True)
                plain = AESGCM(key).decrypt(sealed[:12], sealed[12:], name)
                print(plain.decode())
            # The other way: sealed here, opened by the library.
            nonce = bytes(range(12))
            print("cdenc:1:" + key_id + ":" + base64.b64encode(nonce + AESGCM(key).encrypt(nonce, b'"from python"', b"token")).decode())
            """
        let (status, output) = try runCommandBlocking(["python3", "-c", script, hex(key), input.path])
        try #require(status == .exited(0), "python3: \(output)")
        #expect(Array(output.prefix(3)) == values.map { String(decoding: $0, as: UTF8.self) })
        let fromPython = try #require(output.last)
        #expect(
            try SecretEnvelope.open(fromPython, name: "token", key: key, keyID: id) == Array(#""from python""#.utf8))
    }
}

/// Whether python3 and its `cryptography` package are installed.
let hasPythonCryptography: Bool = {
    guard findExecutable("python3") != nil else { return false }
    guard let (status, _) = try? runCommandBlocking(["python3", "-c", "import cryptography"]) else { return false }
    return status == .exited(0)
}()

/// Where an encryption key comes from: a file only its owner reads, an environment variable, a command's output.
@Suite struct SecretKeyTests {
    let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }

    private var hexText: String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test func aFileOnlyItsOwnerReadsHoldsTheKeyAsBytesHexOrBase64() throws {
        let dir = try TemporaryDirectory()
        for (name, content) in [
            ("raw", Data(bytes)), ("hex", Data((hexText + "\n").utf8)),
            ("base64", Data((" " + Data(bytes).base64EncodedString() + "\n").utf8)),
        ] {
            let file = dir.file(name)
            try content.write(to: file)
            #expect(chmod(file.path, 0o600) == 0)
            let key = try SecretKey(contentsOf: file.path)
            #expect(key.bytes == bytes, "\(name)")
            #expect(key.id == (try SecretEnvelope.keyID(of: bytes)))
        }
    }

    @Test func aKeyFileOthersCanReadIsRefusedSayingHowToFixIt() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("key")
        try Data(hexText.utf8).write(to: file)
        #expect(chmod(file.path, 0o640) == 0)
        let error = #expect(throws: DefaultsError.self) { try SecretKey(contentsOf: file.path) }
        #expect(error?.code == .readFailed && error?.path == file.path)
        #expect(error?.message.contains("chmod 600") == true, "\(String(describing: error))")
        #expect(error?.message.contains(hexText) == false)
    }

    @Test func textThatIsNoKeyIsRefusedWithoutQuotingIt() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("key")
        let secret = "correct horse battery staple, not a key"
        try Data(secret.utf8).write(to: file)
        #expect(chmod(file.path, 0o600) == 0)
        let error = #expect(throws: DefaultsError.self) { try SecretKey(contentsOf: file.path) }
        #expect(error?.code == .invalidArgument)
        #expect(!"\(String(describing: error))".contains("horse"))
        #expect(throws: DefaultsError.self) { try SecretKey(bytes: Array(bytes.dropLast())) }
    }

    @Test func anEnvironmentVariableOrACommandGivesTheKey() throws {
        let name = "CODABLE_DEFAULTS_TEST_KEY_\(UInt32.random(in: 0...UInt32.max))"
        setenv(name, Data(bytes).base64EncodedString(), 1)
        defer { unsetenv(name) }
        #expect(try SecretKey(environmentVariable: name).bytes == bytes)
        let missing = #expect(throws: DefaultsError.self) { try SecretKey(environmentVariable: name + "_UNSET") }
        #expect(missing?.message.contains(name + "_UNSET") == true)

        #expect(try SecretKey(command: ["printf", "%s\n", hexText]).bytes == bytes)
        let failed = #expect(throws: DefaultsError.self) {
            try SecretKey(command: ["sh", "-c", "echo 'vault: sealed' >&2; exit 3"])
        }
        #expect(failed?.message.contains("status 3") == true && failed?.message.contains("vault: sealed") == true)
        #expect(throws: DefaultsError.self) { try SecretKey(command: ["printf", "short"]) }
    }
}
