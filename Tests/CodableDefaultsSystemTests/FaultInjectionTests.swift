import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Each system call of the save path fails once, for real, under `strace -e inject=…`; the save reports an
/// error naming the path and errno, the old file keeps its bytes, no temporary file is left, the change stays
/// pending and the next flush writes it. Plus the order of the save's operations, read from an strace log,
/// and file systems that refuse writes (an immutable directory or file, a read-only mount, a full disk).
///
/// The strace tests need Debian's `strace` (Scripts/reliability.sh installs it) and `ptrace`; they are
/// skipped with a message where either is missing.
@Suite struct FaultInjectionTests {
    @Test(
        .enabled(if: Strace.isUsable, Strace.unavailableMessage),
        arguments: [
            InjectedFault(.temporaryFsync, "EIO", EIO),
            InjectedFault(.temporaryWrite, "ENOSPC", ENOSPC),
            InjectedFault(.temporaryOpen, "EMFILE", EMFILE),
            InjectedFault(.temporaryOpen, "EACCES", EACCES),
            InjectedFault(.rename, "EXDEV", EXDEV),
            InjectedFault(.rename, "EACCES", EACCES),
            InjectedFault(.rename, "EROFS", EROFS),
            InjectedFault(.rename, "EBUSY", EBUSY),
            InjectedFault(.temporaryClose, "EIO", EIO),
        ])
    func failedSystemCallLosesNothing(_ fault: InjectedFault) async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let path = DurableFile.canonicalPath(url.path)

        // Pass 1, no fault: find which call of the system call, counted on the main thread, is the target.
        let clean = try await StraceSession(fixture: fixture, store: url, in: dir, inject: nil)
        let (cleanLog, cleanAnswer) = try await clean.runFaultScript()
        #expect(cleanAnswer == "ok")
        let target = try #require(
            cleanLog.firstCall(after: StraceSession.marker, matching: fault.target.matches),
            "the clean run has no \(fault.target) call after the marker")
        let ordinal = cleanLog.ordinal(of: target)

        // Pass 2: the same session with that call failing.
        let injection = "\(target.name):error=\(fault.errorName):when=\(ordinal)"
        let faulty = try await StraceSession(fixture: fixture, store: url, in: dir, inject: injection, fresh: true)
        let oldBytes = try await faulty.prepare()
        let answer = try await faulty.ask("flush")
        let error = try #require(FixtureError(answer), "the flush should fail, it answered: \(answer)")
        #expect(error.code == "writeFailed", "\(error.description)")
        #expect(error.errno == fault.errorNumber, "\(error.description)")
        #expect(error.path == path, "\(error.description)")

        // Nothing on disk changed, no temporary file is left, the change is still pending.
        #expect(try bytes(url) == oldBytes, "the old file's bytes are unchanged")
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])
        #expect(try await faulty.ask("get b") == "value b \"pending\"")
        #expect(try await faulty.ask("flush") == "ok")
        #expect(try text(url) == "{\n  \"a\": 1,\n  \"b\": \"pending\"\n}\n", "the next flush writes the change")
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])
        let log = try await faulty.finish()

        // The injection hit the intended call, and the temporary file was discarded after it.
        let injected = log.calls.filter(\.injected)
        #expect(injected.count == 1, "one injected call: \(injected.map(\.line))")
        let hit = try #require(injected.first)
        #expect(fault.target.matches(hit), "the injected call is the target: \(hit.line)")
        let retryOpen = log.calls.first { $0.index > hit.index && Target.temporaryOpen.matches($0) && !$0.injected }
        #expect(retryOpen != nil, "the next flush opens a temporary file")
        if fault.target != .temporaryOpen, let temporary = log.temporaryName(of: hit) {
            let unlinked = log.calls.contains {
                $0.index > hit.index && ($0.name == "unlink" || $0.name == "unlinkat") && $0.line.contains(temporary)
            }
            #expect(unlinked, "the temporary file \(temporary) is unlinked after the failure")
            #expect(retryOpen.map { !$0.line.contains(temporary) } ?? false, "the retry uses a new temporary name")
            if fault.target == .temporaryFsync {
                let fsyncedAgain = log.calls.contains {
                    $0.index > hit.index && $0.name.hasSuffix("sync") && $0.line.contains(temporary)
                }
                #expect(!fsyncedAgain, "a failed fsync is not retried on the same temporary file")
            }
        }
        testLog(
            "fault injection: \(target.name) -> \(fault.errorName): \(error.description) (recovered on the next flush)")
    }

    /// Once the rename succeeded the change is saved, whatever happens to the directory's flush after it:
    /// memory and file agree, nothing is left to discard and nothing is written twice. The flush throws
    /// `notDurable`, and the next flush (with nothing else to write) retries the directory's fsync.
    @Test(
        .enabled(if: Strace.isUsable, Strace.unavailableMessage),
        arguments: [InjectedFault(.directoryFsync, "EIO", EIO), InjectedFault(.directoryOpen, "EMFILE", EMFILE)])
    func failedDirectoryFlushSavesTheChangeAndIsRetried(_ fault: InjectedFault) async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let path = DurableFile.canonicalPath(url.path)
        let clean = try await StraceSession(fixture: fixture, store: url, in: dir, inject: nil)
        let (cleanLog, _) = try await clean.runFaultScript()
        let target = try #require(cleanLog.firstCall(after: StraceSession.marker, matching: fault.target.matches))

        let injection = "\(target.name):error=\(fault.errorName):when=\(cleanLog.ordinal(of: target))"
        let faulty = try await StraceSession(fixture: fixture, store: url, in: dir, inject: injection, fresh: true)
        _ = try await faulty.prepare()
        let answer = try await faulty.ask("flush")
        let error = try #require(FixtureError(answer), "the flush should fail, it answered: \(answer)")
        #expect(error.code == "notDurable" && error.errno == fault.errorNumber, "\(error.description)")
        #expect(error.path == path, "\(error.description)")
        #expect(error.description.contains("the changes were written to \(path), but"), "\(error.description)")
        #expect(error.description.contains("they may not survive a power loss"), "\(error.description)")
        // The rename happened: the file holds the change, and so does memory; a discard has nothing to undo.
        let saved = "{\n  \"a\": 1,\n  \"b\": \"pending\"\n}\n"
        #expect(try text(url) == saved)
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])
        #expect(try await faulty.ask("discard") == "ok")
        #expect(try await faulty.ask("get b") == "value b \"pending\"", "the change counts as saved")
        #expect(try await faulty.ask(StraceSession.marker) == StraceSession.marker)
        #expect(try await faulty.ask("flush") == "ok", "the next flush flushes the directory and succeeds")
        #expect(try text(url) == saved)
        let log = try await faulty.finish()
        let injected = log.calls.filter(\.injected)
        #expect(injected.count == 1 && injected.allSatisfy(fault.target.matches), "\(injected.map(\.line))")
        let hit = try #require(injected.first)
        let retry = log.calls.first { $0.index > hit.index && $0.isMain && Target.directoryFsync.matches($0) }
        #expect(retry.map { !$0.injected } ?? false, "the directory's fsync is retried")
        let secondWrite = log.calls.contains { $0.index > hit.index && Target.temporaryOpen.matches($0) }
        #expect(!secondWrite, "the saved change is not written a second time")
    }

    /// The command-line tool under the same fault: the file holds the change, and `write` warns and exits
    /// with 5 rather than saying it failed.
    @Test(.enabled(if: Strace.isUsable, Strace.unavailableMessage))
    func toolWhoseDirectoryFlushFailsWarnsAndExitsWithFive() async throws {
        let tool = try Fixture.locate("codable-defaults")
        let strace = try #require(Strace.path)
        func run(_ dir: TemporaryDirectory, inject: String?) async throws -> (ExitStatus, String, StraceLog) {
            let log = dir.file("strace.log").path
            var arguments = ["-f", "-qq", "-y", "-o", log, "-e", "trace=" + Strace.traced]
            if let inject { arguments += ["-e", "inject=" + inject] }
            arguments += [tool, "write", dir.file().path, "a", "1"]
            let stderr = dir.file("stderr.log")
            let child = try ChildProcess(strace, arguments, stderrPath: stderr.path)
            child.closeInput()
            _ = try await child.readToEnd(timeout: 60)
            let status = try await child.wait(timeout: 60)
            return (status, try text(stderr), try StraceLog(path: log))
        }
        let cleanDir = try TemporaryDirectory()
        let (cleanStatus, _, cleanLog) = try await run(cleanDir, inject: nil)
        #expect(cleanStatus == .exited(0))
        let target = try #require(cleanLog.calls.first { $0.isMain && Target.directoryFsync.matches($0) })

        let dir = try TemporaryDirectory()
        let (status, stderr, log) = try await run(dir, inject: "fsync:error=EIO:when=\(cleanLog.ordinal(of: target))")
        #expect(status == .exited(5), "\(stderr)")
        #expect(stderr.hasPrefix("codable-defaults: warning: the change was written but is not confirmed durable"))
        #expect(stderr.contains("may not survive a power loss"), "\(stderr)")
        #expect(try text(dir.file()) == "{\n  \"a\": 1\n}\n", "the file holds the change")
        #expect(log.calls.filter(\.injected).allSatisfy(Target.directoryFsync.matches))
        #expect(log.calls.filter(\.injected).count == 1)
    }

    @Test(
        .enabled(if: Strace.isUsable, Strace.unavailableMessage),
        arguments: [
            InjectedFault(.temporaryOpen, "EINTR", EINTR), InjectedFault(.temporaryWrite, "EINTR", EINTR),
        ])
    func interruptedCallIsRetried(_ fault: InjectedFault) async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let clean = try await StraceSession(fixture: fixture, store: url, in: dir, inject: nil)
        let (cleanLog, _) = try await clean.runFaultScript()
        let target = try #require(cleanLog.firstCall(after: StraceSession.marker, matching: fault.target.matches))

        let injection = "\(target.name):error=EINTR:when=\(cleanLog.ordinal(of: target))"
        let faulty = try await StraceSession(fixture: fixture, store: url, in: dir, inject: injection, fresh: true)
        _ = try await faulty.prepare()
        #expect(try await faulty.ask("flush") == "ok", "EINTR is retried, not reported")
        #expect(try text(url) == "{\n  \"a\": 1,\n  \"b\": \"pending\"\n}\n")
        #expect(try dir.contents().filter { $0.hasSuffix(".tmp") } == [])
        let log = try await faulty.finish()
        let injected = log.calls.filter(\.injected)
        #expect(injected.count == 1 && injected.allSatisfy(fault.target.matches), "\(injected.map(\.line))")
    }

    @Test(.enabled(if: Strace.isUsable, Strace.unavailableMessage))
    func saveSyscallsRunInTheDurableOrder() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let path = DurableFile.canonicalPath(url.path)
        let directory = DurableFile(path: path).directory
        let session = try await StraceSession(fixture: fixture, store: url, in: dir, inject: nil)
        let (log, answer) = try await session.runFaultScript()
        #expect(answer == "ok")

        let open = try #require(log.firstCall(after: StraceSession.marker, matching: Target.temporaryOpen.matches))
        let temporary = try #require(log.temporaryName(of: open))
        #expect(open.line.contains("O_CREAT") && open.line.contains("O_EXCL"), "\(open.line)")
        #expect(open.line.contains("O_NOFOLLOW") && open.line.contains("O_CLOEXEC"), "\(open.line)")
        #expect(open.line.contains("0600"), "\(open.line)")
        let after = log.calls.filter { $0.index > open.index && $0.isMain }
        func first(_ description: String, _ predicate: (StraceCall) -> Bool) throws -> StraceCall {
            guard let call = after.first(where: predicate) else {
                throw ChildProcessError(description: "no \(description) after \(open.line)")
            }
            return call
        }
        let write = try first("write(temp)") { $0.name == "write" && $0.line.contains(temporary) }
        let fsync = try first("fsync(temp)") { $0.name.hasSuffix("sync") && $0.line.contains(temporary) }
        let close = try first("close(temp)") { $0.name == "close" && $0.line.contains(temporary) }
        let rename = try first("rename(temp, path)") {
            $0.name.hasPrefix("rename") && $0.line.contains(temporary) && $0.line.contains("\"\(path)\"")
        }
        let openDirectory = try first("open(directory)") {
            $0.index > rename.index && $0.name.hasPrefix("open") && $0.line.contains("\"\(directory)\"")
                && $0.line.contains("O_DIRECTORY")
        }
        let fsyncDirectory = try first("fsync(directory)") {
            $0.index > openDirectory.index && $0.name == "fsync" && $0.line.contains("<\(directory)>")
        }
        let unlock = after.first { $0.name == "flock" && $0.line.contains("LOCK_UN") }
        let lock = log.calls.last { $0.index < open.index && $0.name == "flock" && $0.line.contains("LOCK_EX") }
        #expect(write.index < fsync.index && fsync.index < close.index && close.index < rename.index)
        #expect(rename.index < openDirectory.index && openDirectory.index < fsyncDirectory.index)
        #expect(lock != nil, "the save holds the lock file")
        #expect(
            unlock.map { $0.index > fsyncDirectory.index } ?? true, "the lock is held until the directory is synced")
        let writes = after.filter {
            $0.index < fsync.index && $0.name.hasPrefix("write") && $0.line.contains(temporary)
        }
        #expect(!writes.isEmpty && writes.allSatisfy { !$0.line.contains("= -1") })
        testLog(
            "save order: open(O_EXCL|O_NOFOLLOW) -> \(writes.count) write -> fsync -> close -> rename -> "
                + "open(dir) -> fsync(dir), as strace saw it")
    }

    // MARK: File systems that refuse writes

    @Test func fileWhereTheDirectoryShouldBeIsAClearErrorAndLosesNothing() throws {
        let dir = try TemporaryDirectory()
        let blocker = dir.file("not-a-directory")
        try write("I am a file", to: blocker)
        let url = blocker.appendingPathComponent("settings.json")
        let defaults = try openFresh(url)
        defaults[.count] = 7
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed)
        #expect(error?.errno == ENOTDIR)
        #expect(error?.path?.hasPrefix(blocker.path) == true)
        #expect(try text(blocker) == "I am a file")
        #expect(try dir.contents() == ["not-a-directory"])
        #expect(defaults.hasStoredValue(for: .count), "the change is still pending")

        try FileManager.default.removeItem(at: blocker)
        try defaults.save()
        #expect(try openFresh(url)[.count] == 7)
    }

    /// The unsaved change of ``discardedChangesAreNotWrittenByALaterSave(_:)``.
    enum DiscardedChange: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `count` set to a new value.
        case set
        /// `count` removed.
        case removal

        var testDescription: String { rawValue }
    }

    /// A failed write leaves the assembled bytes holding the new value; a discard (or a revert) must not let
    /// a later save write them. A removal whose save failed, then discarded: the restored value must reach the
    /// next save (a rebuild of the order had dropped it).
    @Test(
        .enabled(if: FileSystemTools.canMakeImmutable, FileSystemTools.chattrMessage),
        arguments: DiscardedChange.allCases)
    func discardedChangesAreNotWrittenByALaterSave(_ change: DiscardedChange) async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 1
        defaults[.volume] = 0.1
        try await defaults.save()

        try FileSystemTools.setImmutable(dir.path, true)
        defer { FileSystemTools.clearImmutable(dir.path) }
        switch change {
        case .set: defaults[.count] = 2
        case .removal: defaults.reset(.count)
        }
        #expect(throws: DefaultsError.self) { try defaults.save() }
        defaults.discardUnsavedChanges()
        try FileSystemTools.setImmutable(dir.path, false)
        #expect(defaults[.count] == 1, "memory says the discard restored count")

        defaults[.volume] = 0.2
        try await defaults.save()
        #expect(try text(url) == "{\n  \"count\": 1,\n  \"volume\": 0.2\n}\n")
        #expect(try openFresh(url)[.count] == 1, "count survives a restart")
    }

    /// What ``immutableDirectoryOrStoreFileIsAClearErrorAndLosesNothing(_:)`` makes immutable.
    enum ImmutableTarget: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The store's directory: no temporary file can be made in it, nor renamed into it.
        case directory
        /// The store file itself: it cannot be replaced.
        case storeFile = "store file"

        var testDescription: String { rawValue }
    }

    /// A directory or store file made immutable (`chattr +i`, which holds for root too) fails the save with an
    /// error naming errno and path; the file keeps its bytes, no temporary file is left, and the change is saved
    /// once the attribute is cleared.
    @Test(
        .enabled(if: FileSystemTools.canMakeImmutable, FileSystemTools.chattrMessage),
        arguments: ImmutableTarget.allCases)
    func immutableDirectoryOrStoreFileIsAClearErrorAndLosesNothing(_ target: ImmutableTarget) async throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try await defaults.save()
        let before = try bytes(url)
        let listing = try dir.contents()

        let immutable = target == .directory ? dir.path : url.path
        try FileSystemTools.setImmutable(immutable, true)
        defer { FileSystemTools.clearImmutable(immutable) }
        defaults[.count] = 2
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed)
        switch target {
        case .directory:
            #expect(error?.errno == EPERM || error?.errno == EACCES, "\(String(describing: error))")
            #expect(error?.path != nil)
        case .storeFile:
            #expect(error?.errno == EPERM, "\(String(describing: error))")
            #expect(error?.path == url.path)
        }
        #expect(try bytes(url) == before)
        #expect(try dir.contents() == listing, "no temporary file is left")

        try FileSystemTools.setImmutable(immutable, false)
        try await defaults.save()
        #expect(try openFresh(url)[.count] == 2)
    }

    @Test(.enabled(if: FileSystemTools.canMountTmpfs, FileSystemTools.mountMessage))
    func readOnlyFileSystemIsAClearErrorAndLosesNothing() async throws {
        let dir = try TemporaryDirectory()
        let mount = try FileSystemTools.Mount(in: dir, size: "256k")
        let url = URL(fileURLWithPath: mount.path).appendingPathComponent("settings.json")
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try await defaults.save()
        let before = try bytes(url)

        try mount.remount(readOnly: true)
        defaults[.count] = 2
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed)
        #expect(error?.errno == EROFS, "\(String(describing: error))")
        #expect(error?.path?.hasPrefix(mount.path) == true)
        #expect(try bytes(url) == before)

        try mount.remount(readOnly: false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: mount.path).filter { $0.hasSuffix(".tmp") } == [])
        try await defaults.save()
        #expect(try openFresh(url)[.count] == 2)
    }

    @Test(.enabled(if: FileSystemTools.canMountTmpfs, FileSystemTools.mountMessage))
    func fullDiskIsAClearErrorAndLosesNothing() async throws {
        let dir = try TemporaryDirectory()
        let mount = try FileSystemTools.Mount(in: dir, size: "64k")
        let url = URL(fileURLWithPath: mount.path).appendingPathComponent("settings.json")
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try await defaults.save()
        let before = try bytes(url)
        func temporaries() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: mount.path).filter { $0.hasSuffix(".tmp") }
        }

        // A value larger than the whole file system.
        defaults[.count] = 2
        defaults.set(String(repeating: "x", count: 100_000), forKey: "huge")
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .writeFailed)
        #expect(error?.errno == ENOSPC, "\(String(describing: error))")
        #expect(error?.path == url.path)
        #expect(try bytes(url) == before)
        #expect(try temporaries() == [])

        // A disk filled by something else: a small save fails too, and succeeds once there is room.
        defaults.removeValue(forKey: "huge")
        let filler = mount.path + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0)
        let chunk = [UInt8](repeating: 0x66, count: 4096)
        while chunk.withUnsafeBytes({ systemWrite(fd, $0.baseAddress!, $0.count) }) > 0 {}
        close(fd)
        let fullError = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(fullError?.errno == ENOSPC, "\(String(describing: fullError))")
        #expect(try bytes(url) == before)
        #expect(try temporaries() == [])
        #expect(defaults[.count] == 2)

        unlink(filler)
        try await defaults.save()
        let reopened = try openFresh(url)
        #expect(reopened[.count] == 2)
        #expect(!reopened.hasStoredValue(forKey: "huge"))
    }
}

// MARK: - strace sessions

/// A fault to inject: which call of the save path fails, and with what errno.
struct InjectedFault: Sendable, CustomTestStringConvertible {
    /// The call that fails.
    var target: Target
    /// The errno's name, as strace spells it.
    var errorName: String
    /// The errno's value.
    var errorNumber: Int32

    init(_ target: Target, _ errorName: String, _ errorNumber: Int32) {
        self.target = target
        self.errorName = errorName
        self.errorNumber = errorNumber
    }

    var testDescription: String { "\(target) -> \(errorName)" }
}

/// A system call of the save path.
enum Target: String, Sendable {
    case temporaryOpen = "open(temp)"
    case temporaryWrite = "write(temp)"
    case temporaryFsync = "fsync(temp)"
    case temporaryClose = "close(temp)"
    case rename = "rename(temp, path)"
    case directoryFsync = "fsync(directory)"
    case directoryOpen = "open(directory)"

    /// Whether a logged call is this one.
    func matches(_ call: StraceCall) -> Bool {
        switch self {
        case .temporaryOpen: call.name.hasPrefix("open") && call.firstArgumentsMention(".tmp\"")
        case .temporaryWrite: call.name == "write" && call.firstArgumentsMention(".tmp>")
        case .temporaryFsync: (call.name == "fsync" || call.name == "fdatasync") && call.firstArgumentsMention(".tmp>")
        case .temporaryClose: call.name == "close" && call.firstArgumentsMention(".tmp>")
        case .rename: call.name.hasPrefix("rename") && call.firstArgumentsMention(".tmp\"")
        case .directoryFsync:
            call.name == "fsync" && !call.firstArgumentsMention(".tmp>") && !call.firstArgumentsMention(".lock>")
                && !call.firstArgumentsMention(".json>")
        case .directoryOpen: call.name.hasPrefix("open") && call.line.contains("O_DIRECTORY")
        }
    }
}

/// Whether strace is installed and can trace here.
enum Strace {
    /// strace's path, if installed.
    static let path: String? = findExecutable("strace")

    /// Whether strace can trace and inject faults here (it is installed and `ptrace` is allowed).
    static let isUsable: Bool = {
        guard isLinux, path != nil else { return false }
        do {
            let result = try runCommandBlocking(
                [
                    "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=getppid", "-e", "inject=getppid:retval=0",
                    "/bin/true",
                ], timeout: 30)
            return result.status == .exited(0)
        } catch {
            return false
        }
    }()

    /// Why the strace tests are skipped.
    static var unavailableMessage: Comment {
        guard isLinux else { return "needs Linux: strace injects faults into the system calls of the save" }
        return path == nil
            ? "strace is not installed (apt-get install -y strace; Scripts/reliability.sh does it)"
            : "strace cannot trace here (ptrace refused)"
    }

    /// The system calls the sessions trace (injection needs the injected call to be traced).
    static let traced = "openat,open,write,fsync,fdatasync,close,rename,renameat,renameat2,unlink,unlinkat,fchmod,flock"
}

/// The fixture in command mode, run under strace, following one fixed script.
final class StraceSession {
    /// The line the script echoes just before the flush that may fail.
    static let marker = "echo fault-injection-marker"

    private let child: ChildProcess
    private let logPath: String
    private let store: URL

    /// Starts `strace … fixture serve STORE`; `inject` is strace's `inject=` value, or `nil`.
    init(fixture: String, store: URL, in dir: TemporaryDirectory, inject: String?, fresh: Bool = false) async throws {
        if fresh {
            for name in try dir.contents() where !name.hasSuffix(".log") {
                try FileManager.default.removeItem(at: dir.file(name))
            }
        }
        self.store = store
        logPath = dir.file(inject == nil ? "clean.strace.log" : "faulty.strace.log").path
        var arguments = ["-f", "-qq", "-y", "-s", "256", "-o", logPath, "-e", "trace=" + Strace.traced]
        if let inject { arguments += ["-e", "inject=" + inject] }
        arguments += [fixture, "serve", store.path]
        child = try ChildProcess(
            try #require(Strace.path), arguments, stderrPath: dir.file("strace.stderr.log").path)
        let ready = try await child.readLine(timeout: 60)
        guard ready?.hasPrefix("ready ") == true else {
            throw ChildProcessError(description: "the fixture did not start: \(ready ?? "no output")")
        }
    }

    /// Sends a command and returns the answer.
    func ask(_ command: String) async throws -> String { try await child.ask(command, timeout: 60) }

    /// Writes the first version of the file and makes the change the next flush will write. Returns the
    /// file's bytes.
    func prepare() async throws -> [UInt8] {
        #expect(try await ask("set a 1") == "ok")
        #expect(try await ask("flush") == "ok")
        let old = try bytes(store)
        #expect(try await ask("set b \"pending\"") == "ok")
        #expect(try await ask(Self.marker) == Self.marker)
        return old
    }

    /// Runs the whole script without checks between steps; returns the log and the answer to the flush.
    func runFaultScript() async throws -> (StraceLog, String) {
        _ = try await prepare()
        let answer = try await ask("flush")
        return await (try finish(), answer)
    }

    /// Ends the fixture and returns the log.
    func finish() async throws -> StraceLog {
        #expect(try await ask("quit") == "bye")
        child.closeInput()
        _ = try await child.readToEnd(timeout: 30)
        #expect(try await child.wait(timeout: 30) == .exited(0))
        return try StraceLog(path: logPath)
    }
}

/// One line of an strace log.
struct StraceCall {
    /// Its position in the log.
    var index: Int
    /// The thread that made it.
    var pid: Int
    /// Whether it was made by the traced program's main thread.
    var isMain: Bool
    /// The system call's name.
    var name: String
    /// The whole line.
    var line: String
    /// Whether strace injected a fault into it.
    var injected: Bool { line.contains("(INJECTED)") }

    /// Whether the arguments before the first `, ` after the first one, or the first two, contain `text`.
    func firstArgumentsMention(_ text: String) -> Bool {
        guard let open = line.firstIndex(of: "(") else { return false }
        let arguments = line[line.index(after: open)...]
        let firstTwo = arguments.split(separator: ", ", maxSplits: 2, omittingEmptySubsequences: false).prefix(2)
        return firstTwo.contains { $0.contains(text) }
    }
}

/// An strace log written with `-f -y -o`.
struct StraceLog: CustomTestStringConvertible {
    /// The calls that started (a call interrupted by another thread's is logged once, as "unfinished").
    var calls: [StraceCall]
    /// Where the log is.
    var path: String

    /// How a failed expectation shows the log: by its path, not its hundreds of lines.
    var testDescription: String { "strace log \(path) (\(calls.count) calls)" }

    init(path: String) throws {
        self.path = path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var calls: [StraceCall] = []
        var mainPID: Int?
        for line in text.split(separator: "\n").map(String.init) {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2, let pid = Int(fields[0]) else { continue }
            // strace pads short pids with spaces.
            let rest = fields[1].drop { $0 == " " }
            guard !rest.hasPrefix("<..."), !rest.hasPrefix("+++"), !rest.hasPrefix("---"),
                let paren = rest.firstIndex(of: "(")
            else { continue }
            if mainPID == nil { mainPID = pid }
            calls.append(
                StraceCall(
                    index: calls.count, pid: pid, isMain: pid == mainPID, name: String(rest[..<paren]), line: line))
        }
        self.calls = calls
    }

    /// The first call of the main thread after the write of `marker` that satisfies `predicate`.
    func firstCall(after marker: String, matching predicate: (StraceCall) -> Bool) -> StraceCall? {
        guard let mark = calls.first(where: { $0.name == "write" && $0.line.contains("\"\(marker)\\n\"") }) else {
            return nil
        }
        return calls.first { $0.index > mark.index && $0.isMain && predicate($0) }
    }

    /// Which call of its system call `call` is on its thread, counting from 1 (strace's `when=`).
    func ordinal(of call: StraceCall) -> Int {
        calls.filter { $0.index <= call.index && $0.pid == call.pid && $0.name == call.name }.count
    }

    /// The temporary file's path a call names (`….tmp`), if any.
    func temporaryName(of call: StraceCall) -> String? {
        guard let end = call.line.range(of: ".tmp") else { return nil }
        let head = call.line[..<end.lowerBound]
        guard let start = head.lastIndex(where: { $0 == "\"" || $0 == "<" }) else { return nil }
        return String(call.line[call.line.index(after: start)..<end.upperBound])
    }
}

/// An `error JSON` answer of the fixture.
struct FixtureError: CustomStringConvertible {
    var code: String
    var errno: Int32?
    var path: String?
    var description: String

    init?(_ answer: String) {
        guard answer.hasPrefix("error ") else { return nil }
        let object: [String: JSONValue]
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: Data(answer.dropFirst(6).utf8))
        } catch {
            return nil
        }
        guard case .string(let code)? = object["code"] else { return nil }
        self.code = code
        if case .number(let number)? = object["errno"], let value = number.intValue { errno = Int32(value) }
        if case .string(let path)? = object["path"] { self.path = path }
        if case .string(let text)? = object["description"] { description = text } else { description = answer }
    }
}

// MARK: - File system tools

/// `chattr` and `mount`, which work for root where plain permission bits do not.
enum FileSystemTools {
    /// Whether `chattr +i` works on the temporary directory's file system.
    static let canMakeImmutable: Bool = {
        // chattr is e2fsprogs' (Apple systems have chflags, whose flags differ).
        guard isLinux, getuid() == 0, findExecutable("chattr") != nil else { return false }
        do {
            let dir = try TemporaryDirectory()
            let probe = dir.file("probe").path
            try write("probe", to: URL(fileURLWithPath: probe))
            try setImmutable(probe, true)
            try setImmutable(probe, false)
            return true
        } catch {
            return false
        }
    }()

    /// Why the `chattr` tests are skipped.
    static let chattrMessage: Comment = {
        #if os(Linux)
            return "needs root and chattr +i on the temporary directory's file system (root ignores mode bits)"
        #else
            return "needs Linux: chattr +i (e2fsprogs) makes a file immutable even for root"
        #endif
    }()

    /// Whether a small tmpfs can be mounted here.
    static let canMountTmpfs: Bool = {
        // Apple systems have no tmpfs.
        guard isLinux, getuid() == 0, findExecutable("mount") != nil else { return false }
        do {
            let dir = try TemporaryDirectory()
            _ = try Mount(in: dir, size: "64k")
            return true
        } catch {
            return false
        }
    }()

    /// Why the mount tests are skipped.
    static let mountMessage: Comment = {
        #if os(Linux)
            return "needs root and permission to mount a tmpfs (mount -t tmpfs -o size=64k)"
        #else
            return "needs Linux: mounts a small tmpfs, read-only or full"
        #endif
    }()

    /// Sets or clears the immutable attribute.
    static func setImmutable(_ path: String, _ on: Bool) throws {
        let result = try runCommandBlocking(["chattr", on ? "+i" : "-i", path])
        guard result.status == .exited(0) else {
            throw ChildProcessError(description: "chattr failed on \(path): \(result.status)")
        }
    }

    /// Clears the immutable attribute, recording an issue if that fails.
    static func clearImmutable(_ path: String) {
        do { try setImmutable(path, false) } catch { Issue.record("cannot clear the immutable attribute: \(error)") }
    }

    /// A tmpfs mounted for one test on `<directory>/mnt`, unmounted when the value goes away (before the
    /// temporary directory it holds on to is removed).
    final class Mount {
        /// The mount point.
        let path: String
        /// The directory holding the mount point; kept alive until the file system is unmounted.
        private let directory: TemporaryDirectory

        /// Creates `<directory>/mnt` and mounts a tmpfs of `size` on it.
        init(in directory: TemporaryDirectory, size: String) throws {
            self.directory = directory
            let path = directory.file("mnt").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let result = try runCommandBlocking(["mount", "-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", path])
            guard result.status == .exited(0) else {
                throw ChildProcessError(description: "mount failed: \(result.status)")
            }
            self.path = path
        }

        /// Remounts read-only or read-write.
        func remount(readOnly: Bool) throws {
            let result = try runCommandBlocking(["mount", "-o", readOnly ? "remount,ro" : "remount,rw", path])
            guard result.status == .exited(0) else {
                throw ChildProcessError(description: "remount failed: \(result.status)")
            }
        }

        deinit {
            do { try runCommandBlocking(["umount", "-l", path]) } catch {}
        }
    }
}
