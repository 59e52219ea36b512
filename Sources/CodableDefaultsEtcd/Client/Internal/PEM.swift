import Foundation

/// The blocks of a PEM file (RFC 7468): what lies between `-----BEGIN <label>-----` and `-----END <label>-----`,
/// base64 decoded. Used where the platform's TLS takes certificates as DER (Apple's Security framework); libcurl
/// reads the PEM files itself.
package enum PEM {
    /// A block that is not base64 between its lines, or that has no end line.
    package struct Malformed: Error {
        /// The block's label (`CERTIFICATE`, ...).
        package var label: String
        /// The 1-based line of the block's `-----BEGIN` line.
        package var line: Int
        /// What is wrong with it: "is not base64" or "has no -----END line".
        package var reason: String
    }

    /// The DER bytes of every block labelled `label` in `data`, in order; text outside the blocks (comments, as
    /// openssl writes them) is skipped, and so are blocks with other labels.
    ///
    /// - Throws: ``Malformed`` for a block of that label whose content is not base64 or that does not end.
    package static func blocks(labelled label: String, in data: Data) throws(Malformed) -> [Data] {
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        var found: [Data] = []
        var base64: String?
        var startLine = 0
        var number = 0
        // Split on the byte, not on `Character`s: a String takes "\r\n" as one character, not a line break.
        for bytes in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
            number += 1
            let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(
                in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if var content = base64 {
                if line == end {
                    guard let der = Data(base64Encoded: content), !der.isEmpty else {
                        throw Malformed(label: label, line: startLine, reason: "is not base64")
                    }
                    found.append(der)
                    base64 = nil
                } else {
                    content += line
                    base64 = content
                }
            } else if line == begin {
                base64 = ""
                startLine = number
            }
        }
        if base64 != nil { throw Malformed(label: label, line: startLine, reason: "has no -----END line") }
        return found
    }
}
