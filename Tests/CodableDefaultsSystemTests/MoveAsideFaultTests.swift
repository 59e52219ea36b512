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

/// Moving an unreadable file aside when the directory's `fsync` after the rename fails, for real, under
/// `strace -e inject=…`: the rename happened, so the move counts as done, as a save's rename does. The store
/// keeps (or, at opening, starts with) the state that matches the disk, the `fileMovedAside` notice is
/// reported, and the next save or flush retries the directory's flush.
@Suite struct MoveAsideFaultTests {
    /// What the test writes over the store file to break it.
    static let broken = "{ \"a\": 1, broken"

    /// The store file after `a` = 1 and `b` = "kept" were saved.
    static let saved = "{\n  \"a\": 1,\n  \"b\": \"kept\"\n}\n"

    /// `moveAsideUnreadableFile()` whose directory flush fails once: the store keeps its values and writes
    /// them in the file's place (that write flushes the directory again, and succeeds), so the call returns
    /// the moved file's URL and nothing is lost.
    @Test(.enabled(if: Strace.isUsable, Strace.unavailableMessage))
    func explicitMoveWhoseDirectoryFlushFailsKeepsTheState() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let path = DurableFile.canonicalPath(url.path)
        func script(_ session: MoveAsideSession) async throws -> [String] {
            #expect(try await session.ask("set a 1") == ["ok"])
            #expect(try await session.ask("set b \"kept\"") == ["ok"])
            #expect(try await session.ask("flush") == ["ok"])
            try write(Self.broken, to: url)
            #expect(try await session.ask(StraceSession.marker) == [StraceSession.marker])
            return try await session.ask("moveaside")
        }
        let clean = try await MoveAsideSession(fixture: fixture, store: url, in: dir, inject: nil)
        _ = try await script(clean)
        let cleanLog = try await clean.finish()
        let target = try #require(
            cleanLog.firstCall(after: StraceSession.marker, matching: Target.directoryFsync.matches),
            "the clean run flushes no directory after the marker")

        let faulty = try await MoveAsideSession(
            fixture: fixture, store: url, in: dir, inject: "fsync:error=EIO:when=\(cleanLog.ordinal(of: target))",
            fresh: true)
        let lines = try await script(faulty)
        let aside = try #require(try dir.contents().first { $0.hasPrefix("settings.json.corrupt-") })
        let asidePath = DurableFile(path: path).directory + "/" + aside
        #expect(lines.last == "moved \(asidePath)", "the move counts as done: \(lines)")
        let notices = lines.dropLast().compactMap(FixtureError.init)
        #expect(notices.map(\.code) == ["fileMovedAside"], "\(lines)")
        #expect(notices.first?.path == asidePath)
        // The broken file is kept, and the state is written in its place; memory still holds it.
        #expect(try text(dir.file(aside)) == Self.broken)
        #expect(try text(url) == Self.saved, "the state is written in the moved file's place")
        #expect(try await faulty.ask("get a") == ["value a 1"])
        #expect(try await faulty.ask("reload") == ["ok"])
        #expect(try await faulty.ask("get b") == ["value b \"kept\""], "re-reading the file loses nothing")
        let log = try await faulty.finish()
        let injected = log.calls.filter(\.injected)
        #expect(injected.count == 1 && injected.allSatisfy(Target.directoryFsync.matches), "\(injected.map(\.line))")
        let hit = try #require(injected.first)
        let later = log.calls.first { $0.index > hit.index && $0.isMain && Target.directoryFsync.matches($0) }
        #expect(later.map { !$0.injected } ?? false, "the write that follows flushes the directory again")
    }

    /// `moveAsideUnreadableFile()` on a store with nothing to write, whose directory flush fails twice (after
    /// the rename, and when the call retries it): the call throws `notDurable` naming the file and the move,
    /// and the next flush, with nothing to write, flushes the directory again and succeeds.
    @Test(.enabled(if: Strace.isUsable, Strace.unavailableMessage))
    func explicitMoveWhoseDirectoryFlushKeepsFailingThrowsNotDurable() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let path = DurableFile.canonicalPath(url.path)
        func script(_ session: MoveAsideSession) async throws -> [String] {
            try write(Self.broken, to: url)
            #expect(try await session.ask(StraceSession.marker) == [StraceSession.marker])
            return try await session.ask("moveaside")
        }
        let clean = try await MoveAsideSession(fixture: fixture, store: url, in: dir, inject: nil)
        _ = try await script(clean)
        let cleanLog = try await clean.finish()
        let target = try #require(
            cleanLog.firstCall(after: StraceSession.marker, matching: Target.directoryFsync.matches))
        let ordinal = cleanLog.ordinal(of: target)

        let faulty = try await MoveAsideSession(
            fixture: fixture, store: url, in: dir, inject: "fsync:error=EIO:when=\(ordinal)..\(ordinal + 1)",
            fresh: true)
        let lines = try await script(faulty)
        let aside = try #require(try dir.contents().first { $0.hasPrefix("settings.json.corrupt-") })
        let errors = lines.compactMap(FixtureError.init)
        #expect(errors.map(\.code) == ["fileMovedAside", "notDurable"], "\(lines)")
        let notDurable = try #require(errors.last)
        #expect(notDurable.errno == EIO && notDurable.path == path, "\(notDurable.description)")
        #expect(notDurable.description.contains("may not survive a power loss"), "\(notDurable.description)")
        #expect(try text(dir.file(aside)) == Self.broken)
        #expect(!FileManager.default.fileExists(atPath: url.path), "an empty state writes no file")
        #expect(try await faulty.ask("keys") == ["keys"])
        #expect(try await faulty.ask("echo retry") == ["echo retry"])
        #expect(try await faulty.ask("flush") == ["ok"], "the next flush flushes the directory and succeeds")
        let log = try await faulty.finish()
        let injected = log.calls.filter(\.injected)
        #expect(injected.count == 2 && injected.allSatisfy(Target.directoryFsync.matches), "\(injected.map(\.line))")
        let retry = log.firstCall(after: "echo retry", matching: Target.directoryFsync.matches)
        #expect(retry.map { !$0.injected } ?? false, "the flush retries the directory's fsync")
    }

    /// Opening with `.moveAside` when the directory's flush after the rename fails: the store opens empty (the
    /// file is moved), reports the `fileMovedAside` notice and `notDurable`, and the first flush retries the
    /// directory's flush.
    @Test(.enabled(if: Strace.isUsable, Strace.unavailableMessage))
    func openingMoveWhoseDirectoryFlushFailsOpensAndRetries() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let path = DurableFile.canonicalPath(url.path)
        try write(Self.broken, to: url)
        let clean = try await MoveAsideSession(
            fixture: fixture, store: url, in: dir, inject: nil, arguments: ["--unreadable-file", "move-aside"])
        #expect(clean.reported.map(\.code) == ["fileMovedAside"])
        let cleanLog = try await clean.finish()
        let target = try #require(
            cleanLog.calls.first { $0.isMain && Target.directoryFsync.matches($0) },
            "the clean run flushes no directory")

        let faulty = try await MoveAsideSession(
            fixture: fixture, store: url, in: dir, inject: "fsync:error=EIO:when=\(cleanLog.ordinal(of: target))",
            fresh: true, arguments: ["--unreadable-file", "move-aside"]
        ) {
            try write(Self.broken, to: url)
        }
        let aside = try #require(try dir.contents().first { $0.hasPrefix("settings.json.corrupt-") })
        let asidePath = DurableFile(path: path).directory + "/" + aside
        #expect(faulty.reported.map(\.code) == ["fileMovedAside", "notDurable"], "\(faulty.reported)")
        #expect(faulty.reported.first?.path == asidePath)
        let notDurable = try #require(faulty.reported.last)
        #expect(notDurable.errno == EIO && notDurable.path == path, "\(notDurable.description)")
        #expect(
            notDurable.description.contains("was moved aside to \(asidePath), but flushing its directory"),
            "\(notDurable.description)")
        #expect(try text(dir.file(aside)) == Self.broken)
        #expect(try await faulty.ask("keys") == ["keys"], "the store started empty")
        #expect(try await faulty.ask("echo retry") == ["echo retry"])
        #expect(try await faulty.ask("flush") == ["ok"], "the first flush flushes the directory and succeeds")
        #expect(try await faulty.ask("set a 1") == ["ok"])
        #expect(try await faulty.ask("flush") == ["ok"])
        #expect(try text(url) == "{\n  \"a\": 1\n}\n")
        let log = try await faulty.finish()
        let injected = log.calls.filter(\.injected)
        #expect(injected.count == 1 && injected.allSatisfy(Target.directoryFsync.matches), "\(injected.map(\.line))")
        let retry = log.firstCall(after: "echo retry", matching: Target.directoryFsync.matches)
        #expect(retry.map { !$0.injected } ?? false, "the flush retries the directory's fsync")
    }
}

/// The fixture in command mode under strace, for scripts whose commands may print `error JSON` lines (what
/// the store reports to its handler) before their answer.
final class MoveAsideSession {
    private let child: ChildProcess
    private let logPath: String
    /// What opening reported to the error handler, before `ready`.
    let reported: [FixtureError]

    /// Starts `strace … fixture serve STORE ARGUMENTS`; `inject` is strace's `inject=` value, or `nil`. With
    /// `fresh`, every file of `dir` but the logs is removed first, then `prepare` runs.
    init(
        fixture: String, store: URL, in dir: TemporaryDirectory, inject: String?, fresh: Bool = false,
        arguments extra: [String] = [], prepare: () throws -> Void = {}
    ) async throws {
        if fresh {
            for name in try dir.contents() where !name.hasSuffix(".log") {
                try FileManager.default.removeItem(at: dir.file(name))
            }
        }
        try prepare()
        logPath = dir.file(inject == nil ? "clean.strace.log" : "faulty.strace.log").path
        var arguments = ["-f", "-qq", "-y", "-s", "256", "-o", logPath, "-e", "trace=" + Strace.traced]
        if let inject { arguments += ["-e", "inject=" + inject] }
        arguments += [fixture, "serve", store.path] + extra
        child = try ChildProcess(try #require(Strace.path), arguments, stderrPath: dir.file("strace.stderr.log").path)
        var reported: [FixtureError] = []
        while true {
            guard let line = try await child.readLine(timeout: 60) else {
                throw ChildProcessError(description: "the fixture ended before it was ready: \(reported)")
            }
            if line.hasPrefix("ready ") { break }
            guard let error = FixtureError(line) else {
                throw ChildProcessError(description: "the fixture did not start: \(line)")
            }
            if error.code == "writeFailed" || error.code == "invalidJSON" {
                throw ChildProcessError(description: "the fixture could not open the store: \(error.description)")
            }
            reported.append(error)
        }
        self.reported = reported
    }

    /// Sends a command and returns its lines: for `moveaside`, the `fileMovedAside` notices it reported to
    /// the handler, then its answer; for any other command, its answer.
    func ask(_ command: String) async throws -> [String] {
        try child.send(command)
        var lines: [String] = []
        while true {
            guard let line = try await child.readLine(timeout: 60) else {
                throw ChildProcessError(description: "the child ended instead of answering \"\(command)\": \(lines)")
            }
            lines.append(line)
            guard command == "moveaside", let error = FixtureError(line), error.code == "fileMovedAside" else {
                return lines
            }
        }
    }

    /// Ends the fixture and returns the log.
    func finish() async throws -> StraceLog {
        #expect(try await ask("quit") == ["bye"])
        child.closeInput()
        _ = try await child.readToEnd(timeout: 30)
        #expect(try await child.wait(timeout: 30) == .exited(0))
        return try StraceLog(path: logPath)
    }
}
