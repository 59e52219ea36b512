import CodableDefaultsTestSupport
import Foundation
import Testing

/// The process runner of the tests keeps its children's output to itself, so that a passing `swift test`
/// prints nothing of the fixture, the tool, strace or flock.
@Suite struct ChildProcessTests {
    /// Where a process's standard error goes, as the kernel tells it (`/proc/self/fd/2`): a child that
    /// inherited the test's standard error would name the same file, pipe or terminal.
    @Test(.enabled(if: hasProcFileSystem, "needs Linux's /proc/self/fd, where a process's standard error is shown"))
    func aChildDoesNotWriteToTheTestsStandardError() throws {
        let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/2")
        let shell = try #require(findExecutable("sh"))
        let child = try ChildProcess(shell, ["-c", "readlink /proc/self/fd/2"])
        let childs = try #require(try child.readLine(timeout: 30), "the child printed where its fd 2 goes")
        #expect(try child.wait(timeout: 30) == .exited(0))
        #expect(childs != own, "the child's standard error is the test's own: \(own)")
        #expect(childs.hasSuffix(URL(fileURLWithPath: child.stderrPath).lastPathComponent), "\(childs)")
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

    @Test func whatAChildWritesToStandardErrorIsCapturedAndRemovedWithIt() throws {
        let shell = try #require(findExecutable("sh"))
        var child: ChildProcess? = try ChildProcess(shell, ["-c", "echo complaint >&2; echo done"])
        #expect(try child?.readLine(timeout: 30) == "done")
        #expect(try child?.wait(timeout: 30) == .exited(0))
        #expect(try child?.standardError() == "complaint\n")
        let path = try #require(child?.stderrPath)
        child = nil
        #expect(!FileManager.default.fileExists(atPath: path), "the captured standard error is removed")
    }

    @Test func anAnswerThatNeverComesNamesWhatTheChildComplainedOf() throws {
        let shell = try #require(findExecutable("sh"))
        let child = try ChildProcess(shell, ["-c", "read line; echo 'no such command' >&2; exit 3"])
        let error = #expect(throws: ChildProcessError.self) { try child.ask("hello", timeout: 30) }
        #expect(error?.description.contains("no such command") == true, "\(String(describing: error))")
    }
}
