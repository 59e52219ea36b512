#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// A JSON Schema of a store file, read and checked by the library itself (no validator to install): the one
    /// ``Defaults/schema(for:title:)`` generates, or one written by hand in the same subset of JSON Schema
    /// (draft 2020-12).
    ///
    /// The keywords it checks (``checkedKeywords``): `type` (one name or a list; `integer` is a number with no
    /// fraction, `1.0` included), `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
    /// `minLength`, `maxLength` (in Unicode scalars), `minItems`, `maxItems`, `uniqueItems`, `items` (one schema
    /// for every element), `properties`, `required`, `additionalProperties` (a schema, `true` or `false`),
    /// `minProperties`, `maxProperties`, and the schemas `true` and `false`. Annotations are read past
    /// (``ignoredKeywords``, and every keyword that starts with `x-`). Any other keyword (`pattern`, `$ref`,
    /// `oneOf`, …) is refused when the schema is read, naming it and where it is: a schema this type cannot check
    /// in full is never taken as checked.
    ///
    /// Numbers are compared exactly, as decimals (`0.1` is not more than `0.1000`), whatever their size. Strings (in
    /// `enum`, `const` and `uniqueItems`) and member names (`properties`, `required`) are compared by their Unicode
    /// scalars, as JSON compares them: `"é"` and `"e\u{301}"` differ.
    ///
    /// A schema is a value: `Sendable`, and safe to use from any thread.
    public struct Schema: Sendable {
        /// The schema as JSON.
        public let json: JSONValue
        /// The schema, read into the checks it makes.
        let root: SchemaNode

        /// The keywords whose rules are checked.
        public static let checkedKeywords: [String] = [
            "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
            "maxLength", "minItems", "maxItems", "uniqueItems", "items", "properties", "required",
            "additionalProperties", "minProperties", "maxProperties",
        ]

        /// The keywords read past as annotations (besides every keyword that starts with `x-`): they say things
        /// about a value but check nothing.
        public static let ignoredKeywords: [String] = [
            "$schema", "$id", "$comment", "$anchor", "title", "description", "default", "examples", "deprecated",
            "readOnly", "writeOnly", "format", "contentEncoding", "contentMediaType",
        ]

        /// Reads `json` as a schema.
        ///
        /// - Throws: ``DefaultsError/Code-swift.struct/invalidArgument`` naming the keyword and where it is (a
        ///   JSON Pointer into the schema) when the schema uses a keyword this type does not check, or gives a
        ///   keyword a value of the wrong kind.
        public init(_ json: JSONValue) throws(DefaultsError) {
            self.json = json
            do throws(SchemaNode.Problem) {
                root = try SchemaNode(json, at: "")
            } catch {
                throw DefaultsError(.invalidArgument, error.message)
            }
        }

        /// Reads a schema from JSON text.
        ///
        /// - Throws: ``DefaultsError/Code-swift.struct/invalidJSON`` with the line and column when the text is not
        ///   JSON; what ``init(_:)`` throws.
        public init(parsing text: String) throws(DefaultsError) {
            try self.init(JSONValue(parsing: text))
        }

        /// Reads the schema in the file at `url` (at most 16 MiB). Blocks on the read.
        ///
        /// - Throws: ``DefaultsError/Code-swift.struct/readFailed`` (with the path and `errno`, `ENOENT` when there
        ///   is no such file) when it cannot be read; ``DefaultsError/Code-swift.struct/invalidJSON`` with the
        ///   path, line and column when it is not JSON; ``DefaultsError/Code-swift.struct/invalidArgument`` with the
        ///   path for what ``init(_:)`` refuses.
        public init(contentsOf url: URL) throws(DefaultsError) {
            let path = url.path
            guard let (bytes, _) = try DurableFile(path: path, role: "schema").read(maxSize: 16 << 20) else {
                throw DefaultsError(.readFailed, "no schema file here", path: path, errno: ENOENT)
            }
            try self.init(bytes: bytes, location: path)
        }

        /// Reads a schema from JSON text (strict: valid UTF-8) kept at `location`, which the errors name as their
        /// `path`.
        init(bytes: [UInt8], location: String) throws(DefaultsError) {
            let json: JSONValue
            do throws(JSONParseError) {
                json = try JSONValueBytes.parse(bytes)
            } catch {
                throw DefaultsError(.invalidJSON, error.message, path: location, line: error.line, column: error.column)
            }
            do throws(DefaultsError) {
                try self.init(json)
            } catch {
                var located = error
                located.path = location
                throw located
            }
        }

        /// The schema ``Defaults/schema(for:title:)`` generates for `keys`.
        ///
        /// - Throws: What ``Defaults/schema(for:title:)`` throws.
        public init(for keys: [AnyKey], title: String? = nil) throws(DefaultsError) {
            try self.init(Defaults.schema(for: keys, title: title))
        }

        /// The schema's `title`, if it has one.
        public var title: String? {
            guard case .object(let members) = json, case .string(let title) = members["title"] else { return nil }
            return title
        }

        /// The names of the keys the schema describes (its top-level `properties`), sorted by their UTF-8 bytes.
        public var keyNames: [String] {
            root.properties.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }

        /// The schema of the key `name` (its member of the top-level `properties`), or `nil` when it lists none.
        public func property(named name: String) -> JSONValue? {
            guard case .object(let members) = json, case .object(let properties) = members["properties"] else {
                return nil
            }
            return properties[name]
        }

        /// Whether the key `name`'s schema marks it secret: its values are then quoted in no violation. Any
        /// `"x-secret"` but `false` marks it (`true`, and also `"yes"` or `1`: a mark meant to hide a value is
        /// never read as not hiding it).
        public func isSecret(_ name: String) -> Bool {
            guard case .object(let members) = property(named: name) else { return false }
            return SchemaNode.marksSecret(members["x-secret"])
        }

        /// The keys the schema marks secret (``isSecret(_:)``), sorted by UTF-8 bytes.
        public var secretKeyNames: [String] { keyNames.filter(isSecret) }

        /// Whether the schema lists the key `name` among its top-level `properties`: what `check --strict` asks of
        /// every stored key (a key it does not list is allowed unless the schema says `additionalProperties:
        /// false`).
        public func lists(_ name: String) -> Bool {
            SchemaNode.exactly(name, in: root.properties) != nil
        }

        /// Every rule `document` (a whole store file's top level) breaks, in the order of the document's members
        /// by their names' UTF-8 bytes; empty when it follows the schema.
        public func violations(of document: JSONValue) -> [Violation] {
            var found: [Violation] = []
            root.check(document, at: [], secret: false, into: &found)
            return found
        }

        /// Every rule the value `value` of the key `name` breaks, where a store file holds it (as a member of the
        /// top level): its key's `properties` schema, or `additionalProperties` for a key the schema does not
        /// list. Empty when it follows the schema. `nil` as `value` is the key's removal: a violation only when
        /// the schema's `required` lists it.
        public func violations(of value: JSONValue?, forKey name: String) -> [Violation] {
            var found: [Violation] = []
            guard let value else {
                if root.required.contains(where: { $0.unicodeScalars.elementsEqual(name.unicodeScalars) }) {
                    found.append(Violation(path: [name], keyword: "required", rule: "present (the schema requires it)"))
                }
                return found
            }
            guard root.allowsValue else {
                return [Violation(path: [name], keyword: "false", rule: "absent (the schema allows nothing)")]
            }
            let secret = isSecret(name) || root.marksSecret(name)
            root.member(name).check(value, at: [name], secret: secret, into: &found)
            return found
        }

        /// A rule a value breaks: where, which keyword, and the rule in words.
        public struct Violation: Sendable, Hashable, CustomStringConvertible {
            /// The path to the value that breaks the rule from the top of the store file: its key first, then
            /// member names and array indexes (as strings); empty for the top level.
            public let path: [String]
            /// The schema keyword that states the rule (`"maximum"`, `"type"`, `"required"`, …).
            public let keyword: String
            /// The rule in words, as ``description`` states it: "at most 1", "of type integer".
            public let rule: String
            /// The value that breaks it as compact JSON (at most 80 characters, cut with `…`); `nil` for a value
            /// the schema marks secret (`"x-secret": true`: a secret key's, or a member's or element's at any depth)
            /// or one inside it, for an object or array holding such a value, and for a missing member.
            public let value: String?

            /// A violation of `rule` (stated by `keyword`) at `path`, by `value`.
            public init(path: [String], keyword: String, rule: String, value: String? = nil) {
                self.path = path
                self.keyword = keyword
                self.rule = rule
                self.value = value
            }

            /// The key the violation is in (the path's first name), or `nil` for the top level.
            public var key: String? { path.first }

            /// The path as a JSON Pointer (RFC 6901): `/window/width`; empty for the top level.
            public var pointer: String {
                path.map { "/" + SchemaNode.escaped($0) }.joined()
            }

            /// `"<pointer>: <value> must be <rule> (schema keyword "<keyword>")"`, the value left out when it is not
            /// quoted (a secret's), the pointer `(top level)` for the top level.
            public var description: String {
                let place = path.isEmpty ? "(top level)" : pointer
                let subject = value.map { "\($0) " } ?? ""
                return "\(place): \(subject)must be \(rule) (schema keyword \"\(keyword)\")"
            }
        }
    }
}
