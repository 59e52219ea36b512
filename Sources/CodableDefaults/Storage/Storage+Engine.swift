/// What an engine of another target (the etcd engine) needs to implement ``Storage``: the seam's values made
/// from outside the module.

extension MemberChange {
    /// A change of `name` to `value` (compact JSON, as ``StorageValue/compact(_:maxDepth:)`` makes it), or its
    /// removal (`nil`).
    package init(_ name: String, _ value: [UInt8]?) {
        self.init(name: name, value: value)
    }
}

extension StorageWrite {
    /// A write whose outcome is `outcome`, with what other writers stored (`outside`), holding nothing in memory.
    package init(
        outside: StorageContent?, outcome: Result<(stamped: [MemberChange], notDurable: DefaultsError?), DefaultsError>
    ) {
        self.init(outside: outside, outcome: outcome, holds: nil)
    }
}

extension StoredMembers {
    /// The members `members` (each value compact JSON); when a name occurs more than once, its last member wins.
    package init(members: [(name: String, value: [UInt8])]) {
        self.init(members.map { ParsedMember(key: $0.name, value: $0.value) })
    }
}

/// The check of a value an engine read from elsewhere (another tool may have stored any bytes).
package enum StorageValue {
    /// `bytes` as one compact JSON value that nests at most `maxDepth - 1` deep below the store's top level
    /// (as in a file), or why it is not one: the parser's message, with the line and column in the value.
    package static func compact(_ bytes: [UInt8], maxDepth: Int) -> Result<[UInt8], StorageValueError> {
        do throws(JSONParseError) {
            return .success(try JSONParser.compactValue(bytes, maxDepth: max(maxDepth - 1, 1)))
        } catch {
            return .failure(StorageValueError(message: error.message, line: error.line, column: error.column))
        }
    }
}

/// Why a value read from an engine is not JSON the store can take.
package struct StorageValueError: Error, Sendable {
    /// The parser's words.
    package var message: String
    /// The line (from 1) in the value where it went wrong.
    package var line: Int
    /// The column (from 1) in that line.
    package var column: Int
}

extension Origin {
    /// Whether the value comes from below the stored domain with nothing stored: the registered value or the
    /// default (where a stored value the engine could not take would have been read first).
    var isBelowStored: Bool {
        switch self {
        case .registered, .none: true
        case .argument, .layer, .stored: false
        }
    }
}
