import CodableDefaultsTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process of the etcd tests (an etcd member, an etcdctl command): started with `posix_spawn`, its standard
/// input `/dev/null`, its standard output and error appended to files (never the test's), reaped by this value
/// only. Not thread-safe: its owner serializes calls.
final class EtcdProcess {
    /// The process id.
    let pid: pid_t
    private var status: ProcessExit?

    /// Starts `executable` with `arguments` in the test's environment plus `environment`.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], stdout: String, stderr: String
    )
        throws
    {
        var actions = SpawnFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let result = spawnKeepingOnlyStandardDescriptors(&child, executable, &actions, argv, envp)
        guard result == 0 else {
            throw ChildProcessError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    deinit {
        if status == nil {
            _ = kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = waitpid(pid, &raw, 0)
        }
    }

    /// How the process ended, or `nil` while it runs (does not wait).
    func exitStatus() -> ProcessExit? {
        if let status { return status }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
        let signal = raw & 0x7F
        let ended: ProcessExit = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
        status = ended
        return ended
    }

    /// Sends `signal` to the process while it runs.
    func signal(_ signal: Int32) {
        if exitStatus() == nil { _ = kill(pid, signal) }
    }

    /// Waits until the process ends, at most `timeout` seconds; then kills it with SIGKILL and throws. It polls
    /// with `Task.sleep`, so that it holds no thread of the test's pool.
    @discardableResult
    func wait(timeout: Double) async throws -> ProcessExit {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = exitStatus() { return status }
            if Date() > deadline {
                _ = kill(pid, SIGKILL)
                var raw: Int32 = 0
                _ = waitpid(pid, &raw, 0)
                status = .signaled(SIGKILL)
                throw ChildProcessError(description: "process \(pid) did not end within \(timeout) s; killed it")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// The text of a file, or a note saying why it cannot be read (for failure messages).
func fileText(_ path: String) -> String {
    do {
        return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    } catch {
        return "(cannot read \(path): \(error))"
    }
}

/// How a child process ended (the shared test support's type; Swift Testing has one of the same name).
typealias ProcessExit = CodableDefaultsTestSupport.ExitStatus
