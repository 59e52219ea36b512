import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The history of a store file: what each save changed, and reverting it.
@Suite struct HistoryTests {
    private let volume = Defaults.Key<Double>("volume", default: 0.5)
    private let name = Defaults.Key<String?>("name")
    private let secret = Defaults.Key<String?>("token", secret: true)

    private func historyText(_ directory: TemporaryDirectory) throws -> String {
        try text(directory.file(".settings.json.history"))
    }

    @Test func eachSaveRecordsWhatItChangedWhenAndByWhom() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        let before = Date()
        defaults[volume] = 0.8
        defaults[name] = "Ana"
        try defaults.save()
        defaults[volume] = 0.9
        defaults[name] = nil
        try defaults.save()
        // A save that changes no value records nothing.
        defaults[volume] = 0.9
        try defaults.save()

        let history = try defaults.history()
        #expect(history.map(\.revision) == [2, 1])
        #expect(
            history[0].changes == [
                .init(key: "name", oldValue: .json("Ana"), newValue: .absent),
                .init(key: "volume", oldValue: .json(0.8), newValue: .json(0.9)),
            ])
        #expect(
            history[1].changes == [
                .init(key: "name", oldValue: .absent, newValue: .json("Ana")),
                .init(key: "volume", oldValue: .absent, newValue: .json(0.8)),
            ])
        #expect(history.allSatisfy { $0.kind == .save })
        let author = history[0].author
        #expect(author.processID == getpid())
        #expect(author.program == ProcessInfo.processInfo.processName)
        #expect(!author.user.isEmpty && !author.host.isEmpty)
        #expect(history[1].date.timeIntervalSince(before) > -1 && history[0].date.timeIntervalSinceNow < 1)

        let named = try defaults.history(forKey: "name")
        #expect(named.map(\.revision) == [2, 1])
        #expect(named.allSatisfy { $0.changes.map(\.key) == ["name"] })
        // The file is JSON Lines, one record a save, readable with any JSON tool.
        let lines = try historyText(directory).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("{\"revision\":1,\"time\":\""))
        for line in lines { #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any]) }
    }

    @Test func undoOfTheStoreAndOfAKeyIsANewChangeObserversAreToldOf() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        defaults[volume] = 0.8
        defaults[name] = "Ana"
        try defaults.save()
        defaults[volume] = 0.1
        defaults[name] = "Bo"
        try defaults.save()
        let told = Locked<[Double]>([])
        let observer = defaults.observe(volume) { change in told.withLock { $0.append(change.newValue) } }
        defer { observer.cancel() }

        let undone = try defaults.undo()
        #expect(undone.map(\.key) == ["name", "volume"])
        #expect(defaults[volume] == 0.8 && defaults[name] == "Ana")
        #expect(told.withLock { $0 } == [0.8])
        let reopened = try openFresh(directory.file())
        #expect(reopened[volume] == 0.8 && reopened[name] == "Ana")
        let last = try #require(try defaults.history().first)
        #expect(last.revision == 3 && last.kind == .revert(toRevision: 1))

        // A dry run says what a revert would change and writes nothing: not the store, not the history.
        let (store, history) = (try bytes(directory.file()), try bytes(directory.file(".settings.json.history")))
        let preview = try defaults.undo(dryRun: true)
        #expect(preview.map(\.key) == ["name", "volume"])
        #expect(
            try bytes(directory.file()) == store && (try bytes(directory.file(".settings.json.history"))) == history)
        #expect(
            try defaults.revert(forKey: "volume", toRevision: 0, dryRun: true) == [
                .init(key: "volume", oldValue: .json(0.8), newValue: .absent)
            ])
        #expect(defaults[volume] == 0.8)

        // Undoing again undoes the undo, as its dry run said.
        #expect(try defaults.undo() == preview)
        #expect(defaults[volume] == 0.1 && defaults[name] == "Bo")

        // One key: only that key goes back.
        try defaults.undo(forKey: "name")
        #expect(defaults[name] == "Ana" && defaults[volume] == 0.1)
    }

    @Test func revertToARevisionOrATimeRestoresEveryKeyChangedSince() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        defaults[volume] = 0.2
        try defaults.save()
        let between = Date()
        Thread.sleep(forTimeInterval: 0.01)
        for value in [0.3, 0.4, 0.5, 0.6] {
            defaults[volume] = value
            defaults[name] = "n\(value)"
            try defaults.save()
        }
        try defaults.revert(toRevision: 3)
        #expect(defaults[volume] == 0.4 && defaults[name] == "n0.4")
        try defaults.revert(forKey: "name", toRevision: 2)
        #expect(defaults[name] == "n0.3" && defaults[volume] == 0.4)
        try defaults.revert(to: between)
        #expect(defaults[volume] == 0.2 && defaults[name] == nil)
        try defaults.revert(toRevision: 0)
        #expect(try bytes(directory.file()) == Array("{\n}\n".utf8) || defaults.dictionaryRepresentation().isEmpty)
        // Reverting to where it is changes nothing and records nothing.
        let count = try defaults.history().count
        #expect(try defaults.revert(toRevision: count).isEmpty)
        #expect(try defaults.history().count == count)
    }

    @Test func aSecretKeysValuesNeverEnterTheHistory() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        defaults[secret] = "hunter2-first"
        defaults[volume] = 0.7
        try defaults.save()
        defaults[secret] = "hunter2-second"
        try defaults.save()
        defaults[secret] = nil
        try defaults.save()

        let stored = try historyText(directory)
        #expect(!stored.contains("hunter2"))
        let history = try defaults.history(forKey: "token")
        #expect(
            history.map(\.changes) == [
                [.init(key: "token", oldValue: .secret, newValue: .absent)],
                [.init(key: "token", oldValue: .secret, newValue: .secret)],
                [.init(key: "token", oldValue: .absent, newValue: .secret)],
            ])
        #expect(!"\(try defaults.history())".contains("hunter2"))
        // Its value cannot be put back: refused, nothing written.
        let error = #expect(throws: DefaultsError.self) { try defaults.undo(forKey: "token") }
        #expect(error?.code == .historyUnavailable && error?.key == "token")
        let all = #expect(throws: DefaultsError.self) { try defaults.revert(toRevision: 1) }
        #expect(all?.code == .historyUnavailable)
        defaults[volume] = 0.1
        try defaults.save()
        let other = #expect(throws: DefaultsError.self) { try defaults.revert(toRevision: 2) }
        #expect(other?.key == "token")
        #expect(defaults[volume] == 0.1)
        // The other keys revert one by one; back to before the token was first set, it is known to be absent.
        try defaults.revert(forKey: "volume", toRevision: 2)
        #expect(defaults[volume] == 0.7)
        try defaults.revert(toRevision: 0)
        #expect(defaults[volume] == 0.5 && defaults[secret] == nil)
    }

    /// A writer that does not declare the key secret (the tool, a string-key set) learns it from the history:
    /// its change is recorded without values, and the values earlier records hold are withheld when read.
    @Test func aKeyAnotherWriterDeclaredSecretIsSecretForEveryWriter() throws {
        let directory = try TemporaryDirectory()
        let unaware = try openFresh(directory.file())
        unaware.set("hunter2-before", forKey: "token")
        try unaware.save()
        let app = try openFresh(directory.file())
        app[secret] = "hunter2-declared"
        try app.save()
        let tool = try openFresh(directory.file())
        tool.set("hunter2-after", forKey: "token")
        try tool.save()

        #expect(!(try historyText(directory).contains("hunter2-declared")))
        #expect(!(try historyText(directory).contains("hunter2-after")))
        let history = try tool.history(forKey: "token")
        #expect(
            history.map(\.changes) == [
                [.init(key: "token", oldValue: .secret, newValue: .secret)],
                [.init(key: "token", oldValue: .secret, newValue: .secret)],
                [.init(key: "token", oldValue: .absent, newValue: .secret)],
            ])
        #expect(!"\(try tool.history())".contains("hunter2"))
    }

    /// A kind of value a secret string is not: the decoder's error for it quotes the string.
    private enum Mode: String, Codable { case fast }

    /// A name the history marks secret is secret for every read of it: a key that reads it as the wrong type
    /// reports an error that quotes none of the value, though the key was not declared secret.
    @Test func aReadOfANameTheHistoryMarksSecretQuotesNoValueInItsError() throws {
        let directory = try TemporaryDirectory()
        let app = try openFresh(directory.file())
        app[secret] = "hunter2-declared"
        try app.save()
        let reader = try openFresh(directory.file())
        _ = try reader.history()
        let errors = ErrorLog()
        reader.onError = errors.handler
        #expect(reader[Defaults.Key<Mode>("token", default: .fast)] == .fast)
        #expect(errors.errors.count == 1)
        #expect(errors.errors.allSatisfy { !$0.description.contains("hunter2") }, "\(errors.errors)")
    }

    @Test func theBoundHoldsAndARevertBeforeItSaysTheHistoryIsGone() throws {
        let directory = try TemporaryDirectory()
        let options = Defaults.Options(history: .init(maximumSaves: 8, maximumBytes: 1 << 20))
        let defaults = try openFresh(directory.file(), options: options)
        for index in 1...50 {
            defaults[volume] = Double(index)
            try defaults.save()
            let count = try defaults.history().count
            #expect(count <= 8)
        }
        let history = try defaults.history()
        #expect(history.count >= 6)
        #expect(history.first?.revision == 50)
        #expect(history.map(\.revision) == Array((51 - history.count...50).reversed()))
        let error = #expect(throws: DefaultsError.self) { try defaults.revert(toRevision: 2) }
        #expect(error?.message.contains("history before revision \(history.last!.revision) is gone") == true)

        // The byte bound too.
        let small = try TemporaryDirectory()
        let byBytes = try openFresh(
            small.file(), options: Defaults.Options(history: .init(maximumSaves: 1000, maximumBytes: 2000)))
        for index in 1...60 {
            byBytes[name] = String(repeating: "x", count: 100) + "\(index)"
            try byBytes.save()
            #expect(try bytes(small.file(".settings.json.history")).count <= 2000 + 400)
        }
    }

    @Test func aRecordCutShortByACrashIsSkippedReportedOnceAndCutOffByTheNextSave() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults[volume] = 0.8
        try defaults.save()
        let historyFile = directory.file(".settings.json.history")
        let handle = try FileHandle(forWritingTo: historyFile)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"revision\":2,\"time\":\"20".utf8))
        try handle.close()

        let reopened = try openFresh(directory.file())
        reopened.onError = errors.handler
        #expect(try reopened.history().map(\.revision) == [1])
        #expect(try reopened.history().map(\.revision) == [1])
        #expect(errors.errors.count == 1)
        #expect(errors.errors.first?.line == 2 && errors.errors.first?.path == historyFile.path)
        reopened[volume] = 0.9
        try reopened.save()
        #expect(try reopened.history().map(\.revision) == [2, 1])
        #expect(try text(historyFile).split(separator: "\n").count == 2)
    }

    @Test func historyOffRecordsNothing() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file(), options: Defaults.Options(history: .off))
        defaults[volume] = 0.8
        try defaults.save()
        #expect(try directory.contents().contains(".settings.json.history") == false)
        #expect(try defaults.history().isEmpty)
        let error = #expect(throws: DefaultsError.self) { try defaults.undo() }
        #expect(error?.code == .historyUnavailable)
    }

    @Test func aModifyIsRecordedAndAStoreInMemoryHasNoHistory() throws {
        let directory = try TemporaryDirectory()
        let defaults = try openFresh(directory.file())
        try defaults.modify(.count) { $0 += 5 }
        #expect(try defaults.history().first?.changes == [.init(key: "count", oldValue: .absent, newValue: .json(5))])
        let memory = Defaults.inMemory()
        memory[volume] = 0.1
        #expect(try memory.history().isEmpty)
        #expect(throws: DefaultsError.self) { try memory.undo() }
    }

    @Test func timesAreWrittenAndReadAsUTC() throws {
        for milliseconds: Int64 in [0, 1, 999, 86_399_999, 951_782_400_000, 1_796_270_706_789, -1] {
            let text = HistoryTime.text(milliseconds: milliseconds)
            #expect(HistoryTime.milliseconds(text: text) == milliseconds, "\(text)")
        }
        #expect(HistoryTime.text(milliseconds: 1_796_270_706_789) == "2026-12-03T04:05:06.789Z")
        #expect(HistoryTime.milliseconds(text: "2026-12-03T04:05:06Z") == 1_796_270_706_000)
        #expect(HistoryTime.milliseconds(text: "2026-13-03T04:05:06Z") == nil)
        #expect(HistoryTime.milliseconds(text: "2026-02-30T04:05:06Z") == nil)
        #expect(HistoryTime.milliseconds(text: "2026-12-03T24:00:00Z") == nil)
        #expect(HistoryTime.milliseconds(text: "2026-12-03T04:05:06.7Z") == 1_796_270_706_700)
        let date = try #require(Defaults.HistoryEntry.date(fromTimeText: "2026-12-03T04:05:06.789Z"))
        #expect(Defaults.HistoryEntry.timeText(date) == "2026-12-03T04:05:06.789Z")
    }
}

/// A history that cannot be written never fails the save it records: the save stands, the failure goes to the
/// error handler, and the next save is recorded. A record written but not flushed stays (it may not survive a
/// power loss, and says so).
@Suite struct HistoryFaultTests {
    @Test(arguments: [(FaultPlan.Call.write, ENOSPC), (.fsync, EIO), (.open, EACCES)])
    func aFailedRecordLeavesTheSaveStandingAndIsReported(_ call: FaultPlan.Call, _ errno: Int32) throws {
        let subject = try InProcessFaultTests.Subject()
        _ = try subject.prepareChange()
        subject.plan.fail(call, on: .suffix(".history"), with: errno)
        try subject.defaults.save()
        #expect(try openFresh(subject.url).string(forKey: "b") == "pending", "the save stands")
        let reported = try #require(subject.errors.errors.last)
        #expect(reported.code == .writeFailed && reported.errno == errno)
        #expect(reported.path?.hasSuffix("/.settings.json.history") == true)
        #expect(reported.message.contains("the save stands"))
        let written = call == .fsync
        #expect(try subject.defaults.history().map(\.revision) == (written ? [2, 1] : [1]))

        subject.defaults.set(2, forKey: "a")
        try subject.defaults.save()
        let history = try subject.defaults.history()
        #expect(history.map(\.revision) == (written ? [3, 2, 1] : [2, 1]))
        #expect(history.first?.changes == [.init(key: "a", oldValue: .json(1), newValue: .json(2))])
    }
}

/// What a hostile review of the history found, kept fixed.
@Suite struct HistoryReviewTests {
    private let volume = Defaults.Key<Double>("volume", default: 0.5)
    private let secret = Defaults.Key<String?>("token", secret: true)

    @Test func aSecretKeyStaysSecretAfterItsRecordsAreDropped() throws {
        let directory = try TemporaryDirectory()
        let options = Defaults.Options(history: .init(maximumSaves: 8, maximumBytes: 1 << 20))
        let app = try openFresh(directory.file(), options: options)
        app[secret] = "hunter2-app"
        try app.save()
        for index in 1...30 {
            app[volume] = Double(index)
            try app.save()
        }
        let historyFile = directory.file(".settings.json.history")
        #expect(try text(historyFile).hasPrefix(#"{"maximumBytes":1048576,"maximumSaves":8,"secretKeys":["token"]}"#))
        let tool = try openFresh(directory.file(), options: options)
        tool.set("hunter2-tool", forKey: "token")
        try tool.save()
        #expect(!(try text(historyFile).contains("hunter2")))
        #expect(try tool.history(forKey: "token").first?.changes.first?.newValue == .secret)
    }

    @Test func valuesOfAKeyThisProgramDeclaresSecretAreWithheldAndNeverReturned() throws {
        let directory = try TemporaryDirectory()
        let tool = try openFresh(directory.file())
        tool.set("hunter2-one", forKey: "token")
        try tool.save()
        tool.set("hunter2-two", forKey: "token")
        try tool.save()
        let app = try openFresh(directory.file())
        #expect(!"\(try app.history(for: secret))".contains("hunter2"))
        #expect(
            try app.history(for: secret).first?.changes.first
                == .init(key: "token", oldValue: .secret, newValue: .secret))

        // A process that never used the key, undoing its addition, returns no value of it either.
        let other = try TemporaryDirectory()
        let declaring = try openFresh(other.file())
        declaring[secret] = "hunter2-three"
        try declaring.save()
        let unaware = try openFresh(other.file())
        #expect(try unaware.undo(dryRun: true) == [.init(key: "token", oldValue: .secret, newValue: .absent)])
        #expect(try unaware.undo() == [.init(key: "token", oldValue: .secret, newValue: .absent)])
    }

    @Test func aStoreWithItsHistoryOffCannotRevertOverItsUnrecordedSaves() throws {
        let directory = try TemporaryDirectory()
        let recording = try openFresh(directory.file())
        recording[volume] = 0.1
        try recording.save()
        let off = try openFresh(directory.file(), options: Defaults.Options(history: .off))
        off[volume] = 0.9
        try off.save()
        #expect(try off.history().isEmpty)
        let error = #expect(throws: DefaultsError.self) { try off.undo() }
        #expect(error?.code == .historyUnavailable)
        #expect(try openFresh(directory.file(), options: Defaults.Options(history: .off))[volume] == 0.9)
    }

    @Test func aWholeLastRecordWithoutItsLineBreakIsKeptAndItsRevisionNotReused() throws {
        let directory = try TemporaryDirectory()
        let historyFile = try twoSavesOfVolume(in: directory).history
        var bytes = try bytes(historyFile)
        #expect(bytes.removeLast() == 0x0A)
        try Data(bytes).write(to: historyFile)
        let other = try openFresh(directory.file())
        other[volume] = 0.3
        try other.save()
        let history = try other.history()
        #expect(history.map(\.revision) == [3, 2, 1])
        #expect(history[1].changes == [.init(key: "volume", oldValue: .json(0.1), newValue: .json(0.2))])
    }

    @Test func aRevisionNewerThanTheLastIsRefused() throws {
        let defaults = try openFresh(try TemporaryDirectory().file())
        defaults[volume] = 0.1
        try defaults.save()
        #expect(try defaults.revert(toRevision: 1).isEmpty)
        let error = #expect(throws: DefaultsError.self) { try defaults.revert(toRevision: 999) }
        #expect(error?.code == .invalidArgument && error?.message.contains("newer than the last") == true)
    }

    @Test func aSaveWhoseDirectoryFlushFailedIsNotRecorded() throws {
        let subject = try InProcessFaultTests.Subject()
        _ = try subject.prepareChange()
        subject.plan.fail(.fsync, on: .exactly(subject.directory), with: EIO)
        let error = #expect(throws: DefaultsError.self) { try subject.defaults.save() }
        #expect(error?.code == .notDurable)
        #expect(error?.message.contains("the save is not recorded in the history") == true)
        #expect(try subject.defaults.history().map(\.revision) == [1])
        #expect(subject.errors.errors.isEmpty, "the save's own error says it all")
    }
}

/// A store in `directory` whose `volume` (a `Double`) was saved twice, as 0.1 then 0.2, and its history file.
func twoSavesOfVolume(in directory: TemporaryDirectory) throws -> (defaults: Defaults, history: URL) {
    let defaults = try openFresh(directory.file())
    for value in [0.1, 0.2] {
        defaults.set(value, forKey: "volume")
        try defaults.save()
    }
    return (defaults, directory.file(".settings.json.history"))
}
