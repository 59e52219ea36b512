// codable-defaults-etcd-fixture: a helper process for the multi-process tests of the etcd store.
//
// It opens one store on etcd with the public API and acts on commands. Every line it prints is written with a
// single `write(2)` call and ends in "\n", so a reader sees whole lines as soon as they are printed.
//
// USAGE
//   codable-defaults-etcd-fixture ENDPOINTS PREFIX [--save-mode manual|immediate|idle:MS] [--user NAME PASSWORD]
//                                 [--local-copy FILE]
//     ENDPOINTS: comma-separated client URLs (http://127.0.0.1:2379,...). The save mode is `immediate` unless
//     given. With `--user`, the store authenticates as NAME with PASSWORD (etcd's authentication). With
//     `--local-copy`, the store keeps its local copy in FILE (it may open from it with no endpoint answering; the
//     report of that comes as a `reported` line before `ready`).
//
//   Opens the store (`try await Defaults(etcd:prefix:saveMode:username:password:)`) and prints `ready PID`, or
//   `error JSON` and exits with status 1 when it cannot. Then reads commands, one per line, from standard input
//   and answers each with exactly one line, in order:
//     set KEY JSON      -> ok                      stores the JSON value (any JSON text) under KEY
//     remove KEY        -> ok                      removes KEY's stored value
//     get KEY           -> value KEY JSON | none KEY
//     flush             -> ok | error JSON         writes pending changes (acknowledged by etcd)
//     observe KEY       -> ok                      then, whenever KEY's value changes (a set here, or another
//                                                  writer's change seen by the watch):
//                                                  changed KEY JSON | changed KEY none   (asynchronously)
//     increment KEY N   -> ok | error JSON         N times `modify(Int key KEY) { $0 += 1 }`, each one atomic
//     status            -> status stale=BOOL unsent=N   `etcd?.isStale` and `etcd?.unsentChangeCount`
//     echo TEXT         -> echo TEXT               a marker
//     quit              -> bye                     exits with status 0 (pending changes are written first; a
//                                                  failure is printed as a `reported` line)
//   `changed` lines are events, not answers: they can arrive at any time. Anything else answers
//   `error {"code":"usage",...}`. End of input exits like `quit` (without printing `bye`). Errors the store
//   reports to its handler are printed as `reported JSON` lines (events too).
//
//   codable-defaults-etcd-fixture --exit-while-watching ENDPOINT CACERT CERT KEY COUNT MICROSECONDS
//     Starts COUNT watches of the whole cluster through the package's `EtcdClient` with the TLS files CACERT, CERT
//     and KEY, waits MICROSECONDS, and exits with status 0 (`exit`, the watches' TLS handshakes and streams still
//     running): the test of a process that ends while its watches run.
//
// ERRORS
//   `error JSON` carries a `DefaultsError` as `{"code":...,"key":...,"message":...,"description":...}`.

import CodableDefaults
import CodableDefaultsEtcd
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

/// The JSON object of a store error, on one line.
func errorJSON(_ error: DefaultsError) -> String {
    var fields: [String: JSONValue] = [
        "code": .string(error.code.rawValue), "message": .string(error.message),
        "description": .string(error.description),
    ]
    if let key = error.key { fields["key"] = .string(key) }
    return JSONValue.object(fields).description
}

/// The `error JSON` line for a usage problem.
func usageLine(_ message: String) -> String {
    "error " + JSONValue.object(["code": .string("usage"), "message": .string(message)]).description
}

/// Prints a usage error and exits with status 64.
func usage(_ message: String) -> Never {
    output.line(usageLine(message))
    exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--exit-while-watching" {
    guard arguments.count == 7, let count = Int(arguments[5]), let microseconds = UInt32(arguments[6]) else {
        usage("expected --exit-while-watching ENDPOINT CACERT CERT KEY COUNT MICROSECONDS")
    }
    let tls = EtcdTLS(
        certificateAuthorities: URL(fileURLWithPath: arguments[2]), certificate: URL(fileURLWithPath: arguments[3]),
        key: URL(fileURLWithPath: arguments[4]))
    let client: EtcdClient
    do {
        client = try EtcdClient(endpoints: [arguments[1]], tls: tls)
    } catch {
        usage("\(error)")
    }
    for _ in 0..<count {
        let watch = client.watch(prefix: [], startRevision: 0)
        Task.detached {
            do {
                for try await _ in watch {}
            } catch {
                // The exit, not the watch, is under test.
            }
        }
    }
    usleep(microseconds)
    exit(0)
}
guard arguments.count >= 2 else { usage("expected ENDPOINTS PREFIX [--save-mode MODE] [--user NAME PASSWORD]") }
let endpoints = arguments[0].split(separator: ",").compactMap { URL(string: String($0)) }
let prefix = arguments[1]
var saveMode = Defaults.SaveMode.immediate
var user: (name: String, password: String)?
var localCopy: URL?
var options = arguments.dropFirst(2)
while let option = options.popFirst() {
    switch (option, options.first) {
    case ("--save-mode", "manual"): saveMode = .manual
    case ("--save-mode", "immediate"): saveMode = .immediate
    case ("--save-mode", let mode?) where mode.hasPrefix("idle:"):
        guard let milliseconds = Int(mode.dropFirst(5)) else { usage("bad save mode \(mode)") }
        saveMode = .afterIdle(.milliseconds(milliseconds))
    case ("--local-copy", let path?):
        localCopy = URL(fileURLWithPath: path)
    case ("--user", let name?) where options.count >= 2:
        user = (name, options[options.startIndex + 1])
        options = options.dropFirst()
    default: usage("bad option \(option) \(options.first ?? "")")
    }
    options = options.dropFirst()
}

let defaults: Defaults
do {
    defaults = try await Defaults(
        etcd: endpoints, prefix: prefix, saveMode: saveMode, username: user?.name, password: user?.password,
        localCopy: localCopy
    ) { error in
        output.line("reported " + errorJSON(error))
    }
} catch {
    output.line("error " + errorJSON(error))
    exit(1)
}
output.line("ready \(getpid())")

/// Writes pending changes before the process exits (an etcd store is not flushed at exit as a file's is); a
/// failure is printed as a `reported` line.
func flushBeforeExit() {
    do {
        try defaults.save()
    } catch {
        output.line("reported " + errorJSON(error))
    }
}

var tokens: [ObservationToken] = []
while let line = readLine() {
    let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
    switch (parts.first, parts.count > 1 ? parts[1] : nil) {
    case ("set", let key?):
        let text = parts.count > 2 ? parts[2] : ""
        do {
            defaults.set(try JSONValue(parsing: text), forKey: key)
            output.line("ok")
        } catch {
            output.line(usageLine("not a JSON value: \(text)"))
        }
    case ("remove", let key?):
        defaults.removeObject(forKey: key)
        output.line("ok")
    case ("get", let key?):
        output.line(defaults.object(forKey: key).map { "value \(key) \($0)" } ?? "none \(key)")
    case ("flush", nil):
        do {
            try defaults.save()
            output.line("ok")
        } catch {
            output.line("error " + errorJSON(error))
        }
    case ("observe", let key?):
        tokens.append(
            defaults.observe(forKey: key) { change in
                output.line("changed \(key) " + (change.newValue.map { "\($0)" } ?? "none"))
            })
        output.line("ok")
    case ("increment", let key?):
        guard parts.count > 2, let count = Int(parts[2]) else {
            output.line(usageLine("expected increment KEY N"))
            continue
        }
        let counter = Defaults.Key<Int>(key, default: 0)
        do {
            for _ in 0..<count { try defaults.modify(counter) { $0 += 1 } }
            output.line("ok")
        } catch let error as DefaultsError {
            output.line("error " + errorJSON(error))
        } catch {
            output.line(usageLine("\(error)"))
        }
    case ("status", nil):
        output.line("status stale=\(defaults.etcd?.isStale == true) unsent=\(defaults.etcd?.unsentChangeCount ?? 0)")
    case ("echo", _):
        output.line(line)
    case ("quit", nil):
        flushBeforeExit()
        output.line("bye")
        exit(0)
    default:
        output.line(usageLine("unknown command: \(line)"))
    }
}
flushBeforeExit()
