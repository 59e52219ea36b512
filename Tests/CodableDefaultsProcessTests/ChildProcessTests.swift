import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process runner of the tests keeps its children's output to itself, so that a passing `swift test`
/// prints nothing of the fixture, the tool, strace or flock.
@Suite struct ChildProcessTests {
    /// Where a process's standard error goes, as the kernel tells it (`/proc/self/fd/2`): a child that
    /// inherited the test's standard error would name the same file, pipe or terminal.
    @Test(.enabled(if: hasProcFileSystem, "needs Linux's /proc/self/fd, where a process's standard error is shown"))
    func aChildDoesNotWriteToTheTestsStandardError() async throws {
        let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/2")
        let shell = try #require(findExecutable("sh"))
        let child = try ChildProcess(shell, ["-c", "readlink /proc/self/fd/2"])
        let childs = try #require(try await child.readLine(timeout: 30), "the child printed where its fd 2 goes")
        #expect(try await child.wait(timeout: 30) == .exited(0))
        #expect(childs != own, "the child's standard error is the test's own: \(own)")
        #expect(childs.hasSuffix(URL(fileURLWithPath: child.stderrPath).lastPathComponent), "\(childs)")
    }

    /// A child keeps only its standard descriptors: one another test holds open without close-on-exec (as
    /// Foundation's `Pipe` makes them) is closed in it, so that a long-lived child never holds the write end of
    /// another test's pipe open (that test's reader would wait for an end of input that never comes).
    @Test(.enabled(if: hasProcFileSystem, "needs Linux's /proc/self/fd, where a process's descriptors are listed"))
    func aChildInheritsNoDescriptorButItsStandardOnes() async throws {
        let pipe = Pipe()
        let leaked = pipe.fileHandleForWriting.fileDescriptor
        #expect(fcntl(leaked, F_GETFD) & FD_CLOEXEC == 0, "the test's descriptor is inheritable")
        // The pipe as the kernel names it (`pipe:[INODE]`): the child's descriptors are compared by what they are,
        // not by number (the shell's own descriptors may take any number).
        let pipeName = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(leaked)")
        let shell = try #require(findExecutable("sh"))
        let child = try ChildProcess(
            shell, ["-c", "for f in /proc/$$/fd/*; do readlink \"$f\"; done; echo end"])
        var held: [String] = []
        while let line = try await child.readLine(timeout: 30), line != "end" { held.append(line) }
        #expect(try await child.wait(timeout: 30) == .exited(0))
        #expect(!held.isEmpty, "the child listed its descriptors")
        #expect(!held.contains(pipeName), "the child holds the test's pipe \(pipeName): \(held)")
        try pipe.fileHandleForWriting.close()
    }

    /// The package's executables are found beside the test bundle, and a missing one is an error that says how
    /// to build it.
    @Test func builtExecutablesAreFoundAndAMissingOneSaysHowToBuildIt() throws {
        for name in ["codable-defaults", "codable-defaults-fixture"] {
            let path = try Fixture.locate(name)
            #expect(URL(fileURLWithPath: path).lastPathComponent == name)
        }
        let error = #expect(throws: ChildProcessError.self) { try Fixture.locate("no-such-executable") }
        #expect(error?.description.contains("swift build --build-tests") == true, "\(String(describing: error))")
    }

    @Test func whatAChildWritesToStandardErrorIsCapturedAndRemovedWithIt() async throws {
        let shell = try #require(findExecutable("sh"))
        var child: ChildProcess? = try ChildProcess(shell, ["-c", "echo complaint >&2; echo done"])
        #expect(try await child?.readLine(timeout: 30) == "done")
        #expect(try await child?.wait(timeout: 30) == .exited(0))
        #expect(try child?.standardError() == "complaint\n")
        let path = try #require(child?.stderrPath)
        child = nil
        #expect(!FileManager.default.fileExists(atPath: path), "the captured standard error is removed")
    }

    @Test func anAnswerThatNeverComesNamesWhatTheChildComplainedOf() async throws {
        let shell = try #require(findExecutable("sh"))
        let child = try ChildProcess(shell, ["-c", "read line; echo 'no such command' >&2; exit 3"])
        let error = await #expect(throws: ChildProcessError.self) { try await child.ask("hello", timeout: 30) }
        #expect(error?.description.contains("no such command") == true, "\(String(describing: error))")
    }

    /// Waiting for children holds no thread of the cooperative pool (one per core): with more children waited for
    /// at once than the pool has threads, the task that answers them still runs. Were the waits to block their
    /// threads, it would not run until every wait had timed out, and they would fail.
    @Test func waitsForMoreChildrenThanThePoolHasThreadsLetOtherTasksRun() async throws {
        let shell = try #require(findExecutable("sh"))
        let count = ProcessInfo.processInfo.activeProcessorCount + 4
        let children = try (0..<count).map { _ in try ChildProcess(shell, ["-c", "read line; echo \"got $line\""]) }
        let waiting = Counter()
        let answers = try await withThrowingTaskGroup(of: String?.self) { group in
            for child in children {
                group.addTask {
                    waiting.increment()
                    return try await child.readLine(timeout: 60)
                }
            }
            // Runs on the pool too: once every wait has begun, answer them all.
            group.addTask {
                while waiting.value < count { await Task.yield() }
                for (index, child) in children.enumerated() { try child.send("\(index)") }
                return nil
            }
            var answers: [String] = []
            for try await answer in group { if let answer { answers.append(answer) } }
            return answers
        }
        #expect(answers.sorted() == (0..<count).map { "got \($0)" }.sorted())
        for child in children { #expect(try await child.wait(timeout: 30) == .exited(0)) }
    }
}

/// A count that several tasks raise.
private final class Counter: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var count = 0

    /// The count now.
    var value: Int { lock.withLock { count } }

    /// Raises the count by one.
    func increment() { lock.withLock { count += 1 } }
}
