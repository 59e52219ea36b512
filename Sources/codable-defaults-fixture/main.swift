// codable-defaults-fixture: a helper process for the crash, fault-injection and multi-process tests.
//
// It opens one store file with the public API and acts on it. Every line it prints is written with a single
// `write(2)` call and ends in "\n", so a reader sees whole lines as soon as they are printed.
//
// USAGE
//   codable-defaults-fixture writer PATH [--seconds S] [--generations N]
//   codable-defaults-fixture serve PATH [--save-mode manual|immediate|idle:MS] [--unreadable-file throw|move-aside]
//                                       [--env-prefix P] [--fallback FILE] [--fallback-dir DIR] [--secret-dir DIR]
//   codable-defaults-fixture state G
//   codable-defaults-fixture standard [-greeting VALUE]   (Defaults.standard: prints its path and greeting)
//
// WRITER MODE (the crash test)
//   Opens PATH (`.manual` save mode), reads the integer key "generation" (0 when absent) as G0 and prints
//   `start G0`. Then for G = G0+1, G0+2, ... it makes the store hold exactly `state(G)` (sets and removes
//   keys), calls `save()`, and after each successful flush prints `ack G`. It stops after S seconds
//   (default 60) or N generations, printing `done G`. A failed flush prints `error JSON` (see below) and
//   exits with status 2. The state of a generation depends only on G (see `WriterState`):
//     "generation": G
//     "blob":       "g<G>-" followed by (G * 997) % 6000 letters "b"
//     "kII" (II = 00...11), present when (G / (I + 1) + I) % 3 != 0:
//                   "g<G>-k<I>-" followed by (G * 7 + I * 13) % 200 letters "x"
//   All values are ASCII without escapes. `state G` prints that state as one JSON object on one line, for
//   a harness that would rather not recompute it.
//
// REKEY MODE (the key rotation crash test)
//   `rekey PATH KEYFILE1 KEYFILE2 [--seconds S]` opens PATH with the encryption key of KEYFILE1, stores the secret
//   keys "s0" ... "s9" = "secret-<I>" where they are empty, saves, and prints `ready`. Then, until S seconds
//   passed (default 60), it re-encrypts every secret with KEYFILE2's key and prints `ack 2`, then with KEYFILE1's
//   and prints `ack 1`, and so on. A failure prints `error TEXT` and exits with status 2.
//
// SERVE MODE (command mode, for multi-process and fault-injection tests)
//   Opens PATH (save mode `manual` unless given; an unreadable file throws unless `--unreadable-file
//   move-aside`; with the layers given: an environment override with prefix P, a fallback JSON file, a
//   fallback directory, a secret fallback directory, in that order) and prints `ready PID`; what opening reports to the error handler (a `fileMovedAside`
//   notice, say) comes first, as `error JSON` lines. Then reads commands, one per line,
//   from standard input and answers each with exactly one line, in order:
//     set KEY JSON      -> ok                      stores the JSON value (any JSON text) under KEY
//     remove KEY        -> ok                      removes KEY's stored value
//     flush             -> ok | error JSON         writes pending changes durably
//     reload            -> ok | error JSON         re-reads the file (other processes' writes)
//     discard           -> ok                      forgets the changes not yet written
//     moveaside         -> moved PATH | none | error JSON
//                                                  `moveAsideUnreadableFile()`: where the file went, or
//                                                  none when it parses; what it reports to the error
//                                                  handler comes first, as `error JSON` lines
//     get KEY           -> value KEY JSON | none KEY
//     read KEY          -> value KEY JSON | none KEY   the effective value (any domain or layer), not only stored
//     source KEY        -> source KEY TEXT          `source(forKey:)`: which domain or layer supplies it
//     checked KEY TYPE  -> value KEY JSON | error JSON   the loud typed read (`value(for:)`) of KEY as TYPE:
//                                                  int, double, string or strings ([String])
//     keys              -> keys K1 K2 ...          the stored keys, in file order
//     observe KEY       -> ok                      then, whenever KEY's value changes (a set here, or
//                                                  another process's write seen at a flush or reload):
//                                                  changed KEY JSON | changed KEY none   (asynchronously)
//     increment KEY N   -> ok | error JSON         N times `modify(.count-like Int key KEY) { $0 += 1 }`, each
//                                                  one atomic, durable update of the file
//     echo TEXT         -> echo TEXT               a marker, e.g. to synchronize or to find a point in a log
//     pid               -> pid PID
//     quit              -> bye                     exits with status 0 (pending changes are then written
//                                                  as at any normal exit)
//   `changed` lines are events, not answers: they can arrive at any time, also between a command and its
//   answer, so a reader that observes should set them aside while it waits for an answer.
//   Anything else answers `error {"code":"usage",...}`. KEY is one word (no spaces); JSON is the rest of
//   the line. End of input exits like `quit` (without printing `bye`).
//
// ERRORS
//   `error JSON` carries a `DefaultsError` as a JSON object on one line:
//     {"code":"writeFailed","errno":5,"path":"/dir/settings.json","message":"...","description":"..."}
//   with `errno` and `path` null when the error has none. If the store cannot be opened, the fixture
//   prints `error JSON` and exits with status 1. Bad usage exits with status 64.

import CodableDefaults
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes whole lines to standard output, one `write(2)` per line, from any thread.
final class Output: Sendable {
    private let lock = NSLock()

    /// Prints `line` and a newline with one `write` call. Failures end the process: the harness is gone.
    func line(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        lock.lock()
        defer { lock.unlock() }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                write(1, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { exit(3) }
            offset += written
        }
    }
}

let output = Output()

/// One line of compact JSON for a value the fixture prints.
func json(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    do {
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    } catch {
        return "\"<unencodable: \(error)>\""
    }
}

/// The `error JSON` line for a store error.
func errorLine(_ error: DefaultsError) -> String {
    var fields: [String: JSONValue] = [
        "code": .string(error.code.rawValue),
        "message": .string(error.message),
        "description": .string(error.description),
        "errno": error.errno.map { .number(JSONNumber(Int($0))) } ?? .null,
        "path": error.path.map { .string($0) } ?? .null,
    ]
    if let key = error.key { fields["key"] = .string(key) }
    return "error " + json(fields)
}

/// The `error JSON` line for a usage problem.
func usageLine(_ message: String) -> String {
    "error " + json(["code": "usage", "message": message])
}

/// Prints a usage error and exits with status 64.
func usage(_ message: String) -> Never {
    output.line(usageLine(message))
    exit(64)
}

/// The writer's state for each generation: a function of the generation number only.
enum WriterState {
    /// Every key the writer may store.
    static let universe: [String] = ["blob", "generation"] + (0..<12).map { keyName($0) }

    /// The name of the writer's `index`th small key: `k00` to `k11`.
    static func keyName(_ index: Int) -> String { index < 10 ? "k0\(index)" : "k\(index)" }

    /// The keys and values the store holds after generation `generation` was flushed.
    static func state(_ generation: Int) -> [String: JSONValue] {
        var values: [String: JSONValue] = [
            "generation": .number(JSONNumber(generation)),
            "blob": .string("g\(generation)-" + String(repeating: "b", count: (generation &* 997) % 6000)),
        ]
        for index in 0..<12 where (generation / (index + 1) + index) % 3 != 0 {
            values[keyName(index)] = .string(
                "g\(generation)-k\(index)-" + String(repeating: "x", count: (generation &* 7 + index * 13) % 200))
        }
        return values
    }
}

/// Opens the store at `path`, or prints the error and exits with status 1. Errors reported to the store's
/// handler, from opening on, are printed as `error JSON` lines.
func open(
    _ path: String, saveMode: Defaults.SaveMode, options: Defaults.Options = .default,
    overrides: [Defaults.Layer]? = nil, fallbacks: [Defaults.Layer]? = nil
) -> Defaults {
    do {
        return try Defaults(
            url: URL(fileURLWithPath: path), saveMode: saveMode, options: options, overrides: overrides,
            fallbacks: fallbacks
        ) { error in
            output.line(errorLine(error))
        }
    } catch {
        output.line(errorLine(error))
        exit(1)
    }
}

/// The crash test's writer: flushes one generation after another and acknowledges each.
/// The rotation test's writer: see REKEY MODE at the top.
func runRekey(path: String, keys: [String], seconds: Double) -> Never {
    let sources = keys.map { Defaults.EncryptionKey.file(URL(fileURLWithPath: $0)) }
    let defaults: Defaults
    do {
        defaults = try Defaults(
            url: URL(fileURLWithPath: path), saveMode: .manual, options: .init(encryptionKey: sources[0]))
        for index in 0..<10 {
            let key = Defaults.Key<String>("s\(index)", default: "", secret: true)
            if try defaults.value(for: key).isEmpty { try defaults.set("secret-\(index)", for: key) }
        }
        try defaults.save()
    } catch {
        output.line("error \(error)")
        exit(2)
    }
    output.line("ready")
    let deadline = Date().addingTimeInterval(seconds)
    var next = 1
    while Date() < deadline {
        do {
            try defaults.reencryptSecrets(with: sources[next])
        } catch {
            output.line("error \(error)")
            exit(2)
        }
        output.line("ack \(next + 1)")
        next = 1 - next
    }
    exit(0)
}

func runWriter(path: String, seconds: Double, generations: Int) -> Never {
    let defaults = open(path, saveMode: .manual)
    let start = defaults.integer(forKey: "generation")
    output.line("start \(start)")
    let deadline = Date().addingTimeInterval(seconds)
    var generation = start
    while generation - start < generations && Date() < deadline {
        generation += 1
        let state = WriterState.state(generation)
        for name in WriterState.universe {
            if let value = state[name] {
                defaults.set(value, forKey: name)
            } else {
                defaults.removeValue(forKey: name)
            }
        }
        do {
            try defaults.save()
        } catch {
            output.line(errorLine(error))
            exit(2)
        }
        output.line("ack \(generation)")
    }
    output.line("done \(generation)")
    exit(0)
}

/// Parses a JSON value given as text.
func parseJSON(_ text: String) -> JSONValue? {
    do {
        return try JSONValue(parsing: text)
    } catch {
        return nil
    }
}

/// The command mode: answers one line per command read from standard input.
func runServer(
    path: String, saveMode: Defaults.SaveMode, options: Defaults.Options, overrides: [Defaults.Layer]?,
    fallbacks: [Defaults.Layer]?
) -> Never {
    let defaults = open(path, saveMode: saveMode, options: options, overrides: overrides, fallbacks: fallbacks)
    var tokens: [ObservationToken] = []
    output.line("ready \(getpid())")
    while let line = readLine(strippingNewline: true) {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard let command = parts.first else { continue }
        let key = parts.count > 1 ? parts[1] : nil
        switch (command, key) {
        case ("set", let key?):
            let text = parts.count > 2 ? parts[2] : ""
            guard let value = parseJSON(text) else {
                output.line(usageLine("not a JSON value: \(text)"))
                continue
            }
            defaults.set(value, forKey: key)
            output.line("ok")
        case ("remove", let key?):
            defaults.removeValue(forKey: key)
            output.line("ok")
        case ("flush", nil):
            do {
                try defaults.save()
                output.line("ok")
            } catch {
                output.line(errorLine(error))
            }
        case ("discard", nil):
            defaults.discardUnsavedChanges()
            output.line("ok")
        case ("moveaside", nil):
            do {
                let moved = try defaults.moveAsideUnreadableFile()
                output.line(moved.map { "moved \($0.path)" } ?? "none")
            } catch {
                output.line(errorLine(error))
            }
        case ("reload", nil):
            do {
                try defaults.reload()
                output.line("ok")
            } catch {
                output.line(errorLine(error))
            }
        case ("get", let key?):
            if defaults.hasStoredValue(forKey: key), let value = defaults.object(forKey: key) {
                output.line("value \(key) \(json(value))")
            } else {
                output.line("none \(key)")
            }
        case ("read", let key?):
            output.line(defaults.object(forKey: key).map { "value \(key) \(json($0))" } ?? "none \(key)")
        case ("source", let key?):
            output.line("source \(key) \(defaults.source(forKey: key))")
        case ("checked", let key?):
            do {
                switch parts.count > 2 ? parts[2] : "" {
                case "int": output.line("value \(key) \(try defaults.value(for: Defaults.Key<Int>(key, default: 0)))")
                case "double":
                    output.line("value \(key) \(try defaults.value(for: Defaults.Key<Double>(key, default: 0)))")
                case "string":
                    output.line(
                        "value \(key) \(json(JSONValue.string(try defaults.value(for: Defaults.Key<String>(key, default: "")))))"
                    )
                case "strings":
                    let list = try defaults.value(for: Defaults.Key<[String]>(key, default: []))
                    output.line("value \(key) \(json(JSONValue.array(list.map { JSONValue.string($0) })))")
                default: output.line(usageLine("unknown type: \(line)"))
                }
            } catch {
                output.line(errorLine(error))
            }
        case ("keys", nil):
            output.line((["keys"] + defaults.keys).joined(separator: " "))
        case ("observe", let key?):
            tokens.append(
                defaults.observe(forKey: key) { change in
                    output.line("changed \(key) " + (change.newValue.map { json($0) } ?? "none"))
                })
            output.line("ok")
        case ("increment", let key?):
            let counter = Defaults.Key<Int>(key, default: 0)
            do {
                for _ in 0..<(Int(parts.count > 2 ? parts[2] : "1") ?? 1) { try defaults.modify(counter) { $0 += 1 } }
                output.line("ok")
            } catch let error as DefaultsError {
                output.line(errorLine(error))
            } catch {
                output.line(usageLine("\(error)"))
            }
        case ("echo", _):
            output.line(line)
        case ("pid", nil):
            output.line("pid \(getpid())")
        case ("quit", nil):
            output.line("bye")
            exit(0)
        default:
            output.line(usageLine("unknown command: \(line)"))
        }
    }
    withExtendedLifetime(tokens) {}
    exit(0)
}

/// The value following `flag` in `arguments`, if any.
func option(_ flag: String, in arguments: ArraySlice<String>) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.endIndex else { return nil }
    return arguments[index + 1]
}

let arguments = CommandLine.arguments.dropFirst()
guard let mode = arguments.first else { usage("usage: codable-defaults-fixture writer|serve|state ...") }
let rest = arguments.dropFirst()

switch mode {
case "state":
    guard let text = rest.first, let generation = Int(text) else { usage("usage: state GENERATION") }
    output.line(json(WriterState.state(generation)))
    exit(0)
case "rekey":
    guard rest.count >= 3 else { usage("usage: rekey PATH KEYFILE KEYFILE [--seconds S]") }
    let keyFiles = Array(rest.dropFirst().prefix(2))
    runRekey(
        path: rest[rest.startIndex], keys: keyFiles, seconds: option("--seconds", in: rest).flatMap(Double.init) ?? 60)
case "writer":
    guard let path = rest.first else { usage("usage: writer PATH [--seconds S] [--generations N]") }
    let seconds = option("--seconds", in: rest).flatMap(Double.init) ?? 60
    let generations = option("--generations", in: rest).flatMap(Int.init) ?? Int.max
    runWriter(path: path, seconds: seconds, generations: generations)
case "serve":
    guard let path = rest.first else {
        usage(
            "usage: serve PATH [--save-mode manual|immediate|idle:MS] [--unreadable-file throw|move-aside] "
                + "[--history-saves N]")
    }
    var saveMode = Defaults.SaveMode.manual
    if let text = option("--save-mode", in: rest) {
        if text == "manual" {
            saveMode = .manual
        } else if text == "immediate" {
            saveMode = .immediate
        } else if text.hasPrefix("idle:"), let milliseconds = Int(text.dropFirst(5)) {
            saveMode = .afterIdle(.milliseconds(milliseconds))
        } else {
            usage("unknown save mode: \(text)")
        }
    }
    var options = Defaults.Options.default
    switch option("--unreadable-file", in: rest) {
    case nil, "throw": break
    case "move-aside": options.unreadableFile = .moveAside
    case let text?: usage("unknown unreadable-file policy: \(text)")
    }
    if let text = option("--history-saves", in: rest) {
        guard let saves = Int(text) else { usage("not a number of saves: \(text)") }
        options.history.maximumSaves = saves
    }
    var overrides: [Defaults.Layer]?
    var fallbacks: [Defaults.Layer]?
    if let prefix = option("--env-prefix", in: rest) { overrides = [.environment(prefix: prefix)] }
    if let file = option("--fallback", in: rest) { fallbacks = (fallbacks ?? []) + [.file(URL(fileURLWithPath: file))] }
    if let directory = option("--fallback-dir", in: rest) {
        fallbacks = (fallbacks ?? []) + [.directory(URL(fileURLWithPath: directory))]
    }
    if let directory = option("--secret-dir", in: rest) {
        fallbacks = (fallbacks ?? []) + [.directory(URL(fileURLWithPath: directory), secret: true)]
    }
    runServer(path: path, saveMode: saveMode, options: options, overrides: overrides, fallbacks: fallbacks)
case "standard":
    // Uses `Defaults.standard` as a program would: its file, its argument domain from this command line.
    // Prints the standard store's path, then `greeting` as the argument domain makes it, then stores
    // `launched` = true and flushes.
    let defaults = Defaults.standard
    output.line("path \(defaults.url?.path ?? "none")")
    output.line("greeting \(defaults.string(forKey: "greeting") ?? "none")")
    defaults.set(true, forKey: "launched")
    do {
        try defaults.save()
        output.line("ok")
    } catch {
        output.line("error \(error)")
        exit(2)
    }
    exit(0)
default:
    usage("unknown mode: \(mode)")
}
