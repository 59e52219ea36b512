import CodableDefaults
import Foundation

/// The commands and `write` forms that follow macOS `defaults(1)`: `read-type`, `rename`, and `write` with
/// a type flag (`-int`, `-array-add`...).
///
/// An update that needs the current value (`-array-add`, `-dict-add`, `rename`) is one atomic update of the
/// library (`modify(forKeys:)`): the value is read under the file's lock, with what other processes saved,
/// and the result written durably before the lock is released.
extension Tool {
    /// `read-type FILE KEY`: prints `Type is integer`, `float`, `boolean`, `string`, `array`, `dictionary`
    /// or `null`.
    func readType(_ location: StoreLocation, key: String, layers: LayerOptions) throws(ToolError) {
        let defaults = try open(location, layers: layers)
        if !layers.isEmpty {
            // The type of the effective value; a secret's type is printed, never its value.
            let value = try effectiveValue(defaults, key: key, secrets: .shown)
            try Output.print("Type is \(Self.typeName(of: value))\n")
            return
        }
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
    func write(_ location: StoreLocation, key: String, typed value: TypedValue, layers: LayerOptions) throws(ToolError)
    {
        try refuseReserved(key, command: .write)
        try KeyText.checkLength(key, command: .write)
        let defaults = try open(location, layers: layers)
        try notingShadowing(of: key, in: defaults) { () throws(ToolError) in try write(defaults, key: key, typed: value)
        }
    }

    /// Writes `value` under `key` in `defaults`, durably.
    private func write(_ defaults: Defaults, key: String, typed value: TypedValue) throws(ToolError) {
        switch value {
        case .json(let json):
            defaults.set(json, forKey: key)
        case .date(let date):
            defaults.set(date, forKey: key)
        case .data(let data):
            defaults.set(data, forKey: key)
        case .arrayAdd(let elements):
            return try update(defaults, keys: [key]) { (values) throws(ToolError) in
                switch values[0] {
                case nil: values[0] = .array(elements)
                case .array(let current)?: values[0] = .array(current + elements)
                case let other?: throw notAnUpdate(defaults, key: key, flag: .arrayAdd, found: other)
                }
            }
        case .dictAdd(let pairs):
            return try update(defaults, keys: [key]) { (values) throws(ToolError) in
                var members: [String: JSONValue]
                switch values[0] {
                case nil: members = [:]
                case .object(let current)?: members = current
                case let other?: throw notAnUpdate(defaults, key: key, flag: .dictAdd, found: other)
                }
                for (name, member) in pairs { members[name] = member }
                values[0] = .object(members)
            }
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
        // Keys are compared byte for byte, as the store compares them.
        let keys = old.utf8.elementsEqual(new.utf8) ? [old] : [old, new]
        try update(defaults, keys: keys) { (values) throws(ToolError) in
            guard let value = values[0] else {
                throw ToolError(
                    .keyNotFound,
                    "\(path(of: defaults)): key \(KeyText.message(old)): no value stored; nothing was renamed")
            }
            if keys.count == 2 { values = [nil, value] }
        }
    }

    /// Runs one atomic update of `keys` (``Defaults/modify(forKeys:_:)``): `body` gets their stored values
    /// under the file's lock and what it leaves is written durably before the lock is released. What `body`
    /// throws is thrown as it is; nothing is written then.
    func update(
        _ defaults: Defaults, keys: [String], _ body: (inout [JSONValue?]) throws(ToolError) -> Void
    ) throws(ToolError) {
        do {
            try defaults.modify(forKeys: keys) { values in try body(&values) }
        } catch let error as ToolError {
            throw error
        } catch let error as DefaultsError {
            throw ToolError(error)
        } catch {
            throw ToolError(.failure, "\(path(of: defaults)): \(error)")
        }
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
