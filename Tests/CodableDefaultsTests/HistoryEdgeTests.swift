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

/// The history file as other writers, hand edits and the calendar's edges leave it: what a revert reads from it,
/// and what it never does.
@Suite struct HistoryEdgeTests {
    private let volume = Defaults.Key<Double>("volume", default: 0.5)
    private let name = Defaults.Key<String?>("name")

    /// A record of revision `revision` by another writer, as one line of the history file.
    private func recordLine(_ revision: String, changes: String = #"{"name":{"new":"other"}}"#) -> String {
        #"{"revision":\#(revision),"time":"2026-12-05T00:00:00.000Z","pid":1,"user":"u","program":"p","host":"h","#
            + #""kind":"save","changes":\#(changes)}"#
    }

    /// Appends `text` to the file at `url`.
    private func append(_ text: String, to url: URL) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
    }

    #if CODABLE_DEFAULTS_TESTING
        /// An undo whose first look at the history is overtaken by another writer's save (made while the undo waits
        /// for the lock file) takes back that save, the last under the lock, and no other.
        @Test func anUndoOvertakenByAnotherWritersSaveTakesBackOnlyTheLastSaveUnderTheLock() async throws {
            let directory = try TemporaryDirectory()
            let file = directory.file()
            // The undo waits for the lock until the test releases it, whatever the load: the order is the test's
            // signals', not the default timeout's (10 s ran out in a full run under `stress --cpu 2`).
            let defaults = try openFresh(file, options: Defaults.Options(lockTimeout: .seconds(300)))
            defaults[volume] = 0.1
            try await defaults.save()
            defaults[volume] = 0.2
            try await defaults.save()

            // Hold the lock file, as another writer in the middle of its save does.
            let lockPath = DurableFile(path: DurableFile.canonicalPath(file.path)).lockPath
            let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            try #require(flock(descriptor, LOCK_EX) == 0)
            let undone = Recorder<Result<[Defaults.HistoryEntry.Change], DefaultsError>>()
            let thread = Thread {
                do {
                    undone.append(.success(try defaults.undo()))
                } catch let error as DefaultsError {
                    undone.append(.failure(error))
                } catch {
                    Issue.record(error)
                }
            }
            thread.start()
            #expect(await offPool { waitForLockWaiter(defaults) }, "the undo waits for the lock file")
            // The other writer's save, revision 3, under the lock: the file and its record.
            try write(#"{"name":"other","volume":0.2}"# + "\n", to: file)
            try append(recordLine("3") + "\n", to: directory.file(".settings.json.history"))
            flock(descriptor, LOCK_UN)
            #expect(try await eventually { !undone.values.isEmpty })

            let changes = try #require(try undone.values.first?.get())
            #expect(changes == [.init(key: "name", oldValue: .json("other"), newValue: .absent)])
            let reopened = try openFresh(file)
            #expect(reopened[volume] == 0.2, "the save of revision 2 stands")
            #expect(reopened[name] == nil)
            await #expect(try reopened.history().first?.kind == .revert(toRevision: 2))
        }
    #endif

    /// Records a writer spaced as it liked, or with revisions of many digits, are records for the count of
    /// revisions as they are for `history`: the next save goes on from the last.
    @Test func theNextRevisionFollowsTheLastRecordHoweverItIsWritten() throws {
        let directory = try TemporaryDirectory()
        let (defaults, historyFile) = try twoSavesOfVolume(in: directory)
        let spaced = try text(historyFile).replacingOccurrences(of: "\":", with: "\" : ")
            .replacingOccurrences(of: "{\"", with: "{ \"")
        try write(spaced, to: historyFile)
        #expect(try defaults.history().map(\.revision) == [2, 1], "history reads the spaced records")
        let other = try openFresh(directory.file())
        other[volume] = 0.3
        try other.save()
        #expect(try other.history().map(\.revision) == [3, 2, 1])
        // An undo takes back the save of revision 3, not an older one.
        #expect(try other.undo() == [.init(key: "volume", oldValue: .json(0.3), newValue: .json(0.2))])

        try append(recordLine("1000000000000000000") + "\n", to: historyFile)
        let third = try openFresh(directory.file())
        third[volume] = 0.4
        try third.save()
        #expect(try third.history().first?.revision == 1_000_000_000_000_000_001)
    }

    /// A last revision that cannot grow leaves the save standing, unrecorded, and says why; nothing traps.
    @Test func aHistoryAtTheLargestRevisionReportsItsSavesUnrecorded() throws {
        let directory = try TemporaryDirectory()
        let historyFile = directory.file(".settings.json.history")
        try write(recordLine(String(Int.max)) + "\n", to: historyFile)
        let errors = ErrorLog()
        let defaults = try openFresh(directory.file())
        defaults.onError = errors.handler
        defaults[volume] = 0.1
        try defaults.save()
        #expect(try openFresh(directory.file())[volume] == 0.1, "the save stands")
        #expect(errors.errors.contains { $0.path == historyFile.path && $0.message.contains("largest") })
    }

    /// A line whose revision no save can have (0, below 0, the smallest Int64) is no record: `history` skips it
    /// with a notice, and a revert or undo, which cannot say what its save changed, writes nothing and says why.
    @Test(arguments: ["0", "-1", "-9223372036854775808"])
    func aRecordOfARevisionNoSaveCanHaveIsNoRecordAndNothingIsReverted(_ revision: String) throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults[volume] = 0.1
        try defaults.save()
        let historyFile = directory.file(".settings.json.history")
        try append(recordLine(revision) + "\n", to: historyFile)
        let before = try bytes(directory.file())
        #expect(try defaults.history().map(\.revision) == [1])
        #expect(errors.errors.contains { $0.path == historyFile.path && $0.line == 2 })
        for attempt in [
            { try defaults.undo() }, { try defaults.undo(dryRun: true) }, { try defaults.revert(toRevision: 0) },
        ] {
            let error = #expect(throws: DefaultsError.self) { try attempt() }
            #expect(error?.code == .historyUnavailable, "\(String(describing: error))")
            #expect(error?.message.contains("line 2 of \(historyFile.path)") == true, "\(String(describing: error))")
        }
        #expect(try bytes(directory.file()) == before)
    }

    /// A revert past a line of the history that holds no record writes nothing (it cannot say what that save
    /// changed); one to a revision after it works. A last line a crash cut short is only reported.
    @Test func aRevertPastALineThatHoldsNoRecordWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        defaults.onError = ErrorLog().handler
        defaults[volume] = 0.1
        try defaults.save()
        let historyFile = directory.file(".settings.json.history")
        try append("not a record\n", to: historyFile)
        defaults[volume] = 0.2
        defaults[name] = "Ana"
        try defaults.save()
        defaults[volume] = 0.3
        try defaults.save()
        let before = try bytes(directory.file())
        let error = #expect(throws: DefaultsError.self) { try defaults.revert(toRevision: 0) }
        #expect(error?.code == .historyUnavailable && error?.message.contains("line 2 of") == true)
        #expect(try bytes(directory.file()) == before, "no partial revert")
        #expect(try defaults.undo() == [.init(key: "volume", oldValue: .json(0.3), newValue: .json(0.2))])

        // A torn last line (a crash while its record was written): reported, and the undo goes on.
        try append(#"{"revision":9,"ti"#, to: historyFile)
        #expect(try defaults.undo() == [.init(key: "volume", oldValue: .json(0.2), newValue: .json(0.3))])
    }

    /// Two keys whose names differ only in Unicode normalization are two keys to a revert, as to the file.
    @Test func anUndoRestoresKeysThatDifferOnlyInNormalizationEach() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        defaults.set(JSONValue.number(1), forKey: "caf\u{E9}")
        defaults.set(JSONValue.number(2), forKey: "cafe\u{301}")
        try defaults.save()
        defaults.set(JSONValue.number(3), forKey: "caf\u{E9}")
        defaults.set(JSONValue.number(4), forKey: "cafe\u{301}")
        try defaults.save()
        let changes = try defaults.undo()
        #expect(changes.count == 2, "\(changes)")
        let reopened = try openFresh(directory.file())
        #expect(reopened.object(forKey: "caf\u{E9}") == .number(1))
        #expect(reopened.object(forKey: "cafe\u{301}") == .number(2))
    }

    /// Dates at the ends of the calendar, or not a number, neither trap nor shift a millisecond.
    @Test func datesBeyondTheMillisecondsOfAnInt64NeitherTrapNorMisprint() throws {
        #expect(Defaults.HistoryEntry.timeText(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(Defaults.HistoryEntry.timeText(Date(timeIntervalSince1970: -86_400.123)) == "1969-12-30T23:59:59.877Z")
        #expect(
            Defaults.HistoryEntry.timeText(Date(timeIntervalSince1970: 1_764_892_800.789)) == "2025-12-05T00:00:00.789Z"
        )
        for seconds in [1e17, -1e17, .infinity, -.infinity, 9.3e15, -9.3e15] {
            #expect(!Defaults.HistoryEntry.timeText(Date(timeIntervalSince1970: seconds)).isEmpty)
        }
        #expect(Defaults.HistoryEntry.timeText(Date(timeIntervalSince1970: .nan)) == "NaN")

        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        defaults[volume] = 0.1
        try defaults.save()
        #expect(try defaults.revert(to: Date(timeIntervalSince1970: 1e17)).isEmpty, "after every save: no change")
        #expect(try defaults.revert(to: Date(timeIntervalSince1970: .infinity), dryRun: true).isEmpty)
        #expect(
            try defaults.revert(to: Date(timeIntervalSince1970: -1e17), dryRun: true)
                == [.init(key: "volume", oldValue: .json(0.1), newValue: .absent)])
        let error = #expect(throws: DefaultsError.self) { try defaults.revert(to: Date(timeIntervalSince1970: .nan)) }
        #expect(error?.code == .invalidArgument)
    }

    /// Errors of the history file name it as the history file, not as the store file.
    @Test func errorsOfTheHistoryFileNameTheHistoryFile() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        let historyFile = directory.file(".settings.json.history")
        try FileManager.default.createDirectory(at: historyFile, withIntermediateDirectories: false)
        let error = #expect(throws: DefaultsError.self) { try defaults.history() }
        #expect(error?.path == historyFile.path)
        #expect(error?.message.contains("history path is not a regular file") == true, "\(String(describing: error))")
        #expect(error?.message.contains("store") == false, "\(String(describing: error))")
    }

    /// Records larger than the history's byte bound (a value near the store's size limit, old and new) never take
    /// the file past what it can read back: each save is recorded, `history` and `undo` keep working.
    @Test func recordsLargerThanTheBoundKeepTheHistoryReadable() throws {
        let directory = try TemporaryDirectory()
        let options = Defaults.Options(
            maximumFileSize: 100_000, history: .init(maximumSaves: 100, maximumBytes: 1000))
        let errors = ErrorLog()
        let defaults = try openFresh(directory.file(), options: options)
        defaults.onError = errors.handler
        for index in 0..<4 {
            defaults.set(JSONValue.string(String(repeating: "\(index)", count: 99_000)), forKey: "big")
            try defaults.save()
        }
        #expect(errors.errors.isEmpty, "\(errors.errors)")
        let history = try defaults.history()
        #expect(history.first?.revision == 4)
        #expect(try defaults.undo().count == 1)
        let size =
            try FileManager.default.attributesOfItem(atPath: directory.file(".settings.json.history").path)[
                .size] as? Int
        #expect((size ?? .max) < 2 * 198_000, "one record, not all of them: \(String(describing: size))")
    }

    /// A writer with a smaller bound (a tool with the default) never cuts the longer history another writer (the
    /// app) declared: the largest bound any writer declared is kept in the file, and every writer keeps to it.
    @Test func theLargestBoundAnyWriterDeclaredWins() throws {
        let directory = try TemporaryDirectory()
        let app = try openFresh(
            directory.file(), options: Defaults.Options(history: .init(maximumSaves: 1000, maximumBytes: 8 << 20)))
        for index in 1...150 {
            app.set(JSONValue.number(JSONNumber(index)), forKey: "count")
            try app.save()
        }
        let tool = try openFresh(directory.file())
        tool.set(JSONValue.number(0), forKey: "count")
        try tool.save()
        #expect(try tool.history().count == 151)
        #expect(try tool.revert(toRevision: 1, dryRun: true).count == 1, "the oldest undo target is still there")
    }
}
