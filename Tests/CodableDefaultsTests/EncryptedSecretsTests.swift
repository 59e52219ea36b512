import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// A store given an encryption key keeps its secret keys' values sealed at rest (``SecretCipher``): no file beside
/// the store holds their text, an independent implementation opens them from the documented format, and a missing,
/// wrong or tampered key or value is an error that leaves the file as it is.
@Suite struct EncryptedSecretsTests {
    static let token = Defaults.Key<String>("token", default: "none", secret: true)
    static let counter = Defaults.Key<Int>("counter", default: 0, secret: true)
    static let volume = Defaults.Key<Double>("volume", default: 0.5)

    let directory: TemporaryDirectory
    let keyHex = String(repeating: "0123456789abcdef", count: 4)
    let otherKeyHex = String(repeating: "fedcba9876543210", count: 4)

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A key file only its owner can read, holding `hex`.
    func keyFile(_ name: String, _ hex: String) throws -> URL {
        let url = directory.file(name)
        try writeKeyFile(url, hex: hex)
        return url
    }

    /// `defaults` with an error handler that keeps the reports out of the test's output (the tests assert the
    /// errors where they are thrown).
    func quiet(_ defaults: Defaults) -> Defaults {
        defaults.onError = { _ in }
        return defaults
    }

    func options(_ key: URL?) -> Defaults.Options {
        Defaults.Options(encryptionKey: key.map { .file($0) })
    }

    /// The members of the store file at `url`, as `JSONSerialization` reads them.
    func members(_ url: URL) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// A store at `settings.json` opened with a key file, holding the secret `token` = "hunter2", saved; and the
    /// text of its envelope as the file holds it.
    func sealedStore() throws -> (defaults: Defaults, url: URL, key: URL, envelope: String) {
        let key = try keyFile("settings.key", keyHex)
        let url = directory.file("settings.json")
        let defaults = quiet(try Defaults(url: url, saveMode: .manual, options: options(key)))
        try defaults.set("hunter2", for: Self.token)
        try defaults.save()
        let envelope = try #require(try members(url)["token"] as? String)
        return (defaults, url, key, envelope)
    }

    /// Every byte of every file in the store's directory, as text.
    func everyFile() throws -> String {
        var text = ""
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            text += String(decoding: try Data(contentsOf: directory.file(name)), as: UTF8.self)
        }
        return text
    }

    @Test func aSecretRestsSealedAndReadsBackWithTheKey() throws {
        let key = try keyFile("settings.key", keyHex)
        let url = directory.file("settings.json")
        do {
            let defaults = quiet(try Defaults(url: url, saveMode: .immediate, options: options(key)))
            try defaults.set("hunter2-in-clear", for: Self.token)
            try defaults.set(0.8, for: Self.volume)
            try defaults.modify(Self.counter) { $0 += 41 }
            try defaults.modify(Self.counter) { $0 += 1 }
            #expect(defaults[Self.token] == "hunter2-in-clear")
            #expect(defaults[Self.counter] == 42)
        }
        let files = try everyFile()
        #expect(!files.contains("hunter2"))
        let object = try members(url)
        #expect((object["token"] as? String)?.hasPrefix("cdenc:1:") == true)
        #expect((object["counter"] as? String)?.hasPrefix("cdenc:1:") == true)
        #expect(object["volume"] as? Double == 0.8)

        // Another store on a copy of the file reads both with the key.
        let copy = directory.file("copy.json")
        try FileManager.default.copyItem(at: url, to: copy)
        let reader = quiet(try Defaults(url: copy, saveMode: .manual, options: options(key)))
        #expect(try reader.value(for: Self.token) == "hunter2-in-clear")
        #expect(try reader.value(for: Self.counter) == 42)

        // The same envelope spelled with escapes (as a JSON writer may: `\/`, `\u0063`) is the same value.
        let sealed = try #require(object["token"] as? String)
        let escaped = #"{"token":"\u0063"# + sealed.dropFirst().replacingOccurrences(of: "/", with: #"\/"#) + #""}"#
        let escapedFile = directory.file("escaped.json")
        try Data(escaped.utf8).write(to: escapedFile)
        #expect(try quiet(openFresh(escapedFile, options: options(key))).value(for: Self.token) == "hunter2-in-clear")
    }

    @Test func withoutTheKeyOrWithAnotherASecretIsAnErrorAndItsBytesStay() throws {
        let key = try keyFile("settings.key", keyHex)
        let other = try keyFile("other.key", otherKeyHex)
        let url = directory.file("settings.json")
        do {
            let defaults = quiet(try Defaults(url: url, saveMode: .immediate, options: options(key)))
            try defaults.set("hunter2", for: Self.token)
        }
        let sealed = try #require(
            members(url)["token"] as? String)

        // No key: a typed read throws, the subscript gives the default and reports; a set is refused; saving another
        // key keeps the sealed value byte for byte.
        let reported = Locked<[DefaultsError]>([])
        let keyless = try Defaults(
            url: url, saveMode: .immediate, onError: { error in reported.withLock { $0.append(error) } })
        #expect(throws: DefaultsError.self) { try keyless.value(for: Self.token) }
        do {
            _ = try keyless.value(for: Self.token)
        } catch {
            #expect(error.code == .encryptionKeyMissing && error.key == "token")
            #expect(!error.description.contains("hunter2"))
        }
        #expect(keyless[Self.token] == "none")
        #expect(reported.withLock { $0 }.contains { $0.code == .encryptionKeyMissing && $0.key == "token" })
        do {
            try keyless.set("in clear", for: Self.token)
            Issue.record("a secret was set without the key over a sealed value")
        } catch {
            #expect(error.code == .encryptionKeyMissing)
        }
        try keyless.set(0.1, for: Self.volume)
        let afterOtherSave = try #require(
            members(url)["token"] as? String)
        #expect(afterOtherSave == sealed)
        #expect(!(try everyFile()).contains("in clear"))

        // Another key: the error says so, with both ids.
        let copy = directory.file("copy.json")
        try FileManager.default.copyItem(at: url, to: copy)
        let wrong = quiet(try Defaults(url: copy, saveMode: .manual, options: options(other)))
        do {
            _ = try wrong.value(for: Self.token)
            Issue.record("a value sealed with another key was read")
        } catch {
            #expect(error.code == .encryptionKeyMismatch && error.key == "token")
        }
    }

    @Test func aTamperedOrMovedValueIsAnErrorNamingItsKey() throws {
        let key = try keyFile("settings.key", keyHex)
        let url = directory.file("settings.json")
        do {
            let defaults = quiet(try Defaults(url: url, saveMode: .immediate, options: options(key)))
            try defaults.set("hunter2", for: Self.token)
        }
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let sealed = try #require(object["token"] as? String)
        // One base64 character changed near the end; and the envelope moved to another secret key's name.
        var characters = Array(sealed)
        characters[characters.count - 3] = characters[characters.count - 3] == "A" ? "B" : "A"
        let tampered = String(characters)
        let truncated = String(sealed.dropLast(8))
        let cutByOne = String(sealed.dropLast())
        let variants = [
            ("tampered.json", #"{"token":"\#(tampered)"}"#, "token"),
            ("truncated.json", #"{"token":"\#(truncated)"}"#, "token"),
            ("cut-by-one.json", #"{"token":"\#(cutByOne)"}"#, "token"),
            ("moved.json", #"{"password":"\#(sealed)"}"#, "password"),
        ]
        for (name, contents, member) in variants {
            let file = directory.file(name)
            try Data(contents.utf8).write(to: file)
            let before = try Data(contentsOf: file)
            let defaults = quiet(try Defaults(url: file, saveMode: .immediate, options: options(key)))
            do {
                _ = try defaults.value(for: Defaults.Key<String>(member, default: "", secret: true))
                Issue.record("\(name): an envelope that does not open was read")
            } catch {
                #expect(error.code == .decodingFailed && error.key == member, "\(error)")
            }
            #expect(try Data(contentsOf: file) == before, "\(name): a failed read changed the file")
            try defaults.set(0.3, for: Self.volume)
            let after = try members(file)
            let beforeValue = (try JSONSerialization.jsonObject(with: before) as? [String: Any])?[member] as? String
            #expect(after[member] as? String == beforeValue)
        }
    }

    @Test func reencryptingSealsUnderTheNewKeyAndSealsSecretsStoredInClear() throws {
        let old = try keyFile("old.key", keyHex)
        let new = try keyFile("new.key", otherKeyHex)
        let url = directory.file("settings.json")
        do {
            // Written without a key: the secret rests in clear (redacted from texts only).
            let defaults = quiet(try Defaults(url: url, saveMode: .immediate))
            try defaults.set("clear-at-first", for: Self.token)
            try defaults.set(0.7, for: Self.volume)
        }
        #expect(try everyFile().contains("clear-at-first"))
        let defaults = quiet(try Defaults(url: url, saveMode: .immediate, options: options(old)))
        #expect(try defaults.reencryptSecrets(with: .file(old)) == [])  // nothing declared secret yet
        _ = defaults[Self.token]  // the key is declared secret by its use
        #expect(try defaults.reencryptSecrets(with: .file(old)) == ["token"])
        #expect(!(try everyFile()).contains("clear-at-first"))
        try defaults.set(5, for: Self.counter)
        #expect(try defaults.reencryptSecrets(with: .file(new)) == ["counter", "token"])
        #expect(try defaults.value(for: Self.token) == "clear-at-first")
        #expect(try defaults.value(for: Self.counter) == 5)
        let copy = directory.file("copy.json")
        try FileManager.default.copyItem(at: url, to: copy)
        let withNew = quiet(try openFresh(copy, options: options(new)))
        #expect(try withNew.value(for: Self.token) == "clear-at-first")
        #expect(try withNew.value(for: Self.volume) == 0.7)
        let withOld = quiet(try openFresh(copy, options: options(old)))
        #expect(throws: DefaultsError.self) { try withOld.value(for: Self.counter) }
        // A value the store's key does not open stops the rotation before anything is written.
        let bytes = try Data(contentsOf: copy)
        #expect(throws: DefaultsError.self) { try withOld.reencryptSecrets(with: .file(old)) }
        #expect(try Data(contentsOf: copy) == bytes)
    }

    @Test func aMigrationsBackupAndResultKeepTheSecretEncrypted() throws {
        let key = try keyFile("settings.key", keyHex)
        let url = directory.file("settings.json")
        do {
            let defaults = quiet(try Defaults(url: url, saveMode: .immediate, options: options(key)))
            try defaults.set("hunter2", for: Self.token)
            try defaults.set(0.9, for: Self.volume)
        }
        let sealed = try #require(
            members(url)["token"] as? String)
        var migrating = options(key)
        migrating.migrations = [.init(to: 1) { values in values["loudness"] = values.removeValue(forKey: "volume") }]
        let copy = directory.file("copy.json")
        try FileManager.default.copyItem(at: url, to: copy)
        let migrated = quiet(try openFresh(copy, options: migrating))
        #expect(try migrated.value(for: Self.token) == "hunter2")
        #expect(!(try everyFile()).contains("hunter2"))
        let after = try members(copy)
        #expect(after["token"] as? String == sealed && after["loudness"] as? Double == 0.9)
        #expect(FileManager.default.fileExists(atPath: directory.file("copy.json.v0.bak").path))
    }

    @Test func aPlainStringThatStartsLikeAnEnvelopeIsAPlainValue() throws {
        let url = directory.file("settings.json")
        let note = Defaults.Key<String>("note", default: "")
        let defaults = quiet(try Defaults(url: url, saveMode: .immediate))
        for text in [
            "cdenc:1:", "cdenc:1:0123456789abcdef:", "cdenc:x:0123456789abcdef:AAAA", "cdenc: hello",
            "cdenc:1:0123456789ABCDEF:AAAA", "cdenc:1:0123456789abcdef:AA A",
        ] {
            try defaults.set(text, for: note)
            #expect(try openFresh(url).value(for: note) == text)
        }
    }

    /// python's `cryptography` opens a value the store wrote, from the format "Keys and Values" documents.
    @Test(.enabled(if: hasPythonCryptography, "needs python3 with the cryptography package (python3-cryptography)"))
    func anIndependentImplementationOpensAValueTheStoreWrote() throws {
        let key = try keyFile("settings.key", keyHex)
        let url = directory.file("settings.json")
        do {
            let defaults = quiet(try Defaults(url: url, saveMode: .immediate, options: options(key)))
            try defaults.set("s3cret \"quoted\"", for: Self.token)
        }
        let script = """
            import base64, hashlib, json, sys
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            key = bytes.fromhex(sys.argv[1])
            value = json.load(open(sys.argv[2]))["token"]
            magic, version, key_id, sealed = value.split(":")
            assert (magic, version) == ("cdenc", "1") and key_id == hashlib.sha256(key).digest()[:8].hex()
            raw = base64.b64decode(sealed)
            print(AESGCM(key).decrypt(raw[:12], raw[12:], b"token").decode())
            """
        let (status, output) = try runCommandBlocking(["python3", "-c", script, keyHex, url.path])
        try #require(status == .exited(0), "python3: \(output)")
        #expect(output == [#""s3cret \"quoted\"""#])
    }

    // MARK: Found by review: each failed before its fix.

    /// Reads racing rotations never fail: a read takes a value and the key that opens it in one critical section.
    @Test func readsRacingRotationsNeverFail() throws {
        let first = try keyFile("first.key", keyHex)
        let second = try keyFile("second.key", otherKeyHex)
        let defaults = quiet(
            try Defaults(url: directory.file("settings.json"), saveMode: .manual, options: options(first)))
        try defaults.set("hunter2", for: Self.token)
        try defaults.save()
        let done = Locked(false)
        let failures = Locked<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread {
            while !done.withLock({ $0 }) {
                let key = Defaults.Key<String>("token", default: "none", secret: true)  // a fresh key: a cache miss
                do {
                    _ = try defaults.value(for: key)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            finished.signal()
        }
        reader.start()
        for round in 0..<200 { try defaults.reencryptSecrets(with: .file(round.isMultiple(of: 2) ? second : first)) }
        done.withLock { $0 = true }
        finished.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(try defaults.value(for: Self.token) == "hunter2")
    }

    /// `modify(forKeys:)` over an unsaved string-key set or removal of a sealed name seals the new value.
    @Test func modifyOverAnUnsavedChangeOfASealedNameSeals() throws {
        let key = try keyFile("settings.key", keyHex)
        let url = directory.file("settings.json")
        do {
            let defaults = quiet(try Defaults(url: url, saveMode: .manual, options: options(key)))
            try defaults.set("hunter2", for: Self.token)
            try defaults.save()
        }
        let defaults = quiet(try openFresh(url, options: options(key)))
        defaults.set("pending-plain", forKey: "token")
        try defaults.modify(forKeys: ["token"]) { values in values[0] = .string("modified-in-clear") }
        defaults.removeValue(forKey: "token")
        try defaults.modify(forKeys: ["token"]) { values in values[0] = .string("after-removal-in-clear") }
        let files = try everyFile()
        #expect(!files.contains("in-clear") && !files.contains("pending-plain"))
        #expect(try openFresh(url, options: options(key)).value(for: Self.token) == "after-removal-in-clear")
    }

    /// A second opening of a file in the process with a key gives the store that key when it has none; a store with
    /// a key keeps it (its first opening's, or its last rotation's), as it keeps its other options.
    @Test func aLaterOpeningWithAKeyGivesItToTheStore() throws {
        let key = try keyFile("settings.key", keyHex)
        let other = try keyFile("other.key", otherKeyHex)
        let url = directory.file("settings.json")
        let early = quiet(try Defaults(url: url, saveMode: .manual))  // a library of the app opens it first
        let defaults = quiet(try Defaults(url: url, saveMode: .manual, options: options(key)))
        try defaults.set("hunter2", for: Self.token)
        try defaults.save()
        #expect(!(try everyFile()).contains("hunter2"))
        #expect(try early.value(for: Self.token) == "hunter2")
        try defaults.reencryptSecrets(with: .file(other))
        // Opened again as the program opens it, with its configured (now old) key, and with that key file gone.
        let again = quiet(try Defaults(url: url, saveMode: .manual, options: options(key)))
        #expect(try again.value(for: Self.token) == "hunter2")
        try FileManager.default.removeItem(at: key)
        #expect(
            try quiet(Defaults(url: url, saveMode: .manual, options: options(key))).value(for: Self.token) == "hunter2")
    }

    /// A rotation writes a secret's unsaved removal, so the file keeps no value sealed with the old key.
    @Test func aRotationWritesAnUnsavedRemovalOfASecret() throws {
        let old = try keyFile("old.key", keyHex)
        let new = try keyFile("new.key", otherKeyHex)
        let url = directory.file("settings.json")
        let defaults = quiet(try Defaults(url: url, saveMode: .manual, options: options(old)))
        try defaults.set("hunter2", for: Self.token)
        try defaults.set(0.5, for: Self.volume)
        try defaults.save()
        defaults.removeValue(forKey: "token")
        #expect(try defaults.reencryptSecrets(with: .file(new)) == ["token"])
        let object = try members(url)
        #expect(object["token"] == nil && object["volume"] as? Double == 0.5)
    }

    /// An envelope given back that is another name's does not open under this one: refused, nothing written.
    @Test func anEnvelopeMovedToAnotherNameByModifyIsRefused() throws {
        let (defaults, url, _, envelope) = try sealedStore()
        let before = try Data(contentsOf: url)
        #expect(throws: DefaultsError.self) {
            try defaults.modify(forKeys: ["other"]) { values in values[0] = .string(envelope) }
        }
        #expect(try Data(contentsOf: url) == before)
    }

    /// An envelope's text given back by `modify` (a backup restored) is kept, not sealed a second time.
    @Test func anEnvelopeGivenBackByModifyIsKept() throws {
        let (defaults, url, key, envelope) = try sealedStore()
        try defaults.modify(forKeys: ["token"]) { values in values[0] = nil }
        try defaults.modify(forKeys: ["token"]) { values in values[0] = .string(envelope) }
        #expect(try openFresh(url, options: options(key)).value(for: Self.token) == "hunter2")
    }

    /// A rotation cut short (some values sealed with the new key, some with the old) completes with the new key.
    @Test func aRotationCompletesAStoreSealedWithBothKeys() throws {
        let old = try keyFile("old.key", keyHex)
        let new = try keyFile("new.key", otherKeyHex)
        let oldFile = directory.file("old.json")
        let newFile = directory.file("new.json")
        let counter = Defaults.Key<Int>("counter", default: 0, secret: true)
        do {
            let byOld = quiet(try Defaults(url: oldFile, saveMode: .immediate, options: options(old)))
            try byOld.set("hunter2", for: Self.token)
            let byNew = quiet(try Defaults(url: newFile, saveMode: .immediate, options: options(new)))
            try byNew.set(7, for: counter)
        }
        // One file holding the token sealed with the old key and the counter with the new one.
        var mixed = try members(oldFile)
        mixed["counter"] =
            try members(newFile)["counter"]
        let url = directory.file("mixed.json")
        try JSONSerialization.data(withJSONObject: mixed).write(to: url)
        let store = quiet(try openFresh(url, options: options(old)))
        _ = store[counter]
        #expect(try store.reencryptSecrets(with: .file(new)).sorted() == ["counter", "token"])
        let reader = quiet(try openFresh(url, options: options(new)))
        #expect(try reader.value(for: Self.token) == "hunter2" && reader.value(for: counter) == 7)
    }
}
