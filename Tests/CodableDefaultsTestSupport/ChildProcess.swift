import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The process runners of the tests that start real processes: the fixture, the tool, strace, flock.

/// Where the package's built executables are (`codable-defaults`, `codable-defaults-fixture`,
/// `codable-defaults-etcd-fixture`): SwiftPM puts them in the build products directory, beside the test bundle.
package enum Fixture {
    /// The directories that may hold the built products, the most likely first: the directory that holds the
    /// running test bundle, found from the binary this code is in, the loaded bundles and the arguments. On Linux
    /// the bundle is an executable (`/proc/self/exe`) in the products directory; on Apple platforms the tests run
    /// inside `X.xctest/Contents/MacOS/X`, loaded by `xctest` or `swiftpm-testing-helper`, whose own path is in
    /// the toolchain.
    static let productDirectories: [URL] = {
        var starts: [URL] = []
        #if canImport(Darwin)
            var image = Dl_info()
            if dladdr(#dsohandle, &image) != 0, let name = image.dli_fname {
                starts.append(URL(fileURLWithPath: String(cString: name)))
            }
            starts += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        #endif
        #if os(Linux)
            if let resolved = realpath("/proc/self/exe", nil) {
                starts.append(URL(fileURLWithPath: String(cString: resolved)))
                free(resolved)
            }
        #endif
        // `xctest X.xctest`, `swiftpm-testing-helper --test-bundle-path X.xctest/Contents/MacOS/X`, or the
        // test executable itself.
        for argument in CommandLine.arguments {
            if let bundle = argument.range(of: ".xctest") {
                starts.append(URL(fileURLWithPath: String(argument[..<bundle.upperBound])))
            }
        }
        if let first = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: first)) }
        var directories: [URL] = []
        for start in starts {
            // From `X.xctest/Contents/MacOS/X` up to the directory that holds `X.xctest`.
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                if !directories.contains(directory) { directories.append(directory) }
                directory.deleteLastPathComponent()
            }
        }
        return directories
    }()

    /// The path of the package's built executable `name`, from the directories of ``productDirectories``.
    ///
    /// - Throws: ``ChildProcessError`` naming the executable, where it was looked for and how to build it.
    package static func locate(_ name: String) throws -> String {
        for directory in productDirectories {
            let path = directory.appendingPathComponent(name).path
            if access(path, X_OK) == 0 { return path }
        }
        let searched = productDirectories.map(\.path).joined(separator: ", ")
        throw ChildProcessError(
            description:
                "the executable \(name) is not built: it is not in any of \(searched) (the directories of the test "
                + "bundle); build it with `swift build --build-tests`")
    }
}

/// How a child process ended.
package enum ExitStatus: Equatable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal killed it.
    case signaled(Int32)

    package var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
    }
}

/// What went wrong talking to a child process.
package struct ChildProcessError: Error, CustomStringConvertible {
    /// What happened.
    package var description: String

    /// An error that says `description`.
    package init(description: String) { self.description = description }
}

// posix_spawn is SPI on tvOS and watchOS (spawn.h: __SPI_AVAILABLE): child processes are for macOS, iOS and Linux.
#if !os(tvOS) && !os(watchOS)

    /// A child process started with `posix_spawn`, with pipes to its standard input and output. Its standard
    /// error goes to `stderrPath`, or to a temporary file of its own that ``standardError()`` reads: never to the
    /// test's, so that a passing `swift test` prints nothing of the children. Every wait is bounded and suspends
    /// the calling task, its blocking part on a thread of its own (``offPool(_:)-(()->Value)``), so that tests
    /// waiting for children never hold the cooperative pool's threads; a child still running when the value goes
    /// away is killed.
    ///
    /// `@unchecked Sendable`: its mutable state (the output buffer, the status) is used by one caller at a time, a
    /// test and the thread that waits for it while the test is suspended; it is not for several tasks at once.
    package final class ChildProcess: @unchecked Sendable {
        /// The child's process id.
        package let pid: pid_t
        /// The file that holds the child's standard error.
        package let stderrPath: String
        /// Whether `stderrPath` is this value's own temporary file, removed when the value goes away.
        private let ownsStderrFile: Bool
        private var input: Int32
        private let output: Int32
        private var buffer: [UInt8] = []
        private var status: ExitStatus?
        private var sawEnd = false

        /// Starts `executable` with `arguments`, in the test's environment plus `environment`.
        package init(
            _ executable: String, _ arguments: [String], environment: [String: String] = [:], stderrPath: String? = nil
        ) throws {
            let inPipe = try makePipe()
            let outPipe: [Int32]
            do {
                outPipe = try makePipe()
            } catch {
                close(inPipe[0])
                close(inPipe[1])
                throw error
            }
            #if canImport(Darwin)
                // A write to a child that has ended is an error (EPIPE), not a SIGPIPE that would end the tests
                // (F_SETNOSIGPIPE, sys/fcntl.h). Linux has no such flag for a pipe.
                _ = fcntl(inPipe[1], F_SETNOSIGPIPE, 1)
            #endif
            var actions = SpawnFileActions()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            let errorPath =
                stderrPath
                ?? FileManager.default.temporaryDirectory
                .appendingPathComponent("CodableDefaultsTests-child-\(UUID().uuidString).stderr").path
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            var merged = ProcessInfo.processInfo.environment
            merged["SWIFT_BACKTRACE"] = "enable=no"
            for (name, value) in environment { merged[name] = value }
            let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                for pointer in argv { free(pointer) }
                for pointer in envp { free(pointer) }
            }
            var child: pid_t = 0
            let result = spawnKeepingOnlyStandardDescriptors(&child, executable, &actions, argv, envp)
            close(inPipe[0])
            close(outPipe[1])
            guard result == 0 else {
                close(inPipe[1])
                close(outPipe[0])
                if stderrPath == nil { unlink(errorPath) }
                throw ChildProcessError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
            }
            pid = child
            self.stderrPath = errorPath
            ownsStderrFile = stderrPath == nil
            input = inPipe[1]
            output = outPipe[0]
        }

        deinit {
            if status == nil {
                sendSignal(pid, SIGKILL)
                var raw: Int32 = 0
                _ = waitpid(pid, &raw, 0)
            }
            if input >= 0 { close(input) }
            close(output)
            if ownsStderrFile { unlink(stderrPath) }
        }

        /// What the child wrote to its standard error so far.
        package func standardError() throws -> String {
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: stderrPath)), as: UTF8.self)
        }

        /// The child's standard error, for a failure message: empty when there is none.
        private var standardErrorNote: String {
            do {
                let text = try standardError()
                return text.isEmpty ? "" : "; its standard error: \(text)"
            } catch {
                return "; its standard error (\(stderrPath)) cannot be read: \(error)"
            }
        }

        /// Sends one line to the child's standard input.
        package func send(_ line: String) throws {
            let bytes = Array((line + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { write(input, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw ChildProcessError(description: "cannot write to the child: errno \(errno)")
                }
                offset += written
            }
        }

        /// Closes the child's standard input (it sees end of input).
        package func closeInput() {
            if input >= 0 { close(input) }
            input = -1
        }

        /// Sends a line and returns the child's next line of output.
        package func ask(_ line: String, timeout: Double = 30) async throws -> String {
            try send(line)
            guard let answer = try await readLine(timeout: timeout) else {
                throw ChildProcessError(
                    description: "the child ended instead of answering \"\(line)\"" + standardErrorNote)
            }
            return answer
        }

        /// The next line of output, or `nil` at end of output.
        ///
        /// - Throws: ``ChildProcessError`` when no whole line arrives within `timeout` seconds.
        package func readLine(timeout: Double) async throws -> String? {
            try await offPool { try self.blockingReadLine(timeout: timeout) }
        }

        /// ``readLine(timeout:)``, blocking the calling thread.
        fileprivate func blockingReadLine(timeout: Double) throws -> String? {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                if sawEnd {
                    guard !buffer.isEmpty else { return nil }
                    defer { buffer.removeAll() }
                    return String(decoding: buffer, as: UTF8.self)
                }
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else {
                    throw ChildProcessError(
                        description:
                            "no output line within \(timeout) s (so far: \(String(decoding: buffer, as: UTF8.self)))"
                            + standardErrorNote
                    )
                }
                var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 1000)) + 1)
                if ready < 0 && errno != EINTR { throw ChildProcessError(description: "poll failed: errno \(errno)") }
                guard ready > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65536)
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
                if count < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    throw ChildProcessError(description: "read failed: errno \(errno)")
                }
                if count == 0 { sawEnd = true }
                buffer.append(contentsOf: chunk[..<count])
            }
        }

        /// ``ask(_:timeout:)``, blocking the calling thread: for code that already runs on a thread of its own.
        package func askBlocking(_ line: String, timeout: Double = 30) throws -> String {
            try send(line)
            guard let answer = try blockingReadLine(timeout: timeout) else {
                throw ChildProcessError(
                    description: "the child ended instead of answering \"\(line)\"" + standardErrorNote)
            }
            return answer
        }

        /// ``readLine(timeout:)``, blocking the calling thread: for code that already runs on a thread of its own.
        package func readLineBlocking(timeout: Double) throws -> String? { try blockingReadLine(timeout: timeout) }

        /// ``wait(timeout:)``, blocking the calling thread: for code that already runs on a thread of its own.
        @discardableResult
        package func waitBlocking(timeout: Double) throws -> ExitStatus {
            if let status { return status }
            return try blockingWait(timeout: timeout)
        }

        /// ``readToEnd(timeout:)``, blocking the calling thread: for code that already runs on a thread of its own.
        package func readToEndBlocking(timeout: Double) throws -> [String] {
            let deadline = Date().addingTimeInterval(timeout)
            var lines: [String] = []
            while let line = try blockingReadLine(timeout: max(0.001, deadline.timeIntervalSinceNow)) {
                lines.append(line)
            }
            return lines
        }

        /// Every remaining line of output, until the child closes it.
        package func readToEnd(timeout: Double) async throws -> [String] {
            try await offPool {
                let deadline = Date().addingTimeInterval(timeout)
                var lines: [String] = []
                while let line = try self.blockingReadLine(timeout: max(0.001, deadline.timeIntervalSinceNow)) {
                    lines.append(line)
                }
                return lines
            }
        }

        /// Sends a signal to the child.
        package func kill(_ signal: Int32) {
            if status == nil { sendSignal(pid, signal) }
        }

        /// Waits for the child to end; kills it with SIGKILL and throws if it has not ended within `timeout` s.
        @discardableResult
        package func wait(timeout: Double) async throws -> ExitStatus {
            if let status { return status }
            return try await offPool { try self.blockingWait(timeout: timeout) }
        }

        /// ``wait(timeout:)``, blocking the calling thread.
        fileprivate func blockingWait(timeout: Double) throws -> ExitStatus {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                var raw: Int32 = 0
                let result = waitpid(pid, &raw, WNOHANG)
                if result == pid {
                    let signal = raw & 0x7F
                    let ended: ExitStatus = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
                    status = ended
                    return ended
                }
                if result < 0 && errno != EINTR {
                    throw ChildProcessError(description: "waitpid failed: errno \(errno)")
                }
                if Date() > deadline {
                    sendSignal(pid, SIGKILL)
                    var ignored: Int32 = 0
                    _ = waitpid(pid, &ignored, 0)
                    status = .signaled(SIGKILL)
                    throw ChildProcessError(description: "the child did not end within \(timeout) s; killed it")
                }
                usleep(1000)
            }
        }
    }

    /// Sends `signal` to process `pid`.
    private func sendSignal(_ pid: pid_t, _ signal: Int32) {
        _ = kill(pid, signal)
    }

    /// A pipe whose two ends are closed on `exec`, so that children started by other tests at the same time do
    /// not inherit them.
    private func makePipe() throws -> [Int32] {
        var ends: [Int32] = [-1, -1]
        #if os(Linux)
            guard linuxPipe2(&ends, O_CLOEXEC) == 0 else {
                throw ChildProcessError(description: "pipe2 failed: \(errno)")
            }
        #else
            guard pipe(&ends) == 0 else { throw ChildProcessError(description: "pipe failed: \(errno)") }
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        #endif
        return ends
    }

    #if os(Linux)
        /// glibc's `pipe2`, which the Glibc module does not export (it is declared only with `_GNU_SOURCE`).
        @_silgen_name("pipe2")
        private func linuxPipe2(_ ends: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32
    #endif

    /// Runs a command to completion (at most `timeout` seconds) and returns its exit status and output; the task
    /// is suspended meanwhile (see ``offPool(_:)-(()->Value)``).
    @discardableResult
    package func runCommand(_ arguments: [String], timeout: Double = 30) async throws -> (
        status: ExitStatus, output: [String]
    ) {
        try await offPool { try runCommandBlocking(arguments, timeout: timeout) }
    }

    /// ``runCommand(_:timeout:)``, blocking the calling thread: only where no task can wait for it, for a command
    /// that ends at once (a `deinit` that unmounts, a lazily computed check whether a program can run).
    @discardableResult
    package func runCommandBlocking(_ arguments: [String], timeout: Double = 30) throws -> (
        status: ExitStatus, output: [String]
    ) {
        guard let executable = findExecutable(arguments[0]) else {
            throw ChildProcessError(description: "\(arguments[0]) is not installed")
        }
        let child = try ChildProcess(executable, Array(arguments.dropFirst()), stderrPath: "/dev/null")
        child.closeInput()
        let deadline = Date().addingTimeInterval(timeout)
        var output: [String] = []
        while let line = try child.blockingReadLine(timeout: max(0.001, deadline.timeIntervalSinceNow)) {
            output.append(line)
        }
        return (try child.blockingWait(timeout: max(0.001, deadline.timeIntervalSinceNow)), output)
    }

#endif

/// The full path of a program found in `PATH` (or the usual system directories), or `nil`.
package func findExecutable(_ name: String) -> String? {
    if name.hasPrefix("/") { return access(name, X_OK) == 0 ? name : nil }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for directory in directories where access(directory + "/" + name, X_OK) == 0 {
        return directory + "/" + name
    }
    return nil
}

#if os(Linux)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Glibc module does not export
    /// (it is declared only with `_GNU_SOURCE`).
    @_silgen_name("posix_spawn_file_actions_addclosefrom_np")
    private func linuxAddCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
#endif

#if canImport(Darwin)
    /// The file actions of `posix_spawn`: a pointer `posix_spawn_file_actions_init` allocates on Apple platforms.
    package typealias SpawnFileActions = posix_spawn_file_actions_t?
#else
    /// The file actions of `posix_spawn`: a structure on Linux.
    package typealias SpawnFileActions = posix_spawn_file_actions_t
#endif

// posix_spawn is SPI on tvOS and watchOS, as above.
#if !os(tvOS) && !os(watchOS)
    /// Runs `posix_spawn` so that the child keeps only the descriptors `actions` gives it (0, 1 and 2): every other
    /// descriptor of the tests' process is closed in it. Without this, a child inherits whatever descriptors other
    /// tests have open at that moment without close-on-exec (Foundation's `Pipe` makes such), and a long-lived child
    /// (an etcd member, a watch) then holds the write end of another test's pipe open: that test's reader never sees
    /// the end of its input. Linux: glibc's `posix_spawn_file_actions_addclosefrom_np`; Apple platforms:
    /// `POSIX_SPAWN_CLOEXEC_DEFAULT` (spawn.h).
    package func spawnKeepingOnlyStandardDescriptors(
        _ child: inout pid_t, _ executable: String, _ actions: inout SpawnFileActions,
        _ argv: [UnsafeMutablePointer<CChar>?], _ envp: [UnsafeMutablePointer<CChar>?]
    ) -> Int32 {
        #if canImport(Darwin)
            var attributes: posix_spawnattr_t? = nil
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
            return posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        #else
            let added = linuxAddCloseFrom(&actions, 3)
            guard added == 0 else { return added }
            return posix_spawn(&child, executable, &actions, nil, argv, envp)
        #endif
    }
#endif
