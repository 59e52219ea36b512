/// A positional argument a command declares: its placeholder, what it is, and how many it takes.
struct ArgumentDeclaration: Sendable, Equatable {
    /// What the argument names, as the scanner needs to know it.
    enum Kind: Sendable, Equatable {
        /// The store's FILE: left out when `--suite`, `--standard` or `--etcd` names the store.
        case store
        /// A key of the store: a first KEY that looks like a path, given with `--suite`, is refused as a FILE.
        case key
        /// Anything else (a VALUE, a SOURCE or DEST file, a command's name).
        case other
    }

    /// How many arguments it takes.
    enum Arity: Sendable, Equatable {
        /// Exactly one: `KEY`.
        case one
        /// One or none: `[KEY]`.
        case optional
        /// One or more: `KEY...`.
        case oneOrMore
        /// Any number: `[KEY...]`.
        case zeroOrMore
        /// One, or with a type flag before it, any number (`write FILE KEY [-TYPE] VALUE...`): every argument
        /// after the flag is one of its values.
        case typedValues
    }

    /// The placeholder, as the usage line and the messages write it: `KEY`, `VALUE`, `DEST`.
    let name: String
    /// What the argument names.
    let kind: Kind
    /// How many arguments it takes.
    let arity: Arity

    /// The store's `FILE`.
    static let store = ArgumentDeclaration(name: "FILE", kind: .store, arity: .one)

    /// A key of the store, `KEY` unless named otherwise.
    static func key(_ name: String = "KEY", _ arity: Arity = .one) -> ArgumentDeclaration {
        ArgumentDeclaration(name: name, kind: .key, arity: arity)
    }

    /// An argument that is not a key.
    static func value(_ name: String, _ arity: Arity = .one) -> ArgumentDeclaration {
        ArgumentDeclaration(name: name, kind: .other, arity: arity)
    }

    /// The argument as the usage line writes it.
    var synopsis: String {
        switch arity {
        case .one: return name
        case .optional: return "[\(name)]"
        case .oneOrMore: return "\(name)..."
        case .zeroOrMore: return "[\(name)...]"
        case .typedValues: return "[-TYPE] \(name)..."
        }
    }

    /// The most arguments it takes, or `nil` when it takes any number (`typedValues`: one without a type flag).
    var most: Int? {
        switch arity {
        case .one, .optional, .typedValues: return 1
        case .oneOrMore, .zeroOrMore: return nil
        }
    }
}
