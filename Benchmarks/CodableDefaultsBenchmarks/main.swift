// CodableDefaultsBenchmarks: measures CodableDefaults against Foundation's UserDefaults, the naive
// "encode the whole dictionary and write it after every set" pattern, and the physical references (a
// lock-guarded Dictionary, a raw durable write), in one run. See `--help`.

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The run's environment: a temporary root directory, and `XDG_CONFIG_HOME` inside it for UserDefaults.
enum RunEnvironment {
    /// The variable that holds the run's temporary root once the program has re-executed itself.
    static let rootVariable = "CODABLE_DEFAULTS_BENCH_ROOT"

    /// Returns the run's temporary root. On first entry, makes it, sets `XDG_CONFIG_HOME` to a directory in
    /// it and re-executes the program, because swift-corelibs-foundation reads `XDG_CONFIG_HOME` from the
    /// environment the process started with (a `setenv` in the running process is ignored and UserDefaults
    /// would write to `~/.config`).
    static func prepare() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let root = environment[rootVariable] {
            guard environment["XDG_CONFIG_HOME"] == "\(root)/xdg" else {
                throw BenchmarkError("XDG_CONFIG_HOME is not \(root)/xdg after re-executing")
            }
            return root
        }
        let parent = environment["TMPDIR"] ?? "/tmp"
        let root = try TempDirectory(in: parent, prefix: "codable-defaults-bench").path
        guard mkdir("\(root)/xdg", 0o700) == 0 else { throw BenchmarkError.system("mkdir", "\(root)/xdg") }
        setenv("XDG_CONFIG_HOME", "\(root)/xdg", 1)
        setenv(rootVariable, root, 1)
        let executable = try Files.executablePath()
        execv(executable, CommandLine.unsafeArgv)
        throw BenchmarkError.system("execv", executable)
    }
}

/// Runs the program and returns its exit status.
func runProgram() -> Int32 {
    _ = programStart
    let arguments = Array(CommandLine.arguments.dropFirst())
    let options: Options
    let root: String
    do {
        if arguments.first == Child.flag {
            try Child.main(Array(arguments.dropFirst()))
            return 0
        }
        options = try Options.parse(arguments)
        root = try RunEnvironment.prepare()
    } catch {
        reportFailure(error)
        return 1
    }
    var status: Int32 = 0
    do {
        try runCases(options: options, root: root)
    } catch {
        reportFailure(error)
        status = 1
    }
    do {
        try TempDirectory(existing: root).remove()
    } catch {
        reportFailure(error)
        status = 1
    }
    return status
}

/// Runs the selected cases, prints the table, and writes the JSON and SVG files asked for.
func runCases(options: Options, root: String) throws {
    let scale = options.quick ? Scale.quickScale : Scale.full
    let context = Context(options: options, scale: scale, root: root)
    let date = ISO8601DateFormatter().string(from: Date())
    let machine =
        "\(ProcessInfo.processInfo.activeProcessorCount) cores, "
        + "\(ProcessInfo.processInfo.operatingSystemVersionString)"
    print("CodableDefaults benchmarks — \(date) — \(machine)")
    print(scale.summary)
    print("times are medians per operation; spread = p10 … p90 over the samples\n")

    let started = monotonicNanoseconds()
    let selected = CaseCatalog.all.filter { options.selects($0.id) }
    for (index, entry) in selected.enumerated() {
        progress("[\(index + 1)/\(selected.count)] \(entry.id)")
        try entry.run(context)
    }
    let seconds = Double(monotonicNanoseconds() - started) / 1e9
    print(Report.goalSummary(context.results))
    print("total \(fixed(seconds, 1)) s")

    if let path = options.jsonPath {
        let header: [String: Any] = [
            "date": date, "machine": machine, "quick": options.quick, "total_seconds": seconds,
            "command": CommandLine.arguments.joined(separator: " "),
        ]
        try Report.writeJSON(context.results, header: header, to: path)
        progress("wrote \(path)")
    }
    if let directory = options.svgDirectory {
        let footnote = "\(options.quick ? "quick run" : "full run"), \(date), \(machine)"
        try Charts.write(context.results, to: directory, footnote: footnote)
    }
}

/// Prints a failure on standard error.
func reportFailure(_ error: any Error) {
    FileHandle.standardError.write(Data("CodableDefaultsBenchmarks: error: \(error)\n".utf8))
}

exit(runProgram())
