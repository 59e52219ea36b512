import CodableDefaults

/// The texts of `--help` and `help COMMAND`, made from the commands' declarations.
enum HelpText {
    /// The commands, in the order of the tool's help.
    private static var commands: [CommandConfiguration] {
        Commands.all.map { $0.configuration }
    }

    /// The exit statuses, as the help lists them: each status's list of commands made from their declarations
    /// (``CommandConfiguration/exitCases``), in the order of ``Commands/all``.
    static var exitStatuses: String {
        typealias ExitCase = CommandConfiguration.ExitCase
        /// The phrases `phrase` picks from every command's exit cases.
        func phrases(_ phrase: (CommandConfiguration, ExitCase) -> String?) -> [String] {
            commands.flatMap { command in command.exitCases.compactMap { phrase(command, $0) } }
        }
        let wrongTypes = phrases { if case .wrongType(let text) = $1 { text } else { nil } }
        var failures = phrases { if case .failure(let text) = $1 { text } else { nil } }
        if !wrongTypes.isEmpty { failures.insert(listed(wrongTypes, "or") + " found a value of another type", at: 0) }
        let keysNotFound = phrases { if case .keyNotFound(let text) = $1 { text } else { nil } }
        let missingFiles = phrases { if case .missingFile(let text) = $1 { text } else { nil } }
        let invalidFiles = phrases { if case .invalidFile(let text) = $1 { text } else { nil } }
        let etcdTexts = phrases { if case .etcdTextNotJSON(let text) = $1 { text } else { nil } }
        let notDurable = phrases { $1 == .notDurable ? $0.name : nil }
        let differing = phrases { $1 == .difference ? $0.name : nil }
        let statuses: [(ExitStatus, String)] = [
            (.success, "success" + (differing.isEmpty ? "" : " (\(listed(differing, "and")): no difference)")),
            (
                .failure,
                (differing.isEmpty ? "" : "\(listed(differing, "or")) found a difference; or ")
                    + "failure: writing the store, the export or the output failed; "
                    + failures.joined(separator: ", or ") + (failures.isEmpty ? "" : "; ")
                    + "a secret value to print or export without --show-secrets"
            ),
            (
                .usage,
                "usage error (unknown command or option, missing or extra argument, VALUE not JSON); or a value "
                    + "the store's schema refuses (nothing is written)"
            ),
            (.keyNotFound, "key not found" + parenthesized(keysNotFound)),
            (
                .badFile,
                "bad or unreadable file: invalid JSON (with line:column), unreadable, not a regular file, too large "
                    + "(the store file or a layer's); "
                    + (missingFiles.isEmpty ? "" : listed(missingFiles, "and") + "; ")
                    + (invalidFiles.isEmpty ? "" : listed(invalidFiles, "and") + "; ")
                    + "an etcd store that cannot be read (no endpoint answers, the user refused) or a key's text "
                    + "there not JSON" + parenthesized(etcdTexts) + "; an encrypted value without its key, with "
                    + "another key, or changed (the value is kept as it is)"
            ),
            (
                .notDurable,
                "written, but not confirmed durable" + parenthesized(notDurable) + ": the file holds the change, but "
                    + "flushing its directory failed, so it may not survive a power loss (a warning is printed)"
            ),
        ]
        let lines = statuses.map { status, text in wrapped(text, first: "  \(status.rawValue)  ", rest: "     ") }
        return "EXIT STATUS:\n" + lines.joined(separator: "\n")
    }

    /// How the tool differs from macOS `defaults(1)`, as the general help lists it.
    static var differences: String {
        """
        DIFFERENCES FROM defaults(1):
          - A store is a JSON FILE (or --suite/--standard), not a domain; values are JSON, not property lists.
          - read prints JSON (the whole store pretty, one value compact), not the old plist text format.
          - write takes JSON text by default (write f.json n 5 stores a number, write f.json s hi is a usage
            error: use --string or -string); the type flags -int -float -bool -string -date -data -array
            -array-add -dict -dict-add work as in defaults(1), see 'help write'. -date takes ISO 8601 only;
            dates and data are stored as numbers and Base64 strings, so read-type calls them integer or float, and string.
          - delete needs KEY... or --all: it never deletes a whole store by its name alone; --force ignores
            missing keys.
          - rename overwrites NEW, as defaults(1) does; like -array-add and -dict-add, it is one atomic
            update under the file's lock.
          - import takes a JSON file or a property list (XML or binary); export writes JSON, or an XML
            property list to a DEST named *.plist; export FILE - writes JSON to standard output, as
            without DEST, but import reads a file only (no - for standard input).
          - Not here: domains, find, read -app / -host / -currentHost (a store is one file).
        \(added)
        """
    }

    /// The commands `defaults(1)` does not have, as the differences list them.
    private static var added: String {
        let added = commands.compactMap { command -> String? in
            guard case .added(let note) = command.origin else { return nil }
            return command.name + (note.map { " (\($0))" } ?? "")
        }
        return wrapped(
            "- Added: \(added.joined(separator: ", ")); exit statuses tell the failure apart (below).",
            first: "  ", rest: "    ")
    }

    /// The help of the tool.
    static var general: String {
        let lines = commands.map { command in
            "  " + "\(command.name) \(command.synopsis)".padded(to: 23) + command.abstract
        }
        let etcdNames = commands.filter { $0.takes(.etcd) }.map(\.name)
        let etcd = wrapped(
            "(\(etcdNames.joined(separator: ", "))) the store kept in the etcd cluster at URLS "
                + "(comma-separated http(s)://host:port), in the etcd keys P + KEY; with --etcd-user NAME "
                + "--etcd-password-file FILE, as the etcd user NAME; with --etcd-cache FILE, keeping a local copy "
                + "in FILE that answers, and keeps writes to send later, while no member answers; with --cacert "
                + "FILE, trusting the authority in FILE, and with --cert FILE --key FILE, presenting that client "
                + "certificate, as etcdctl does (else $ETCDCTL_CACERT, $ETCDCTL_CERT, $ETCDCTL_KEY); --dial-timeout and "
                + "--command-timeout DURATION (default 2s and 5s) bound the wait for each member. A Kubernetes "
                + "etcd: --etcd https://127.0.0.1:2379 --cacert /etc/kubernetes/pki/etcd/ca.crt --cert "
                + "/etc/kubernetes/pki/etcd/healthcheck-client.crt --key "
                + "/etc/kubernetes/pki/etcd/healthcheck-client.key",
            first: String(repeating: " ", count: 21), rest: String(repeating: " ", count: 21))
        let layered = commands.filter { $0.takes(.layers) }.map(\.name)
        let layers = wrapped(
            "LAYERS: \(listed(layered, "and")) \(layered.count == 1 ? "takes" : "take") read-only layers around "
                + "the store, as a program does: --env-prefix PREFIX, --override FILE and their --secret- forms win "
                + "over the stored value; --fallback FILE, --fallback-dir DIR, --secret-fallback FILE and "
                + "--secret-dir DIR are read when nothing is stored. Secret values are printed only with "
                + "--show-secrets. See 'codable-defaults\u{A0}help\u{A0}explain'.", first: "", rest: "")
        let encryption = wrapped(
            "SECRETS AT REST: a secret key's value (write --secret, or a key the store's schema or history marks "
                + "secret) is stored encrypted with the key of --encryption-key FILE, else "
                + "$CODABLE_DEFAULTS_ENCRYPTION_KEY_FILE (64 hexadecimal digits, as openssl rand -hex 32 prints them; "
                + "only its owner may read the file). Every command takes it; commands that print or copy values "
                + "(read, export, edit, diff, import) use an encrypted value's encrypted text, which stays readable "
                + "under its name, and read --show-secrets and export --show-secrets decrypt it (exit 4 without the "
                + "key). rename needs the key; rekey encrypts every secret again under a new key.",
            first: "", rest: "")
        return """
            codable-defaults \(Tool.version): read, write, check and watch CodableDefaults store files.

            USAGE: codable-defaults COMMAND FILE [ARGUMENTS] [OPTIONS]

            COMMANDS:
            \(lines.joined(separator: "\n"))

            FILE is the path of a store file (a missing file is an empty store), or one of:
              --suite NAME       the suite NAME, as Defaults(suiteName:) opens it: NAME.json in the directory
                                 below (with --app APP, in the directory of the app APP)
              --standard APP     the standard store of the app APP: defaults.json in its directory
              --etcd URLS --prefix P
            \(etcd)
            An app's directory is $\(Defaults.directoryEnvironmentVariable) when set, else
            $XDG_CONFIG_HOME/APP, else ~/.config/APP (this tool's own APP is codable-defaults); on macOS,
            ~/Library/Containers/APP/Data/Library/Application Support/APP when the sandbox container of
            the app APP (its bundle identifier) exists, else ~/Library/Application Support/APP.
            Paths are resolved as the kernel resolves them: with link -> real/sub, link/../s.json is
            real/s.json. FILE, KEY, VALUE and every other argument must be valid UTF-8: an argument that is
            not is a usage error (exit 2), never used with its bytes replaced.

            \(layers)

            \(encryption)

            OPTIONS:
              -h, --help         Show help; also 'codable-defaults help COMMAND' and 'COMMAND --help'.
              --version          Print the version.
            Options may come before or after arguments; '--' ends the options. FILE and --suite (or
            --standard) are one or the other: both is a usage error; with --suite, put a KEY that looks like a
            path (it holds a '/' or ends with .json) after '--'.

            \(differences)

            \(exitStatuses)
            """
    }

    /// The help of one command.
    static func text(for command: CommandConfiguration) -> String {
        var text = "\(command.abstract)\n\nUSAGE: \(command.usage)\n"
        if !command.discussion.isEmpty {
            text += "\n" + command.discussion.map(wrapped).joined(separator: "\n\n") + "\n"
        }
        text += "\nOPTIONS:\n"
        let lefts = command.options.map(\.synopsis)
        // Summaries line up after the longest option (as wide as 19 columns at least).
        let width = max(19, (lefts.map(\.count).max() ?? 0) + 2)
        for (left, option) in zip(lefts, command.options) {
            text += "  " + left.padded(to: width) + option.summary + "\n"
        }
        text += "  " + "-h, --help".padded(to: width) + "Show this help.\n"
        if !command.examples.isEmpty {
            text += "\nEXAMPLES:\n" + command.examples.map { "  \($0)\n" }.joined()
        }
        if !command.isAboutTheTool { text += "\n" + exitStatuses + "\n" }
        return text
    }

    /// `paragraph` broken into lines of at most 100 characters, unless it starts with two spaces.
    private static func wrapped(_ paragraph: String) -> String {
        // An indented paragraph is laid out already (a table of flags).
        if paragraph.hasPrefix("  ") { return paragraph }
        return wrapped(paragraph, first: "", rest: "")
    }

    /// `text` broken into lines of at most 100 characters, the first starting with `first`, the others with
    /// `rest`. A no-break space (U+00A0) joins two words that stay on one line (a command line: 'codable-defaults
    /// help explain'); it is written as a space.
    private static func wrapped(_ text: String, first: String, rest: String) -> String {
        var lines: [String] = []
        var line = first
        var lineIsEmpty = true
        for word in text.split(separator: " ") {
            let word = String(word.map { $0 == "\u{A0}" ? " " : $0 })
            if !lineIsEmpty && line.count + 1 + word.count > 100 {
                lines.append(line)
                line = rest
                lineIsEmpty = true
            }
            line += (lineIsEmpty ? "" : " ") + word
            lineIsEmpty = false
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// `items` joined as a sentence lists them: "a, b and c" (with `conjunction` "and").
    private static func listed(_ items: [String], _ conjunction: String) -> String {
        guard let last = items.last, items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }

    /// `items` joined with commas in parentheses after a space, or nothing when there are none: " (a, b)".
    private static func parenthesized(_ items: [String]) -> String {
        items.isEmpty ? "" : " (" + items.joined(separator: ", ") + ")"
    }
}

extension String {
    /// The string padded with spaces to `length` characters, plus one space when it is already as long.
    func padded(to length: Int) -> String {
        count < length ? self + String(repeating: " ", count: length - count) : self + " "
    }
}
