import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Migrations, the reserved schema member, and the unreadable-file policy and recovery.
@Suite struct MigrationTests {
    struct Refused: Error {}

    static let renameSoundLevel = Defaults.Migration(to: 1) { values in
        if let level = values.removeValue(forKey: "soundLevel") { values["volume"] = level }
    }
    static let percentToFraction = Defaults.Migration(to: 2) { values in
        if case .number(let percent) = values["volume"], let whole = percent.intValue,
            let fraction = JSONNumber(Double(whole) / 100)
        {
            values["volume"] = .number(fraction)
        }
    }

    @Test func stepsRunInOrderWithABackupOfTheOriginal() throws {
        let dir = try TemporaryDirectory()
        let original = "{\"soundLevel\": 80, \"name\": \"x\"}"
        try write(original, to: dir.file())
        let defaults = try openFresh(
            dir.file(), options: .init(migrations: [Self.percentToFraction, Self.renameSoundLevel]))
        #expect(defaults[.volume] == 0.8)
        #expect(defaults.keys == ["name", "volume"], "the reserved member is not a key")
        #expect(try text(dir.file()) == "{\n  \"$schemaVersion\": 2,\n  \"name\": \"x\",\n  \"volume\": 0.8\n}\n")
        #expect(try text(dir.file("settings.json.v0.bak")) == original)

        // Opening again runs nothing: the file is at version 2.
        let again = try openFresh(
            dir.file(), options: .init(migrations: [Self.renameSoundLevel, Self.percentToFraction]))
        #expect(again[.volume] == 0.8)
        #expect(!FileManager.default.fileExists(atPath: dir.file("settings.json.v2.bak").path))
    }

    @Test func onlyNewerStepsRun() throws {
        let dir = try TemporaryDirectory()
        try write("{\"$schemaVersion\": 1, \"volume\": 50}", to: dir.file())
        let defaults = try openFresh(
            dir.file(), options: .init(migrations: [Self.renameSoundLevel, Self.percentToFraction]))
        #expect(defaults[.volume] == 0.5)
        #expect(FileManager.default.fileExists(atPath: dir.file("settings.json.v1.bak").path))
    }

    @Test func aThrowingStepLeavesTheFileUntouched() throws {
        let dir = try TemporaryDirectory()
        try write("{\"a\": 1}", to: dir.file())
        let before = try bytes(dir.file())
        let failing = Defaults.Migration(to: 2) { _ in throw Refused() }
        let error = #expect(throws: DefaultsError.self) {
            try openFresh(dir.file(), options: .init(migrations: [Self.renameSoundLevel, failing]))
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("version 2") == true)
        #expect(try bytes(dir.file()) == before)
        #expect(try dir.contents().filter { !$0.hasPrefix(".") } == ["settings.json"])
    }

    @Test func aNewerSchemaIsRefusedAndNotTouched() throws {
        let dir = try TemporaryDirectory()
        try write("{\"$schemaVersion\": 7, \"a\": 1}", to: dir.file())
        let before = try bytes(dir.file())
        let error = #expect(throws: DefaultsError.self) {
            try openFresh(dir.file(), options: .init(migrations: [Self.renameSoundLevel]))
        }
        #expect(error?.code == .unsupportedSchemaVersion)
        #expect(try bytes(dir.file()) == before)
    }

    @Test func aNewFileStartsAtTheNewestVersion() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(
            dir.file(), options: .init(migrations: [Self.renameSoundLevel, Self.percentToFraction]))
        try defaults.save()
        #expect(!FileManager.default.fileExists(atPath: dir.file().path), "opening alone writes nothing")
        defaults[.count] = 1
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"$schemaVersion\": 2,\n  \"count\": 1\n}\n")
    }

    @Test func theReservedMemberCannotBeSetOrRemoved() throws {
        let dir = try TemporaryDirectory()
        try write("{\"$schemaVersion\": 3, \"a\": 1}", to: dir.file())
        let defaults = try openFresh(dir.file())
        let errors = ErrorLog()
        defaults.onError = errors.handler
        let reserved = Defaults.Key<Int>(Defaults.schemaVersionKey, default: 0)
        #expect(defaults[reserved] == 3, "readable")
        defaults[reserved] = 9
        defaults.set(9, forKey: Defaults.schemaVersionKey)
        defaults.removeValue(forKey: Defaults.schemaVersionKey)
        defaults.reset(reserved)
        defaults.register(defaults: [Defaults.schemaVersionKey: 1])
        defaults.batch { $0[reserved] = 5 }
        #expect(throws: DefaultsError.self) { try defaults.set(9, for: reserved) }
        defaults.removeAll()
        #expect(errors.errors.count == 6)
        #expect(errors.errors.allSatisfy { $0.code == .reservedKey })
        #expect(defaults.keys.isEmpty)
        #expect(defaults.dictionaryRepresentation().isEmpty)
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"$schemaVersion\": 3\n}\n", "kept without migrations configured")
    }

    @Test func moveAsidePolicyKeepsTheBadFileAndStartsEmpty() throws {
        let dir = try TemporaryDirectory()
        try write("{broken", to: dir.file())
        let errors = ErrorLog()
        let store = Store(
            storage: makeStorage(path: dir.file().path, options: .init(unreadableFile: .moveAside)),
            options: .init(unreadableFile: .moveAside))
        store.onError = errors.handler
        try store.load()
        let defaults = Defaults(store: store, saveMode: .manual, url: dir.file())
        #expect(defaults.keys.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.file().path))
        let aside = try dir.contents().filter { $0.hasPrefix("settings.json.corrupt-") }
        #expect(aside.count == 1)
        #expect(try text(dir.file(aside[0])) == "{broken")
        #expect(errors.errors.map(\.code) == [.fileMovedAside])
        #expect(errors.errors.first?.path == dir.file(aside[0]).path)
        #expect(errors.errors.first?.message.hasSuffix("the store started empty") == true)
        defaults[.count] = 1
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"count\": 1\n}\n")
    }

    @Test func throwPolicyIsTheDefault() throws {
        let dir = try TemporaryDirectory()
        try write("{broken", to: dir.file())
        #expect(throws: DefaultsError.self) { try openFresh(dir.file()) }
        #expect(try dir.contents() == ["settings.json"])
    }

    /// A file that parses but has a bad schema version is a schema error, not an unreadable file to move.
    @Test func parseableFileWithAStringSchemaVersionIsNotMovedAside() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        try write("{\n  \"$schemaVersion\": \"1\",\n  \"count\": 3\n}\n", to: url)
        let options = Defaults.Options(unreadableFile: .moveAside, migrations: [.init(to: 1) { _ in }])
        let error = #expect(throws: DefaultsError.self) { try openFresh(url, options: options) }
        #expect(error?.code == .unsupportedSchemaVersion)
        #expect(try dir.contents().filter { !$0.hasPrefix(".") } == ["settings.json"], "nothing moved")
    }

    @Test func explicitRecoveryMovesTheBrokenFileAsideAndWritesTheCurrentState() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.count] = 1
        defaults[.volume] = 0.1
        try defaults.save()
        let errors = ErrorLog()
        defaults.onError = errors.handler
        try write("{oops", to: dir.file())
        defaults[.count] = 2
        #expect(throws: DefaultsError.self) { try defaults.save() }
        let moved = try #require(try defaults.moveAsideUnreadableFile())
        #expect(try text(moved) == "{oops")
        let notice = try #require(errors.errors.last)
        #expect(notice.code == .fileMovedAside)
        #expect(notice.path == moved.path)
        #expect(!notice.message.contains("started empty"), "the store kept its state: \(notice.message)")
        #expect(notice.message.contains("kept its state"))
        #expect(try text(dir.file()) == "{\n  \"count\": 2,\n  \"volume\": 0.1\n}\n")
        #expect(try defaults.moveAsideUnreadableFile() == nil, "nothing to move now")
    }

    /// The error handler runs with no lock held, so a handler that flushes cannot deadlock.
    @Test func errorHandlerThatFlushesDuringMoveAsideDoesNotDeadlock() throws {
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try defaults.save()
        try write("{ broken", to: url)
        defaults.onError = { _ in
            do { try defaults.save() } catch {}
        }
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do { _ = try defaults.moveAsideUnreadableFile() } catch {}
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success, "moveAsideUnreadableFile deadlocked")
    }

    // MARK: The schema version survives every save

    /// The README's own migration: run twice, it deletes the saved `volume`.
    static let readmeMigration = Defaults.Migration(to: 1) { values in
        values["volume"] = values.removeValue(forKey: "soundLevel")
    }

    /// A save that wrote the schema version into memory and then failed leaves it to discard; observers are
    /// never told of the reserved member, which is not a key.
    @Test func discardingAfterAFailedSaveDoesNotReportTheSchemaVersion() throws {
        let dir = try TemporaryDirectory()
        let options = Defaults.Options(maximumFileSize: 40, migrations: [Self.readmeMigration])
        let defaults = try openFresh(dir.file(), options: options)
        let heard = Recorder<Set<String>>()
        let token = defaults.observeAll { heard.append($0) }
        defaults[.token] = String(repeating: "x", count: 64)
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .fileTooLarge)
        defaults.discardUnsavedChanges()
        #expect(heard.values.last == ["token"], "\(heard.values)")
        #expect(!heard.values.contains { $0.contains(Defaults.schemaVersionKey) }, "\(heard.values)")
        _ = token
    }

    @Test func aFileDeletedAfterOpeningIsWrittenWithTheSchemaVersion() throws {
        let dir = try TemporaryDirectory()
        try write("{\"$schemaVersion\": 1, \"volume\": 0.8}", to: dir.file())
        let options = Defaults.Options(migrations: [Self.readmeMigration])
        let defaults = try openFresh(dir.file(), options: options)
        try FileManager.default.removeItem(at: dir.file())
        defaults[.volume] = 0.3
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"$schemaVersion\": 1,\n  \"volume\": 0.3\n}\n")
        #expect(try openFresh(dir.file(), options: options)[.volume] == 0.3, "the migration does not run again")
    }

    @Test func aFileReplacedWithoutTheMemberGetsItBack() throws {
        let dir = try TemporaryDirectory()
        try write("{\"$schemaVersion\": 1, \"volume\": 0.8}", to: dir.file())
        let options = Defaults.Options(migrations: [Self.readmeMigration])
        let defaults = try openFresh(dir.file(), options: options)
        // Another writer (an older program) deletes the file and writes one without the member.
        try FileManager.default.removeItem(at: dir.file())
        let older = try openFresh(dir.file())
        older[.volume] = 0.9
        try older.save()
        defaults[.count] = 1
        try defaults.save()
        #expect(
            try text(dir.file()) == "{\n  \"$schemaVersion\": 1,\n  \"count\": 1,\n  \"volume\": 0.9\n}\n")
        let reopened = try openFresh(dir.file(), options: options)
        #expect(reopened[.volume] == 0.9 && reopened[.count] == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.file("settings.json.v0.bak").path))
    }

    @Test func aNewerSchemaWrittenSinceOpeningIsNotSavedOver() throws {
        let dir = try TemporaryDirectory()
        try write("{\"$schemaVersion\": 1, \"volume\": 0.8}", to: dir.file())
        let defaults = try openFresh(dir.file(), options: .init(migrations: [Self.readmeMigration]))
        // A newer program migrates the file to version 2 meanwhile.
        try write("{\"$schemaVersion\": 2, \"level\": 0.8}", to: dir.file())
        let newer = try bytes(dir.file())
        defaults[.count] = 1
        for attempt in 1...2 {
            let error = #expect(throws: DefaultsError.self, "attempt \(attempt)") { try defaults.save() }
            #expect(error?.code == .unsupportedSchemaVersion, "\(String(describing: error))")
            #expect(error?.message.contains("version 2") == true, "\(String(describing: error))")
            #expect(try bytes(dir.file()) == newer, "not downgraded, no old-schema data written over it")
            #expect(defaults.hasStoredValue(for: .count), "the change stays pending")
        }
        // Nothing left for the save at deinit to report.
        defaults.discardUnsavedChanges()
    }

    @Test func aMigrationThatBreaksTheLimitsLeavesTheFileUntouched() throws {
        let dir = try TemporaryDirectory()
        try write("{\"a\": 1}", to: dir.file())
        let before = try bytes(dir.file())
        let deep = Defaults.Migration(to: 1) { values in
            var value = JSONValue.number(1)
            for _ in 0..<20 { value = .array([value]) }
            values["deep"] = value
        }
        let long = Defaults.Migration(to: 1) { values in values[String(repeating: "k", count: 40)] = .number(1) }
        for (migration, limits) in [
            (deep, Defaults.Options(maximumDepth: 16, migrations: [deep])),
            (long, Defaults.Options(maximumKeyLength: 32, migrations: [long])),
        ] {
            let error = #expect(throws: DefaultsError.self) { try openFresh(dir.file(), options: limits) }
            #expect(error?.code == .migrationFailed, "\(String(describing: error)) (version \(migration.version))")
            #expect(try bytes(dir.file()) == before)
            #expect(try dir.contents().filter { !$0.hasPrefix(".") } == ["settings.json"], "no backup either")
        }
    }
}
