import Foundation

/// A secret value as it rests in a store file, a local copy or etcd: a JSON string that holds its encryption.
///
/// The string is `cdenc:1:<key id>:<sealed>`, all ASCII:
/// - `cdenc:1:`, the format and its version;
/// - `<key id>`, 16 lowercase hexadecimal digits: the first 8 bytes of the SHA-256 digest of the 32-byte key, so
///   that a value sealed with another key is reported as such (the id says nothing usable about the key);
/// - `<sealed>`, standard base64 with padding of `nonce ‖ ciphertext ‖ tag`: AES-256-GCM (``AESGCM``) with a fresh
///   random 12-byte nonce, the ciphertext of the value's compact JSON (as the store keeps an unencrypted value),
///   and the 16-byte tag. The associated data is the member's name in UTF-8, so a value moved to another name does
///   not open.
///
/// Any implementation of AES-256-GCM opens it from this description (the tests do with python's `cryptography`).
enum SecretEnvelope {
    /// The text every envelope starts with.
    static let prefix = "cdenc:1:"

    /// Why an envelope did not open.
    enum Failure: Error, Equatable {
        /// The text is not an envelope of this format (a version this library does not read, bad base64, too short).
        case malformed(String)
        /// It was sealed with the key whose id is given, not the one at hand.
        case otherKey(String)
        /// It does not open with the key at hand and its name: changed, cut, or moved from another name.
        case notAuthentic
        /// The platform's cryptography failed (``AESGCM/Failure``).
        case cryptography(AESGCM.Failure)
    }

    /// The id of `key` as envelopes show it: 16 hex digits of its SHA-256 digest.
    static func keyID(of key: [UInt8]) throws(AESGCM.Failure) -> String {
        try AESGCM.sha256(key).prefix(8).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// Whether `text` is an envelope of some version (`cdenc:`), which only a key opens.
    static func isEnvelope(_ text: String) -> Bool { text.hasPrefix("cdenc:") }

    /// Seals `fragment` (a value's compact JSON) for the member `name` under `key`, whose id is `keyID`.
    ///
    /// - Returns: The envelope's text.
    static func seal(_ fragment: [UInt8], name: String, key: [UInt8], keyID: String) throws(AESGCM.Failure)
        -> String
    {
        let sealed = try AESGCM.seal(fragment, key: key, associatedData: Array(name.utf8))
        return prefix + keyID + ":" + Data(sealed).base64EncodedString()
    }

    /// Opens the envelope `text` of the member `name` with `key`, whose id is `keyID`.
    ///
    /// - Returns: The value's JSON, as sealed.
    /// - Throws: A ``Failure``: malformed, sealed with another key, not authentic, or the platform's failure.
    static func open(_ text: String, name: String, key: [UInt8], keyID: String) throws(Failure) -> [UInt8] {
        guard text.hasPrefix(prefix) else {
            throw Failure.malformed(
                isEnvelope(text) ? "a version of the format this library does not read" : "not an encrypted value")
        }
        let rest = text.dropFirst(prefix.count)
        guard let colon = rest.firstIndex(of: ":") else { throw Failure.malformed("no key id") }
        let id = String(rest[..<colon])
        guard id.utf8.count == 16, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw Failure.malformed("the key id is not 16 hexadecimal digits")
        }
        guard id == keyID else { throw Failure.otherKey(id) }
        // Canonical base64 only, so that a value has one text: decoded, it must encode back to what was read.
        let text = String(rest[rest.index(after: colon)...])
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
            throw Failure.malformed("the sealed value is not base64")
        }
        let sealed = Array(data)
        do {
            return try AESGCM.open(sealed, key: key, associatedData: Array(name.utf8))
        } catch .notAuthentic {
            throw Failure.notAuthentic
        } catch {
            throw Failure.cryptography(error)
        }
    }
}
