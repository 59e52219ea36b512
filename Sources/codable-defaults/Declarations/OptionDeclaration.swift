/// An option a command declares: `--name`, or `--name VALUE`.
struct OptionDeclaration: Sendable {
    /// The name without its leading `--`.
    let name: String
    /// The placeholder of the option's value, or `nil` for a flag.
    let valueName: String?
    /// Whether the option may be given more than once (its values are kept in order).
    var repeatable: Bool = false
    /// Whether the command needs the option: it is part of the usage line (`--add N`).
    var isRequired: Bool = false
    /// One line saying what the option does.
    let summary: String

    /// The option as the usage line and the help write it: `--name VALUE` or `--name`.
    var synopsis: String {
        "--\(name)" + (valueName.map { " \($0)" } ?? "")
    }
}
