import CodableDefaults

/// An option a command accepts.
struct OptionSpec: Sendable {
    /// The name without its leading `--`.
    let name: String
    /// The placeholder of the option's value, or `nil` for a flag.
    let valueName: String?
    /// Whether the option may be given more than once (its values are kept in order).
    var repeatable: Bool = false
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

    /// The options that open a store kept in etcd instead of a file (`read`, `write`, `keys` and `watch`).
    static let etcdOptions = [
        OptionSpec(
            name: "etcd", valueName: "URLS",
            summary: "Use the store on the etcd cluster at URLS (http://host:port, comma-separated) instead of FILE."),
        OptionSpec(name: "prefix", valueName: "P", summary: "With --etcd: the store's keys are the etcd keys P + KEY."),
        OptionSpec(
            name: "etcd-user", valueName: "NAME",
            summary: "With --etcd: authenticate as the etcd user NAME (needs --etcd-password-file)."),
        OptionSpec(
            name: "etcd-password-file", valueName: "FILE",
            summary: "With --etcd-user: the user's password is the text of FILE (one trailing newline dropped)."),
    ]

    /// Every command's specification, in the order of the help.
    static let all: [CommandSpec] = [
        CommandSpec(
            command: .read, synopsis: "FILE [KEY]",
            abstract: "Print the whole store as pretty JSON, or one value as compact JSON.",
            options: storeOptions + etcdOptions + LayerOptions.specs,
            discussion: [
                "Without KEY, prints the stored object with sorted keys, indented by two spaces. With KEY, "
                    + "prints its value as compact JSON on one line; a key with no stored value exits with 3. "
                    + "A missing FILE is an empty store: it prints {}. On etcd, a key whose text is not JSON is "
                    + "named on standard error and the read exits with 4 (the other keys are printed).",
                layersParagraph,
                "With layers, read prints the effective values: KEY's (exit 3 when no layer has one either), or "
                    + "every key of the store and of the layers' files and directories (the environment lists no "
                    + "keys). A secret value is printed only with --show-secrets: read KEY exits with 1 naming "
                    + "where it is, and the whole store shows it as \"<secret>\" (a note on standard error "
                    + "names the keys).",
            ],
            examples: ["codable-defaults read settings.json", "codable-defaults read settings.json volume"]),
        CommandSpec(
            command: .readType, synopsis: "FILE KEY",
            abstract: "Print the type of a stored value, as defaults(1) does: 'Type is integer'.",
            options: storeOptions + LayerOptions.specs,
            discussion: [
                "Prints 'Type is T', T being integer, float, boolean, string, array, dictionary or null. A number "
                    + "written with a '.' or an exponent (1.5, 1e3, 2.0) is a float, any other an integer. A date "
                    + "written with -date is stored as a number (an integer or a float) and data written with -data as a Base64 "
                    + "string: the JSON file has no date or data type. A key with no stored value exits with 3.",
                "With layer options (see 'help explain'), the type of the effective value; a secret's type is "
                    + "printed, never its value.",
            ],
            examples: ["codable-defaults read-type settings.json volume"]),
        CommandSpec(
            command: .write, synopsis: "FILE KEY [-TYPE] VALUE...",
            abstract: "Store a value: JSON text, a string (--string), or typed as defaults(1) does (-int 5).",
            options: storeOptions + etcdOptions + LayerOptions.specs + [
                OptionSpec(name: "string", valueName: nil, summary: "Store VALUE as a string, not as JSON text.")
            ],
            discussion: [
                "VALUE is JSON text: 0.8, true, null, \"text\", [1,2], {\"a\":1}. Text that is not JSON is a usage "
                    + "error; store it as a string with --string or by quoting it as JSON ('\"text\"'). The file "
                    + "(and its directory) are created when missing; other keys, including those other processes "
                    + "saved, are kept. Use -- before a VALUE that starts with '--'.",
                "Or give the value as defaults(1) does, with a type flag after KEY: write FILE KEY -TYPE VALUE... "
                    + "Every argument after the flag is one of its values, taken as it is (options go before it; "
                    + "after --, a type flag is a VALUE).",
                "  -int N           a JSON integer: an optional sign and digits, any size (1.5 exits with 2)\n"
                    + "  -float N         a JSON number, as written (1.5, -2, 1e3; a leading + is dropped, as -int\n"
                    + "                   drops it)\n"
                    + "  -bool B          true or false: B is YES, NO, true, false, 1 or 0, in any case\n"
                    + "  -string S        a JSON string\n"
                    + "  -date D          an ISO 8601 date and time with a time zone (2026-12-01T10:00:00Z), stored\n"
                    + "                   as the library stores a Date: its timeIntervalSinceReferenceDate, a number\n"
                    + "                   that a Key<Date> reads; a day or time that does not exist (02-30, 24:00)\n"
                    + "                   exits with 2; fractional seconds are kept as far as a Date holds them\n"
                    + "                   (about 0.1 microsecond)\n"
                    + "  -data HEX        bytes in hexadecimal (48656c6c6f), stored as the library stores Data: a\n"
                    + "                   Base64 string that a Key<Data> reads\n"
                    + "  -array V...      an array of strings (no V: an empty array)\n"
                    + "  -array-add V...  the stored array with the strings appended\n"
                    + "  -dict K V...     an object of string values (a K given twice keeps its last V)\n"
                    + "  -dict-add K V... the stored object with these members set\n"
                    + "  -integer and -boolean are the same as -int and -bool.",
                "-array-add and -dict-add start from an empty array or object when KEY has no value; a value of another type exits with 1 and writes "
                    + "nothing. Each is one atomic update: under the file's lock, the current value is read (with "
                    + "what other processes saved), the elements are added and the result is written durably "
                    + "before the lock is released, so two -array-add run at once keep both elements.",
                "With layer options (see 'help explain'), the store is written as always, and when an override "
                    + "shadows KEY a note on standard error says which (codable-defaults: note: \"KEY\" is shadowed "
                    + "by environment MYSERVICE_KEY; reads give that value); the exit status is 0. Layers are never "
                    + "written.",
            ],
            examples: [
                "codable-defaults write settings.json volume 0.8",
                "codable-defaults write settings.json profile '{\"name\":\"Ann\",\"age\":29}'",
                "codable-defaults write settings.json name --string 'Ann Lee'",
                "codable-defaults write settings.json count -int 5",
                "codable-defaults write settings.json enabled -bool YES",
                "codable-defaults write settings.json recent -array-add a.txt b.txt",
            ]),
        CommandSpec(
            command: .update, synopsis: "FILE KEY --add N",
            abstract: "Add N to an integer atomically, and print the new value.",
            options: storeOptions + [
                OptionSpec(name: "add", valueName: "N", summary: "The integer to add (negative to subtract).")
            ],
            discussion: [
                "One atomic update: under the file's lock, the current value of KEY is read (with what other "
                    + "processes saved), N is added and the result is written durably before the lock is released, "
                    + "so updates run at once by any number of processes all count. A KEY with no value counts as 0. "
                    + "Prints the new value. N must be an integer (else exit 2); a stored value that is not an integer, "
                    + "or a sum beyond 64-bit integers, exits with 1 and writes nothing. Not in defaults(1)."
            ],
            examples: [
                "codable-defaults update settings.json launches --add 1",
                "codable-defaults update settings.json credits --add -5",
            ]),
        CommandSpec(
            command: .rename, synopsis: "FILE OLD NEW",
            abstract: "Move the value of OLD to NEW, in one write.",
            options: storeOptions,
            discussion: [
                "One atomic update removes OLD and stores its value under NEW: under the file's lock, OLD is read "
                    + "(with what other processes saved) and the result is written durably before the lock is "
                    + "released. A NEW that has a value is overwritten, as defaults(1) does. An OLD with no stored "
                    + "value exits with 3 and changes nothing; OLD and NEW the same key changes nothing."
            ],
            examples: ["codable-defaults rename settings.json volume soundVolume"]),
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
            options: storeOptions + etcdOptions + LayerOptions.specs,
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
            options: storeOptions + etcdOptions + [
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
            abstract: "Write the store's JSON to DEST, or to standard output (no DEST, or -).",
            options: storeOptions + LayerOptions.specs,
            discussion: [
                "Writes the store file's format: one member per line, sorted by key, each value compact. DEST is "
                    + "replaced atomically (created with mode 0600). DEST cannot be the store file itself, however "
                    + "it is spelled (a link, a hard link, a linked directory such as here/s.json with here -> .): "
                    + "files are compared by device and inode, and such a DEST is a usage error naming both paths.",
                "With layer options (see 'help explain'), the effective values of every key of the store and of "
                    + "the layers' files and directories: what a program with these layers reads. A secret value "
                    + "is exported only with --show-secrets; without, the export exits with 1, naming the key, and "
                    + "writes nothing.",
            ],
            examples: ["codable-defaults export settings.json backup.json", "codable-defaults export --suite prefs"]),
        CommandSpec(
            command: .explain, synopsis: "FILE KEY",
            abstract: "Print every layer's value of KEY in lookup order, and which one reads give.",
            options: storeOptions + LayerOptions.specs,
            discussion: [
                layersParagraph,
                "Prints a line per domain or layer that has a value for KEY, in lookup order: a mark ('* ' for "
                    + "the value reads give, the first; two spaces for the others), where the value is, a tab, and "
                    + "the value as compact JSON, or <secret> for a secret value without --show-secrets. Where "
                    + "is one of: environment NAME (the variable), file PATH (an --override or --fallback file, or "
                    + "a file of a --fallback-dir or --secret-dir), stored PATH (the store file). A NAME or PATH "
                    + "that holds a tab, a line break or another control character is a JSON string, as 'keys' "
                    + "prints such a key. When nothing has a value, the one line is '* default<TAB>(none)' (a "
                    + "program reads its key's default, which the tool does not know) and the exit status is 3.",
                "  * environment MYSERVICE_VOLUME\t0.9\n"
                    + "    stored /var/lib/myservice/settings.json\t0.8\n"
                    + "    file /etc/myservice/defaults.json\t0.5",
            ],
            examples: [
                "codable-defaults explain settings.json volume --env-prefix MYSERVICE_ --fallback /etc/myservice/defaults.json",
                "codable-defaults explain settings.json token --secret-dir /run/secrets/myservice",
            ]),
        CommandSpec(
            command: .help, synopsis: "[COMMAND]", abstract: "Show the help of the tool or of a command.",
            options: [], discussion: [], examples: ["codable-defaults help write"]),
    ]

    /// The paragraph on layer options, in the help of each command that takes them.
    static let layersParagraph =
        "Layer options read values around the store, as a program opening it with layers does (they are never "
        + "written, created or locked): overrides win over the stored value (--env-prefix, --secret-env-prefix, "
        + "--override, --secret-override), fallbacks are read when nothing is stored (--fallback, "
        + "--secret-fallback, --fallback-dir, --secret-dir). "
        + "Each may be given more than once; overrides are read in the order given, then the stored value, then "
        + "the fallbacks in the order given. A variable is named PREFIX and KEY with letters uppercased and "
        + "other characters made '_'. A value from the environment or a directory's file is JSON when it parses, "
        + "else a string. A fallback or override file that is not a JSON object exits with 4, naming its "
        + "path:line:column; a missing one is empty."

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
          1  failure: writing the store, the export or the output failed; -array-add, -dict-add or update
             found a value of another type, or update's sum overflows; a secret value to print or export
             without --show-secrets
          2  usage error (unknown command or option, missing or extra argument, VALUE not JSON)
          3  key not found (read KEY, read-type KEY, explain KEY, rename OLD, delete KEY without --force)
          4  bad or unreadable file: invalid JSON (with line:column), unreadable, not a regular file, too
             large (the store file or a layer's); a missing file for check and a missing SOURCE for import;
             an etcd store that cannot be read (no endpoint answers, the user refused) or a key's text there
             not JSON (read KEY, the whole store's read, -array-add and -dict-add, update)
          5  written, but not confirmed durable (write, update, rename, delete, import): the file holds the
             change, but flushing its directory failed, so it may not survive a power loss (a warning is
             printed)
        """

    /// How the tool differs from macOS `defaults(1)`, as the general help lists it.
    static let differences = """
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
          - import and export take JSON files, not plists; export FILE - writes to standard output, as
            without DEST, but import reads a file only (no - for standard input).
          - Not here: domains, find, read -app / -host / -currentHost (a store is one file).
          - Added: keys, check, watch, update (an atomic --add); exit statuses tell the failure apart (below).
        """

    /// The help of the tool.
    static var general: String {
        let commands = CommandSpec.all.map { spec in
            let left = "\(spec.command.rawValue) \(spec.synopsis)"
            return "  " + left.padded(to: 23) + spec.abstract
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
              --etcd URLS --prefix P
                                 (read, write, keys, watch) the store kept in the etcd cluster at URLS
                                 (comma-separated http(s)://host:port), in the etcd keys P + KEY; with
                                 --etcd-user NAME --etcd-password-file FILE, as the etcd user NAME
            An app's directory is $\(Defaults.directoryEnvironmentVariable) when set, else
            $XDG_CONFIG_HOME/APP, else ~/.config/APP (this tool's own APP is codable-defaults); on macOS,
            ~/Library/Containers/APP/Data/Library/Application Support/APP when the sandbox container of
            the app APP (its bundle identifier) exists, else ~/Library/Application Support/APP.
            Paths are resolved as the kernel resolves them: with link -> real/sub, link/../s.json is
            real/s.json. FILE, KEY, VALUE and every other argument must be valid UTF-8: an argument that is
            not is a usage error (exit 2), never used with its bytes replaced.

            LAYERS: read, read-type, keys, export, write and explain take read-only layers around the store, as
            a program does: --env-prefix PREFIX, --override FILE and their --secret- forms win over the stored
            value; --fallback FILE, --fallback-dir DIR, --secret-fallback FILE and --secret-dir DIR are read
            when nothing is stored. Secret values are printed only with --show-secrets. See
            'codable-defaults help explain'.

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
    static func text(for command: Command) -> String {
        let spec = CommandSpec.spec(for: command)
        var text = "\(spec.abstract)\n\nUSAGE: \(spec.usage)\n"
        if !spec.discussion.isEmpty {
            text += "\n" + spec.discussion.map(wrapped).joined(separator: "\n\n") + "\n"
        }
        text += "\nOPTIONS:\n"
        let lefts = spec.options.map { "--\($0.name)" + ($0.valueName.map { " \($0)" } ?? "") }
        // Summaries line up after the longest option (as wide as 19 columns at least).
        let width = max(19, (lefts.map(\.count).max() ?? 0) + 2)
        for (left, option) in zip(lefts, spec.options) {
            text += "  " + left.padded(to: width) + option.summary + "\n"
        }
        text += "  " + "-h, --help".padded(to: width) + "Show this help.\n"
        if !spec.examples.isEmpty {
            text += "\nEXAMPLES:\n" + spec.examples.map { "  \($0)\n" }.joined()
        }
        if command != .help { text += "\n" + exitStatuses + "\n" }
        return text
    }

    /// `paragraph` broken into lines of at most 100 characters, unless it starts with two spaces.
    private static func wrapped(_ paragraph: String) -> String {
        // An indented paragraph is laid out already (a table of flags).
        if paragraph.hasPrefix("  ") { return paragraph }
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
