import CodableDefaults

/// `update FILE KEY --add N`: an atomic increment, which `defaults(1)` does not have.
extension Tool {
    /// Adds `text` (an integer) to the integer stored under `key` in one atomic update, and prints the sum.
    func update(_ location: StoreLocation, key: String, adding text: String) throws(ToolError) {
        try refuseReserved(key, command: .update)
        try KeyText.checkLength(key, command: .update)
        guard let amount = Int64(text) else {
            throw .usage("--add takes an integer (such as 1 or -5), not \(shellQuoted(text))", command: .update)
        }
        let defaults = try open(location)
        var sum: Int64 = 0
        try update(defaults, keys: [key]) { (values) throws(ToolError) in
            var current: Int64 = 0
            switch values[0] {
            case nil: break
            case .number(let number)? where number.int64Value != nil: current = number.int64Value!
            case .number(let number)? where Self.typeName(of: .number(number)) == "integer":
                throw ToolError(
                    .failure,
                    "\(path(of: defaults)): key \(KeyText.message(key)): the stored integer \(number) is beyond "
                        + "64-bit integers; update --add adds to 64-bit integers only; nothing was written")
            case let other?:
                throw ToolError(
                    .failure,
                    "\(path(of: defaults)): key \(KeyText.message(key)): the stored value's type is "
                        + "\(Self.typeName(of: other)), not integer; update --add adds to integers only; nothing was written"
                )
            }
            let (result, overflow) = current.addingReportingOverflow(amount)
            if overflow {
                throw ToolError(
                    .failure,
                    "\(path(of: defaults)): key \(KeyText.message(key)): \(current) + \(amount) is beyond 64-bit "
                        + "integers; nothing was written")
            }
            sum = result
            values[0] = .number(JSONNumber(result))
        }
        try Output.print("\(sum)\n")
    }
}
