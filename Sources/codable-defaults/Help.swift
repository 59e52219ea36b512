import CodableDefaults

/// An option a command accepts.
struct OptionSpec: Sendable {
    /// The name without its leading `--`.
    let name: String
    /// The placeholder of the option's value, or `nil` for a flag.
    let valueName: String?
    /// One line saying what the option does.
    let summary: String
}

/// What a command accepts and how its help reads.
struct CommandSpec: Sendable {
    /// The command.
    let command: Command
    /// The arguments after the command's name, as in its usage line.
    let synopsis: String
    /// One line saying what the command does.
    let abstract: String
    /// The options the command accepts (besides `--help`).
    let options: [OptionSpec]
    /// Paragraphs that explain the command.
    let discussion: [String]
    /// Example command lines.
    let examples: [String]

    /// The options that say which store a command works on.
    static let storeOptions = [
        OptionSpec(name: "suite", valueName: "NAME", summary: "Use the suite NAME instead of FILE."),
        OptionSpec(
            name: "standard", valueName: "APP", summary: "Use the standard store of the app APP instead of FILE."),
        OptionSpec(name: "app", valueName: "APP", summary: "With --suite: the suite of the app APP."),
    ]

    /// Every command's specification, in the order of the help.
    static let all: [CommandSpec] = [
        CommandSpec(
            command: .read, synopsis: "FILE [KEY]",
            abstract: "Print the whole store as pretty JSON, or one value as compact JSON.",
            options: storeOptions,
            discussion: [
                "Without KEY, prints the stored object with sorted keys, indented by two spaces. With KEY, "
                    + "prints its value as compact JSON on one line; a key with no stored value exits with 3. "
                    + "A missing FILE is an empty store: it prints {}."
            ],
            examples: ["codable-defaults read settings.json", "codable-defaults read settings.json volume"]),
        CommandSpec(
            command: .write, synopsis: "FILE KEY VALUE",
            abstract: "Store a value given as JSON text (with --string, as a string).",
            options: storeOptions + [
                OptionSpec(name: "string", valueName: nil, summary: "Store VALUE as a string, not as JSON text.")
            ],
            discussion: [
                "VALUE is JSON text: 0.8, true, null, \"text\", [1,2], {\"a\":1}. Text that is not JSON is a usage "
                    + "error; store it as a string with --string or by quoting it as JSON ('\"text\"'). The file "
                    + "(and its directory) are created when missing; other keys, including those other processes "
                    + "saved, are kept. Use -- before a VALUE that starts with '--'."
            ],
            examples: [
                "codable-defaults write settings.json volume 0.8",
                "codable-defaults write settings.json profile '{\"name\":\"Ann\",\"age\":29}'",
                "codable-defaults write settings.json name --string 'Ann Lee'",
            ]),
        CommandSpec(
            command: .delete, synopsis: "FILE KEY...",
            abstract: "Remove keys from the store (with --all, every key).",
            options: storeOptions + [
                OptionSpec(name: "all", valueName: nil, summary: "Remove every key."),
                OptionSpec(name: "force", valueName: nil, summary: "Ignore KEYs that have no stored value."),
            ],
            discussion: [
                "A KEY with no stored value exits with 3 and changes nothing, unless --force is given."
            ],
            examples: [
                "codable-defaults delete settings.json volume token", "codable-defaults delete settings.json --all",
            ]
        ),
        CommandSpec(
            command: .keys, synopsis: "FILE", abstract: "Print the stored keys, one per line, in the file's order.",
            options: storeOptions,
            discussion: [
                "A key is printed as it is, unless it is empty, starts with a double quote, or holds a control "
                    + "character (a line break, a tab...) or U+2028/U+2029: such a key is printed as a JSON string, "
                    + "in double quotes with JSON escapes (\"a\\nb\"), so each line is one key. A line that starts "
                    + "with a double quote is always a JSON string."
            ], examples: ["codable-defaults keys settings.json"]),
        CommandSpec(
            command: .check, synopsis: "FILE", abstract: "Check that FILE is a valid store file.",
            options: storeOptions,
            discussion: [
                "Prints 'FILE: valid (N keys)' and exits with 0, or prints the error with its line and column and "
                    + "exits with 4. A missing file is an error here (exit 4)."
            ],
            examples: ["codable-defaults check settings.json"]),
        CommandSpec(
            command: .watch, synopsis: "FILE [KEY...]",
            abstract: "Print a line per change of the store, by any process, until interrupted.",
            options: storeOptions + [
                OptionSpec(
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
            examples: ["codable-defaults watch settings.json", "codable-defaults watch settings.json volume --initial"]),
        CommandSpec(
            command: .import, synopsis: "FILE SOURCE",
            abstract: "Merge the members of the JSON object in SOURCE into the store.",
            options: storeOptions,
            discussion: [
                "SOURCE must hold a JSON object (strict JSON, like a store file). Each member is stored under its "
                    + "key, replacing the key's value; other keys are kept. One write for the whole import. A SOURCE "
                    + "that is the store file itself (by any path: a link, a hard link, a linked directory) is a "
                    + "usage error."
            ],
            examples: ["codable-defaults import settings.json backup.json"]),
        CommandSpec(
            command: .export, synopsis: "FILE [DEST]",
            abstract: "Write the store's JSON to DEST, or to standard output.",
            options: storeOptions,
            discussion: [
                "Writes the store file's format: one member per line, sorted by key, each value compact. DEST is "
                    + "replaced atomically (created with mode 0600). DEST cannot be the store file itself, however "
                    + "it is spelled (a link, a hard link, a linked directory such as here/s.json with here -> .): "
                    + "files are compared by device and inode, and such a DEST is a usage error naming both paths."
            ],
            examples: ["codable-defaults export settings.json backup.json", "codable-defaults export --suite prefs"]),
        CommandSpec(
            command: .help, synopsis: "[COMMAND]", abstract: "Show the help of the tool or of a command.",
            options: [], discussion: [], examples: ["codable-defaults help write"]),
    ]

    /// The specification of `command`.
    static func spec(for command: Command) -> CommandSpec {
        for spec in all where spec.command == command { return spec }
        preconditionFailure("every command has a specification")
    }

    /// The usage line: `codable-defaults COMMAND SYNOPSIS [OPTIONS]`.
    var usage: String {
        "codable-defaults \(command.rawValue) \(synopsis)" + (options.isEmpty ? "" : " [OPTIONS]")
    }
}

/// The texts of `--help`, `help COMMAND` and `--version`.
enum Help {
    /// The tool's version.
    static let version = "0.1.0"

    /// The exit statuses, as the help lists them.
    static let exitStatuses = """
        EXIT STATUS:
          0  success
          1  failure: writing the store, the export or the output failed
          2  usage error (unknown command or option, missing or extra argument, VALUE not JSON)
          3  key not found (read KEY, delete KEY without --force)
          4  bad or unreadable file: invalid JSON (with line:column), unreadable, not a regular file, too
             large; a missing file for check and a missing SOURCE for import
          5  written, but not confirmed durable (write, delete, import): the file holds the change, but
             flushing its directory failed, so it may not survive a power loss (a warning is printed)
        """

    /// The help of the tool.
    static var general: String {
        let commands = CommandSpec.all.map { spec in
            let left = "\(spec.command.rawValue) \(spec.synopsis)"
            return "  " + left.padded(to: 22) + spec.abstract
        }
        return """
            codable-defaults \(version): read, write, check and watch CodableDefaults store files.

            USAGE: codable-defaults COMMAND FILE [ARGUMENTS] [OPTIONS]

            COMMANDS:
            \(commands.joined(separator: "\n"))

            FILE is the path of a store file (a missing file is an empty store), or one of:
              --suite NAME       the suite NAME, as Defaults(suiteName:) opens it: NAME.json in the directory
                                 below (with --app APP, in the directory of the app APP)
              --standard APP     the standard store of the app APP: defaults.json in its directory
            An app's directory is $\(Defaults.directoryEnvironmentVariable) when set, else
            $XDG_CONFIG_HOME/APP, else ~/.config/APP (this tool's own APP is codable-defaults).
            Paths are resolved as the kernel resolves them: with link -> real/sub, link/../s.json is
            real/s.json. FILE, KEY, VALUE and every other argument must be valid UTF-8: an argument that is
            not is a usage error (exit 2), never used with its bytes replaced.

            OPTIONS:
              -h, --help         Show help; also 'codable-defaults help COMMAND' and 'COMMAND --help'.
              --version          Print the version.
            Options may come before or after arguments; '--' ends the options.

            \(exitStatuses)
            """
    }

    /// The help of one command.
    static func text(for command: Command) -> String {
        let spec = CommandSpec.spec(for: command)
        var text = "\(spec.abstract)\n\nUSAGE: \(spec.usage)\n"
        if !spec.discussion.isEmpty {
            text += "\n" + spec.discussion.map(wrapped).joined(separator: "\n\n") + "\n"
        }
        text += "\nOPTIONS:\n"
        for option in spec.options {
            let left = "--\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
            text += "  " + left.padded(to: 19) + option.summary + "\n"
        }
        text += "  " + "-h, --help".padded(to: 19) + "Show this help.\n"
        if !spec.examples.isEmpty {
            text += "\nEXAMPLES:\n" + spec.examples.map { "  \($0)\n" }.joined()
        }
        if command != .help { text += "\n" + exitStatuses + "\n" }
        return text
    }

    /// `paragraph` broken into lines of at most 100 characters.
    private static func wrapped(_ paragraph: String) -> String {
        var lines: [String] = []
        var line = ""
        for word in paragraph.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > 100 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The string padded with spaces to `length` characters, plus one space when it is already as long.
    func padded(to length: Int) -> String {
        count < length ? self + String(repeating: " ", count: length - count) : self + " "
    }
}
