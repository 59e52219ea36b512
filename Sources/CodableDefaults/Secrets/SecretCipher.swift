/// How a store seals and opens its secret values (``SecretEnvelope``), as JSON fragments: a secret's fragment at
/// rest is the JSON string of its envelope. The key is the store's (``Defaults/Options/encryptionKey``), or
/// `nil` when it was given none: then an envelope does not open, and a value is never sealed.
struct SecretCipher: Sendable {
    /// The store's key.
    let key: SecretKey?

    /// `"cdenc:` as bytes: how a fragment that is an envelope starts.
    private static let marker: [UInt8] = Array("\"cdenc:".utf8)

    /// Whether `fragment` is an envelope's JSON string, of any version (``envelopeText(_:)``).
    static func isEnvelope(_ fragment: [UInt8]) -> Bool { envelopeText(fragment) != nil }

    /// The text of the envelope `fragment` is the JSON string of, or `nil` when it is no envelope: a string that is
    /// `cdenc:<digits>:<16 lowercase hex digits>:` and one or more base64 characters, all of it. Such a string is
    /// taken as an encrypted value whatever its length, so that one cut short or changed is an error, never a plain
    /// value. The string may be spelled with escapes (`\/`, as some JSON writers put a slash): it is read as JSON.
    static func envelopeText(_ fragment: [UInt8]) -> String? {
        // `"c` or `"\` (an escape) first: any other value is no envelope, whatever its size.
        guard fragment.count > marker.count + 20, fragment[0] == 0x22, fragment[1] == 0x63 || fragment[1] == 0x5C,
            fragment.last == 0x22
        else { return nil }
        guard fragment.contains(0x5C) else {
            return fragment.starts(with: marker) && isEnvelopeText(fragment.dropFirst().dropLast())
                ? String(decoding: fragment.dropFirst().dropLast(), as: UTF8.self) : nil
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: String(decoding: fragment, as: UTF8.self))
        } catch {
            return nil  // Not a JSON string: no envelope (the store reports such a value where it reads it).
        }
        guard case .string(let text) = value, isEnvelopeText(Array(text.utf8)[...]) else { return nil }
        return text
    }

    /// `cdenc:` as bytes: how an envelope's text starts.
    private static let textMarker: [UInt8] = Array("cdenc:".utf8)

    /// Whether `text` (a string's UTF-8, without quotes or escapes) has an envelope's form.
    private static func isEnvelopeText(_ text: ArraySlice<UInt8>) -> Bool {
        guard text.count >= 26, text.starts(with: textMarker) else { return false }
        let end = text.endIndex
        var index = text.startIndex + textMarker.count
        let versionStart = index
        while index < end, (0x30...0x39).contains(text[index]) { index += 1 }
        guard index > versionStart, index < end, text[index] == 0x3A else { return false }
        index += 1
        let idEnd = index + 16
        guard idEnd < end, text[idEnd] == 0x3A else { return false }
        for byte in text[index..<idEnd] where !(0x30...0x39).contains(byte) && !(0x61...0x66).contains(byte) {
            return false
        }
        let sealed = text[(idEnd + 1)..<end]
        guard !sealed.isEmpty else { return false }
        for byte in sealed {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2B, 0x2F, 0x3D: continue
            default: return false
            }
        }
        return true
    }

    /// The envelope of `fragment` (a value's compact JSON) for the member `name`, as a JSON string's bytes.
    ///
    /// - Throws: ``DefaultsError``: `encryptionKeyMissing` without a key; `encodingFailed` when the platform's
    ///   cryptography fails (naming the key, quoting none of the value).
    func seal(_ fragment: [UInt8], name: String, path: String?) throws(DefaultsError) -> [UInt8] {
        guard let key else {
            throw DefaultsError(
                .encryptionKeyMissing,
                "the value of a secret key is stored encrypted, and the store was opened without an encryption key "
                    + "(Options.encryptionKey; the tool's --encryption-key); nothing was stored", path: path, key: name)
        }
        do {
            let text = try SecretEnvelope.seal(fragment, name: name, key: key.bytes, keyID: key.id)
            // The envelope is ASCII without quotes or backslashes: its JSON string is the text in quotes.
            return [0x22] + Array(text.utf8) + [0x22]
        } catch {
            throw DefaultsError(.encodingFailed, "the value cannot be encrypted: \(error)", path: path, key: name)
        }
    }

    /// The value's compact JSON that the envelope `fragment` (a JSON string's bytes) of the member `name` holds.
    ///
    /// - Throws: ``DefaultsError`` naming the key: `encryptionKeyMissing` without a key; `encryptionKeyMismatch`
    ///   for a value sealed with another key (both ids said); `decodingFailed` for one that was changed, cut or
    ///   moved from another key, or is not an envelope of a version this library reads.
    func open(_ fragment: [UInt8], name: String, path: String?) throws(DefaultsError) -> [UInt8] {
        let text = Self.envelopeText(fragment) ?? String(decoding: fragment.dropFirst().dropLast(), as: UTF8.self)
        guard let key else {
            throw DefaultsError(
                .encryptionKeyMissing,
                "the value is encrypted (key id \(Self.keyID(of: text))) and the store was opened without an "
                    + "encryption key (Options.encryptionKey; the tool's --encryption-key)", path: path, key: name)
        }
        guard fragment.last == 0x22 else {
            throw DefaultsError(.decodingFailed, "the encrypted value is not a JSON string", path: path, key: name)
        }
        do {
            return try SecretEnvelope.open(text, name: name, key: key.bytes, keyID: key.id)
        } catch {
            let reason: String
            switch error {
            case .otherKey(let id):
                throw DefaultsError(
                    .encryptionKeyMismatch,
                    "the value was encrypted with the key whose id is \(id); the store's key has the id \(key.id)",
                    path: path, key: name)
            case .notAuthentic:
                reason = "it does not open with the store's key: it was changed, cut, or moved from another key"
            case .malformed(let what): reason = "it is not a readable encrypted value: \(what)"
            case .cryptography(let failure): reason = "the platform's cryptography failed: \(failure)"
            }
            throw DefaultsError(.decodingFailed, "the encrypted value cannot be read: \(reason)", path: path, key: name)
        }
    }

    /// The key id the envelope `fragment` (a JSON string's bytes, ``isEnvelope(_:)``) names.
    static func keyID(ofEnvelope fragment: [UInt8]) -> String {
        keyID(of: envelopeText(fragment) ?? "")
    }

    /// The key id an envelope's text names, or `unknown`.
    private static func keyID(of text: String) -> String {
        let parts = text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        return parts.count > 2 ? String(parts[2].prefix(16)) : "unknown"
    }
}
