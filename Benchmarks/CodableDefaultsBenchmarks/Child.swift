import CodableDefaults
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Child processes of this same executable, started with the hidden first argument `--child`: a clean
/// process for memory figures, and another process writing to a store for the outside-change latency.
enum Child {
    /// The hidden argument that selects a child mode.
    static let flag = "--child"

    /// Runs a child to completion and returns its standard output; a failed child is an error.
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Files.executablePath())
        process.arguments = [flag] + arguments
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw BenchmarkError("cannot start the child \(arguments.joined(separator: " ")): \(error)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError(
                "the child \(arguments.joined(separator: " ")) failed with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// A child that keeps running and answers one line for each line it is sent.
    final class Session {
        private let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var buffered: [UInt8] = []

        /// Starts the child.
        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: try Files.executablePath())
            process.arguments = [flag] + arguments
            process.standardInput = input
            process.standardOutput = output
            do {
                try process.run()
            } catch {
                throw BenchmarkError("cannot start the child \(arguments.joined(separator: " ")): \(error)")
            }
        }

        /// Sends one line.
        func send(_ line: String) throws {
            do {
                try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                throw BenchmarkError("cannot write to the child: \(error)")
            }
        }

        /// Reads one line (blocking).
        func receive() throws -> String {
            let fd = output.fileHandleForReading.fileDescriptor
            while true {
                if let newline = buffered.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffered[..<newline], as: UTF8.self)
                    buffered.removeSubrange(...newline)
                    return line
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = read(fd, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw BenchmarkError("the child closed its output unexpectedly") }
                buffered.append(contentsOf: chunk[0..<count])
            }
        }

        /// Tells the child to quit and waits for it.
        func finish() throws {
            try send("quit")
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw BenchmarkError("the child failed with status \(process.terminationStatus)")
            }
        }
    }

    /// Runs the child mode named by `arguments` (the arguments after `--child`).
    static func main(_ arguments: [String]) throws {
        switch arguments.first {
        case "memory" where arguments.count == 4:
            try memory(contender: arguments[1], path: arguments[2], key: arguments[3])
        case "writer" where arguments.count == 2:
            try writer(path: arguments[1])
        default:
            throw BenchmarkError("unknown child mode: \(arguments.joined(separator: " "))")
        }
    }

    // MARK: Memory

    /// The contenders of the memory case, by the name the parent passes.
    static let memoryContenders = [
        "CodableDefaults", "file bytes only (Data)", "JSONSerialization.jsonObject",
        "naive: JSONDecoder [String: AnyJSON]",
        "UserDefaults (suite from a plist of the same data)",
    ]

    /// Opens the store at `path` as `contender` does, reads `key`, and prints, in kB: the resident set
    /// before, the peak resident set during, and the resident set after (still holding the store).
    private static func memory(contender: String, path: String, key: String) throws {
        let baseline = try memoryStatus()
        let peakWasReset = resetPeak()
        var held: [Any] = []
        switch contender {
        case memoryContenders[0]:
            let defaults = try Defaults(url: URL(fileURLWithPath: path), saveMode: .manual)
            let value = try defaults.value(for: Defaults.Key<Int>(key, default: -1))
            guard value >= 0 else { throw BenchmarkError("the store at \(path) has no Int at \(key)") }
            held.append(defaults)
        case memoryContenders[1]:
            held.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        case memoryContenders[2]:
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
            guard let dictionary = object as? [String: Any], dictionary[key] is Int else {
                throw BenchmarkError("JSONSerialization found no Int at \(key) in \(path)")
            }
            held.append(dictionary)
        case memoryContenders[3]:
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let dictionary = try JSONDecoder().decode([String: AnyJSON].self, from: data)
            guard case .integer = dictionary[key] else { throw BenchmarkError("naive: no Int at \(key)") }
            held.append(dictionary)
        case memoryContenders[4]:
            // `path` is the suite's name here; its plist was written by the parent.
            guard let defaults = UserDefaults(suiteName: path), defaults.object(forKey: key) != nil else {
                throw BenchmarkError("UserDefaults suite \(path) did not load key \(key)")
            }
            blackHole(defaults.integer(forKey: key))
            held.append(defaults)
        default:
            throw BenchmarkError("unknown memory contender \(contender)")
        }
        let after = try memoryStatus()
        let peak = peakWasReset ? after.peak : max(after.peak, baseline.peak)
        print("\(baseline.resident) \(peak) \(after.resident) \(peakWasReset ? 1 : 0)")
        withExtendedLifetime(held) {}
    }

    /// `VmRSS` and `VmHWM` from `/proc/self/status`, in kB.
    static func memoryStatus() throws -> (resident: Int, peak: Int) {
        let text = String(decoding: try Files.read("/proc/self/status"), as: UTF8.self)
        func field(_ name: String) throws -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
                let value = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
            else { throw BenchmarkError("no \(name) in /proc/self/status") }
            return value
        }
        return (try field("VmRSS"), try field("VmHWM"))
    }

    /// Resets the kernel's peak-resident-set mark (`VmHWM`) to the current resident set; false if the kernel
    /// does not allow it (the peak then includes the process's start, which only overstates it).
    private static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    // MARK: Writer

    /// Opens the store at `path` and, for each line `set N`, sets the key `outside` to N and flushes,
    /// answering `done START END` with the monotonic times around `save()`. Stops at `quit`.
    private static func writer(path: String) throws {
        let defaults = try Defaults(url: URL(fileURLWithPath: path), saveMode: .manual)
        let key = Defaults.Key<Int>("outside", default: 0)
        while let line = readLine() {
            if line == "quit" { return }
            guard line.hasPrefix("set "), let value = Int(line.dropFirst(4)) else {
                throw BenchmarkError("writer: unknown command \(line)")
            }
            defaults[key] = value
            let start = monotonicNanoseconds()
            try defaults.save()
            let end = monotonicNanoseconds()
            print("done \(start) \(end)")
            fflush(nil)
        }
    }
}
