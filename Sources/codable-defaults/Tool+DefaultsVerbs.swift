import CodableDefaults
import Foundation

/// The commands and `write` forms that follow macOS `defaults(1)`: `read-type`, `rename`, and `write` with
/// a type flag (`-int`, `-array-add`...).
///
/// Like every command, they use only the library's public API. An update that needs the current value
/// (`-array-add`, `-dict-add`, `rename`) reads it when the store is opened and writes with one locked,
/// atomic save; the library has no public update under its lock, so a change another process saves to the
/// same key between that read and the save is overwritten (other keys are merged as in every save).
extension Tool {
    /// `read-type FILE KEY`: prints `Type is integer`, `float`, `boolean`, `string`, `array`, `dictionary`
    /// or `null`.
    func readType(_ location: StoreLocation, key: String) throws(ToolError) {
        let defaults = try open(location)
        guard defaults.hasStoredValue(forKey: key) else {
            throw ToolError(.keyNotFound, "\(path(of: defaults)): key \(KeyText.message(key)): no value stored")
        }
        try Output.print("Type is \(Self.typeName(of: try storedValue(defaults, key: key)))\n")
    }

    /// The name `read-type` prints for a value's type, as `defaults(1)` names it.
    static func typeName(of value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let number):
            return number.description.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? "float" : "integer"
        case .string: return "string"
        case .array: return "array"
        case .object: return "dictionary"
        }
    }

    /// `write FILE KEY -TYPE VALUE...`.
    func write(_ location: StoreLocation, key: String, typed value: TypedValue) throws(ToolError) {
        try refuseReserved(key, command: .write)
        try KeyText.checkLength(key, command: .write)
        let defaults = try open(location)
        switch value {
        case .json(let json):
            defaults.set(json, forKey: key)
        case .date(let date):
            defaults.set(date, forKey: key)
        case .data(let data):
            defaults.set(data, forKey: key)
        case .arrayAdd(let elements):
            switch try currentValue(defaults, key: key) {
            case nil: defaults.set(JSONValue.array(elements), forKey: key)
            case .array(let current)?: defaults.set(JSONValue.array(current + elements), forKey: key)
            case let other?: throw notAnUpdate(defaults, key: key, flag: .arrayAdd, found: other)
            }
        case .dictAdd(let pairs):
            var members: [String: JSONValue]
            switch try currentValue(defaults, key: key) {
            case nil: members = [:]
            case .object(let current)?: members = current
            case let other?: throw notAnUpdate(defaults, key: key, flag: .dictAdd, found: other)
            }
            for (name, member) in pairs { members[name] = member }
            defaults.set(JSONValue.object(members), forKey: key)
        }
        try save(defaults)
    }

    /// `rename FILE OLD NEW`: one batch, so one locked write removes OLD and sets NEW (replacing its value).
    func rename(_ location: StoreLocation, from old: String, to new: String) throws(ToolError) {
        for key in [old, new] {
            try refuseReserved(key, command: .rename)
            try KeyText.checkLength(key, command: .rename)
        }
        let defaults = try open(location)
        guard let value = try currentValue(defaults, key: old) else {
            throw ToolError(
                .keyNotFound,
                "\(path(of: defaults)): key \(KeyText.message(old)): no value stored; nothing was renamed")
        }
        // Keys are compared byte for byte, as the store compares them.
        guard !old.utf8.elementsEqual(new.utf8) else { return }
        defaults.batch { batch in
            batch[Defaults.Key<JSONValue?>(old)] = nil
            batch[Defaults.Key<JSONValue?>(new)] = value
        }
        try save(defaults)
    }

    /// The stored value of `key`, or `nil` when it has none.
    private func currentValue(_ defaults: Defaults, key: String) throws(ToolError) -> JSONValue? {
        guard defaults.hasStoredValue(forKey: key) else { return nil }
        return try storedValue(defaults, key: key)
    }

    /// The error of `-array-add` or `-dict-add` on a value of another type: nothing is written.
    private func notAnUpdate(_ defaults: Defaults, key: String, flag: TypeFlag, found: JSONValue) -> ToolError {
        let expected = flag == .arrayAdd ? "an array" : "a dictionary"
        return ToolError(
            .failure,
            "\(path(of: defaults)): key \(KeyText.message(key)): the stored value's type is "
                + "\(Self.typeName(of: found)), not \(expected); \(flag.spelling) adds to \(expected) only; "
                + "nothing was written")
    }
}
