import Foundation

/// Number literals that `Double` would round, overflow, underflow or respell, and a store file that holds
/// them: shared by the in-process `NumberExactnessTests` and the tool's `NumberExactnessToolTests`.
package enum NumberLiterals {
    /// Literals that `Double` would round, overflow, underflow or respell.
    package static let literals = [
        "123456789012345678901234567890", "3.14159265358979323846264338327950288", "1e-400", "1e400", "-0", "1.50",
    ]

    /// A store file with one member per literal (`n0`, `n1`, ...) and `other`, in the file's layout.
    package static func fileText(other: String = "1") -> String {
        let members = literals.enumerated().map { "  \"n\($0.offset)\": \($0.element)" } + ["  \"other\": \(other)"]
        return "{\n" + members.joined(separator: ",\n") + "\n}\n"
    }
}

/// Two member names that differ only in Unicode normalization, in one file: shared by the in-process
/// `KeyBytesTests` and the tool's `KeyBytesToolTests`.
package enum KeySpellings {
    /// `{"é": 1, "é": 2}`, the first name C3 A9, the second 65 CC 81.
    package static let bothSpellings: [UInt8] =
        Array("{\"".utf8) + [0xC3, 0xA9] + Array("\": 1, \"".utf8) + [0x65, 0xCC, 0x81] + Array("\": 2}\n".utf8)
}

/// `é` as one code point and as `e` and a combining accent (different bytes, equal Swift strings), and a store
/// file with such a pair inside the value of `v`: shared by the in-process
/// `JSONValueNameCollisionTests` and the tool's `JSONValueNameCollisionToolTests`.
package enum CollidingNames {
    /// `é` as one code point.
    package static let composed = "\u{E9}"
    /// `é` as `e` and a combining accent.
    package static let decomposed = "e\u{301}"
    /// A store file with such a pair inside the value of `v`.
    package static let file = "{\n  \"v\": {\"\(composed)\": 1, \"\(decomposed)\": 2},\n  \"w\": 3\n}\n"
}

/// `root/real/sub/`, `root/link -> real/sub`, and two files: `root/real/s.json` (the one `link/../s.json`
/// names) and `root/s.json` (the one a textual `..` would name); for the library's `PathResolutionTests`
/// and the tool's `PathResolutionToolTests`.
package enum LinkedTree {
    /// Makes the tree in `root`.
    package static func make(in root: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(
            at: root.appendingPathComponent("real/sub"), withIntermediateDirectories: true)
        try manager.createSymbolicLink(
            atPath: root.appendingPathComponent("link").path, withDestinationPath: "real/sub")
        try write("{\"where\": \"real\"}", to: root.appendingPathComponent("real/s.json"))
        try write("{\"where\": \"top\"}", to: root.appendingPathComponent("s.json"))
    }
}
