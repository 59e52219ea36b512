import CodableDefaults
import Foundation

/// Property lists, as `defaults(1)` reads and writes them: `import` takes an XML or binary one (what
/// `defaults export` writes), `export` writes an XML one when DEST ends in `.plist` (what `defaults import` reads).
///
/// A value becomes what the library stores for it, so typed keys read it: a date the number of seconds since
/// 2001-01-01 00:00 UTC (as a `Date` is stored), data its base64 text (as `Data` is), an integer, a real, a boolean,
/// a string, an array or a dictionary its JSON counterpart. The other way, each JSON value becomes its property-list
/// counterpart (a number an integer when it is whole and fits in 64 bits, else a real); null, which a property list
/// cannot hold, is refused, naming its key.
enum PropertyList {
    /// Whether `bytes` start as a property list does: `bplist00` (binary), or XML whose first element is `plist`
    /// (after an XML declaration and a document type, when there are).
    static func looksLikeOne(_ bytes: Data) -> Bool {
        if bytes.starts(with: Array("bplist".utf8)) { return true }
        let head = String(decoding: bytes.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return head.hasPrefix("<?xml") && head.contains("<plist") || head.hasPrefix("<!DOCTYPE plist")
            || head.hasPrefix("<plist")
    }

    /// The members of the dictionary the property list `bytes` (read from `path`) holds, as JSON values, sorted
    /// by key.
    ///
    /// - Throws: Status 4 naming `path`: not a property list (with the parser's words), not a dictionary at its
    ///   top, or a real that is not a number (NaN, an infinity).
    static func members(of bytes: Data, path: String) throws(ToolError) -> [(key: String, value: JSONValue)] {
        let dictionary: [String: Value]
        do {
            dictionary = try PropertyListDecoder().decode([String: Value].self, from: bytes)
        } catch {
            throw ToolError(.badFile, "\(path): not a property list holding a dictionary: \(Self.describe(error))")
        }
        var members: [(key: String, value: JSONValue)] = []
        for (key, value) in dictionary {
            guard let json = value.json else {
                throw ToolError(.badFile, "\(path): key \(KeyText.message(key)): a real that is not a number")
            }
            members.append((key, json))
        }
        return members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// The XML property list of `members` (a dictionary), for the file `path`.
    ///
    /// - Throws: Status 1 naming the first key whose value holds null, which a property list cannot.
    static func xml(_ members: [(key: String, value: JSONValue)], path: String) throws(ToolError) -> String {
        var dictionary: [String: Value] = [:]
        for (key, value) in members {
            guard let converted = Value(value) else {
                throw ToolError(
                    .failure,
                    "\(path): key \(KeyText.message(key)): its value holds null, which a property list cannot hold; "
                        + "export to a .json file instead")
            }
            dictionary[key] = converted
        }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        do {
            return String(decoding: try encoder.encode(dictionary), as: UTF8.self)
        } catch {
            throw ToolError(.failure, "\(path): the property list cannot be made: \(error)")
        }
    }

    /// The parser's words for why `error` refused a property list: its own description, without the type names
    /// of the decoding error around it.
    private static func describe(_ error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else {
            if case DecodingError.typeMismatch(_, let context) = error {
                return "a value at \(context.codingPath.map(\.stringValue).joined(separator: "/")) is of no "
                    + "property-list type"
            }
            return "\(error)"
        }
        if let underlying = context.underlyingError as NSError?,
            let said = underlying.userInfo[NSDebugDescriptionErrorKey] as? String
        {
            return said
        }
        return context.debugDescription
    }

    /// One property-list value: the library's.
    private typealias Value = PropertyListValue
}
