import CodableDefaults
import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `watch FILE [KEY...] [--initial]`: prints a line per change of the store until SIGINT or SIGTERM.
struct WatchCommand: ToolCommand {
    static let configuration = CommandConfiguration(
        name: "watch",
        origin: .added(),
        abstract: "Print a line per change of the store, by any process, until interrupted.",
        store: [.etcd], arguments: [.key("KEY", .zeroOrMore)],
        options: [
            OptionDeclaration(
                name: "initial", valueName: nil, summary: "First print a line per key with its current value.")
        ],
        discussion: [
            "Each line is the key, a tab, and the new value as compact JSON, or (deleted) when the key has no "
                + "stored value. With KEYs, only those keys are shown. Lines are written as they happen "
                + "(usable in pipes). Stops and exits with 0 on SIGINT (Ctrl-C) or SIGTERM.",
            "A key that is empty, starts with a double quote, or holds a control character (a tab, a line "
                + "break...) or U+2028/U+2029 is printed as a JSON string, as 'keys' prints it, so each line "
                + "is one key, one tab and one value.",
        ],
        examples: [
            "codable-defaults watch settings.json", "codable-defaults watch settings.json volume --initial",
        ])

    /// The store the command works on, and its option groups.
    let store: StoreArguments
    /// The keys to show; all keys when empty.
    let keys: [String]
    /// `--initial`: print each key's current value first.
    let initial: Bool

    init(parsing arguments: inout ScannedArguments) throws(ToolError) {
        store = try StoreArguments(parsing: &arguments)
        keys = arguments.takeAll()
        initial = arguments.flag("initial")
    }

    func run(in tool: Tool) throws(ToolError) {
        let opened = try tool.open(store)
        Self.watch(opened, keys: keys, initial: initial)
    }

    /// Watches `opened` and never returns: the process exits with 0 on SIGINT or SIGTERM, or with 1 when
    /// the output cannot be written.
    ///
    /// Every change reaches the store's `observeAll` observer: those made by other processes too, which the
    /// library notices by watching the file. Each changed key (of `keys`, when given) is printed as
    /// `key<TAB>value` with the new value as compact JSON (`<secret>` for a secret key's), or `(deleted)` when it
    /// has no stored value; a key
    /// that would be ambiguous in a line is printed as a JSON string (see ``KeyText/line(_:)``).
    ///
    /// - Parameters:
    ///   - opened: The store to watch.
    ///   - keys: The keys to show; all keys when empty.
    ///   - initial: Whether to print each key's current value first.
    static func watch(_ opened: OpenedStore, keys: [String], initial: Bool) -> Never {
        let filter = keys.isEmpty ? nil : Set(keys)
        let printer = LinePrinter()
        let token = opened.defaults.observeAll { names in
            let shown = names.filter { filter?.contains($0) ?? true }
            printer.print(sorted(shown).compactMap { line(for: $0, in: opened) })
        }
        if initial {
            printer.print((keys.isEmpty ? opened.defaults.keys : keys).compactMap { line(for: $0, in: opened) })
        }
        // The signals are handled on the main queue rather than by the default action, so the process ends
        // through `exit` once the observation is cancelled.
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler {
                token.cancel()
                exit(ExitStatus.success.rawValue)
            }
            source.resume()
            return source
        }
        withExtendedLifetime((token, sources)) { dispatchMain() }
    }

    /// The line for `key`: the key, a tab, and its stored value as compact JSON or `(deleted)`; `nil` when
    /// the stored value cannot be read (the store reported why on standard error).
    private static func line(for key: String, in opened: OpenedStore) -> String? {
        guard opened.defaults.hasStoredValue(forKey: key) else {
            // Text that is not JSON in etcd is not a deletion: said on standard error, no line.
            if let unreadable = opened.defaults.unreadableValue(named: key) {
                Output.printError(unreadable.description)
                return nil
            }
            return "\(KeyText.line(key))\t(deleted)"
        }
        // A secret key's change is shown, never its value (see `Tool+Secrets.swift`).
        if opened.defaults.isSecret(forKey: key) { return "\(KeyText.line(key))\t\(Tool.secretPlaceholder)" }
        guard let value = opened.defaults.value(JSONValue.self, forKey: key) else { return nil }
        return "\(KeyText.line(key))\t\(JSONText.compact(value))"
    }

    /// Names in the store file's order (by UTF-8 bytes).
    private static func sorted(_ names: Set<String>) -> [String] {
        names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// Prints whole lines to standard output, one write per batch, never interleaved.
private final class LinePrinter: Sendable {
    private let lock = NSLock()

    /// Prints `lines` at once; ends the process with status 1 if standard output cannot be written.
    func print(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        lock.withLock {
            do throws(ToolError) {
                try Output.print(lines.map { $0 + "\n" }.joined())
            } catch {
                Output.printError(error.rendered)
                exit(ExitStatus.failure.rawValue)
            }
        }
    }
}
