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

private enum Theme: String, Codable, Sendable { case light, dark }

private struct Profile: Codable, Sendable, Equatable {
    var name: String
    var born: Date
    var tags: [String]
}

/// The keys an app moves from `UserDefaults`, one per form a value is kept in there.
private enum MovedKeys {
    static let launches = Defaults.Key<Int>("launches", default: 0)
    static let sounds = Defaults.Key<Bool>("sounds", default: false)
    static let volume = Defaults.Key<Double>("volume", default: 0.5)
    static let nickname = Defaults.Key<String>("nickname", default: "")
    static let lastOpened = Defaults.Key<Date?>("lastOpened")
    static let theme = Defaults.Key<Theme>("theme", default: .light)
    static let jsonString = Defaults.Key<Profile?>("profileFromJSONString")
    static let jsonData = Defaults.Key<Profile?>("profileFromJSONData")
    static let plistData = Defaults.Key<Profile?>("profileFromPropertyListData")
    static let grid = Defaults.Key<[[Int]]>("grid", default: [])
    static let windows = Defaults.Key<[String: [String: Double]]>("windows", default: [:])
    static let avatar = Defaults.Key<Data?>("avatar")
    static let renamed = Defaults.Key<Int>("fontSize", default: 12)
    static let broken = Defaults.Key<Int>("brokenCount", default: 0)
    static let registeredOnly = Defaults.Key<Int>("registeredOnly", default: 1)
    static let limited = Defaults.Key<Int>("limited", default: 1, constraints: [.range(1...10)])

    static let all: [Defaults.AnyKey] = [
        launches, sounds, volume, nickname, lastOpened, theme, jsonString, jsonData, plistData, grid, windows, avatar,
        renamed, broken, registeredOnly, limited,
    ]
}

/// A `UserDefaults` suite of its own for one test, with the values an app would have stored, removed at the end.
private final class Suite {
    let name = "CodableDefaultsTests.\(UUID().uuidString)"
    let defaults: UserDefaults
    let profile = Profile(name: "Ana", born: Date(timeIntervalSinceReferenceDate: 123_456.5), tags: ["a", "b"])

    init() throws {
        defaults = try #require(UserDefaults(suiteName: name))
        defaults.set(42, forKey: "launches")
        defaults.set(true, forKey: "sounds")
        defaults.set(0.8, forKey: "volume")
        defaults.set("ana", forKey: "nickname")
        defaults.set(Date(timeIntervalSinceReferenceDate: 700_000_000.25), forKey: "lastOpened")
        defaults.set(Theme.dark.rawValue, forKey: "theme")  // @AppStorage of a RawRepresentable
        // sindresorhus/Defaults keeps a Codable value as its JSON text.
        defaults.set(
            String(decoding: try JSONEncoder().encode(profile), as: UTF8.self), forKey: "profileFromJSONString")
        defaults.set(try JSONEncoder().encode(profile), forKey: "profileFromJSONData")
        defaults.set(try PropertyListEncoder().encode(profile), forKey: "profileFromPropertyListData")
        defaults.set([[1, 2], [3]], forKey: "grid")
        defaults.set(["main": ["x": 10.5, "y": 20.0]], forKey: "windows")
        defaults.set(Data([0xFF, 0x00, 0x7F]), forKey: "avatar")
        defaults.set(14, forKey: "oldFontSize")
        defaults.set("many", forKey: "brokenCount")
        defaults.set(99, forKey: "limited")
        defaults.register(defaults: ["registeredOnly": 5])
    }

    deinit { defaults.removePersistentDomain(forName: name) }

    func has(_ key: String) -> Bool { defaults.persistentDomain(forName: name)?[key] != nil }
}

@Suite struct MoveValuesTests {
    @Test func everyFormAnAppKeepsAValueInMovesAndReadsThroughItsTypedKey() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let report = try defaults.moveValues(
            fromUserDefaults: suite.name, keys: MovedKeys.all, sourceNames: ["fontSize": "oldFontSize"])

        #expect(
            report.moved == [
                "launches", "sounds", "volume", "nickname", "lastOpened", "theme", "profileFromJSONString",
                "profileFromJSONData", "profileFromPropertyListData", "grid", "windows", "avatar", "fontSize",
            ])
        #expect(report.kept.isEmpty && report.alreadyMoved.isEmpty)
        #expect(report.absent == ["registeredOnly"], "a registered default is no stored value")
        #expect(report.failures.map(\.key) == ["brokenCount", "limited"])
        #expect(report.failures.map(\.error.code) == [.decodingFailed, .invalidValue])
        #expect(report.failures.first?.source == "brokenCount")

        // Read back from the file, by a store that never saw UserDefaults.
        let reopened = try openFresh(dir.file())
        #expect(reopened[MovedKeys.launches] == 42)
        #expect(reopened[MovedKeys.sounds] == true)
        #expect(reopened[MovedKeys.volume] == 0.8)
        #expect(reopened[MovedKeys.nickname] == "ana")
        #expect(reopened[MovedKeys.lastOpened] == Date(timeIntervalSinceReferenceDate: 700_000_000.25))
        #expect(reopened[MovedKeys.theme] == .dark)
        #expect(reopened[MovedKeys.jsonString] == suite.profile)
        #expect(reopened[MovedKeys.jsonData] == suite.profile)
        #expect(reopened[MovedKeys.plistData] == suite.profile)
        #expect(reopened[MovedKeys.grid] == [[1, 2], [3]])
        #expect(reopened[MovedKeys.windows] == ["main": ["x": 10.5, "y": 20.0]])
        #expect(reopened[MovedKeys.avatar] == Data([0xFF, 0x00, 0x7F]))
        #expect(reopened[MovedKeys.renamed] == 14)
        #expect(!reopened.hasStoredValue(for: MovedKeys.broken), "a value that does not convert is not stored")
        #expect(!reopened.hasStoredValue(for: MovedKeys.limited), "nor one that breaks a constraint")
        #expect(!reopened.hasStoredValue(for: MovedKeys.registeredOnly), "a registered default is no stored value")
        // Without being asked, nothing leaves UserDefaults.
        for key in ["launches", "profileFromJSONString", "oldFontSize", "brokenCount"] { #expect(suite.has(key)) }
    }

    @Test func aSecondRunMovesNothingAndTriesOnlyWhatDidNotConvert() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all)
        let file = try Data(contentsOf: dir.file())
        // The app changes a value in UserDefaults after the move (old code still running): it is not moved again.
        suite.defaults.set(7, forKey: "launches")

        let second = try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all)
        #expect(second.moved.isEmpty)
        #expect(second.alreadyMoved.contains("launches") && second.absent == ["fontSize", "registeredOnly"])
        #expect(second.failures.map(\.key) == ["brokenCount", "limited"], "still reported, still in UserDefaults")
        #expect(try Data(contentsOf: dir.file()) == file, "the second run writes nothing")
        #expect(try openFresh(dir.file())[MovedKeys.launches] == 42)

        // Once it converts, the next run moves it.
        suite.defaults.set(3, forKey: "brokenCount")
        let third = try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all)
        #expect(third.moved == ["brokenCount"])
    }

    @Test func movedValuesAreRemovedFromUserDefaultsOnlyWhenAskedAndOnlyThem() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[MovedKeys.nickname] = "kept"
        try defaults.save()
        let report = try defaults.moveValues(
            fromUserDefaults: suite.name, keys: MovedKeys.all, sourceNames: ["fontSize": "oldFontSize"],
            removingMovedValues: true)
        #expect(report.kept == ["nickname"])
        #expect(defaults[MovedKeys.nickname] == "kept", "the store's own value wins")
        for key in ["launches", "profileFromJSONData", "avatar", "oldFontSize"] {
            #expect(!suite.has(key), "\(key) moved and was removed")
        }
        for key in ["nickname", "brokenCount", "limited"] { #expect(suite.has(key), "\(key) did not move") }
    }

    /// A suite name with a typo reads an empty domain: nothing moves, and nothing is remembered, so the move from
    /// the right suite takes every value.
    @Test func aMoveFromAnEmptySuiteRemembersNothing() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let typo = suite.name + ".typo"
        defer { UserDefaults(suiteName: typo)?.removePersistentDomain(forName: typo) }
        let empty = try defaults.moveValues(fromUserDefaults: typo, keys: MovedKeys.all)
        #expect(empty.moved.isEmpty && empty.absent.count == MovedKeys.all.count)
        #expect(!defaults.hasStoredValue(forKey: Defaults.movedFromUserDefaultsMarker))
        #expect(try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all).moved.count == 12)
    }

    @Test func twoKeysNamingOneUserDefaultsKeyAreRefused() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let error = #expect(throws: DefaultsError.self) {
            try defaults.moveValues(
                fromUserDefaults: suite.name, keys: [MovedKeys.launches, MovedKeys.renamed],
                sourceNames: ["fontSize": "launches"], removingMovedValues: true)
        }
        #expect(error?.code == .invalidArgument && error?.key == "fontSize")
        #expect(suite.has("launches") && !defaults.hasStoredValue(for: MovedKeys.launches))
    }

    /// A value written to UserDefaults after the move read it (here by an observer of the moved key, which runs
    /// before the removal) is not removed: it was never moved.
    @Test func aValueWrittenToUserDefaultsDuringTheMoveIsNotRemoved() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let name = suite.name
        let token = defaults.observe(MovedKeys.launches) { _ in
            UserDefaults(suiteName: name)?.set(7, forKey: "launches")
        }
        defer { token.cancel() }
        try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all, removingMovedValues: true)
        #expect(defaults[MovedKeys.launches] == 42)
        #expect(suite.defaults.persistentDomain(forName: suite.name)?["launches"] as? Int == 7)
        #expect(!suite.has("sounds"), "the values left as they were read are removed")
    }

    /// A secret key's moved value is recorded in the history by name only, as a typed set of it would be.
    @Test func aMovedSecretValueStaysOutOfTheHistory() throws {
        let suite = try Suite()
        suite.defaults.set("hunter2-not-recorded", forKey: "apiToken")
        let dir = try TemporaryDirectory()
        let token = Defaults.Key<String?>("apiToken", secret: true)
        let defaults = try openFresh(dir.file())
        #expect(try defaults.moveValues(fromUserDefaults: suite.name, keys: [token]).moved == ["apiToken"])
        let history = try String(contentsOf: dir.file(".settings.json.history"), encoding: .utf8)
        #expect(history.contains("apiToken") && !history.contains("hunter2"), "\(history)")
        let file = dir.file("token.json")
        try Data(#""hunter3-from-a-file""#.utf8).write(to: file)
        let other = Defaults.Key<String?>("otherToken", secret: true)
        #expect(try defaults.moveValue(other, fromFile: file).moved == ["otherToken"])
        #expect(!(try String(contentsOf: dir.file(".settings.json.history"), encoding: .utf8)).contains("hunter3"))
    }

    @Test func aSaveThatFailsLeavesUserDefaultsAndTheStoreAsTheyWere() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let plan = FaultPlan()
        let defaults = try FaultPlan.install(plan) { try Defaults(url: dir.file(), saveMode: .manual) }
        defaults[MovedKeys.sounds] = false
        try defaults.save()
        let file = try Data(contentsOf: dir.file())
        plan.fail(.fsync, on: .suffix(".tmp"), with: EIO)

        let error = #expect(throws: DefaultsError.self) {
            try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all, removingMovedValues: true)
        }
        #expect(error?.code == .writeFailed)
        #expect(try Data(contentsOf: dir.file()) == file, "the store file is as it was")
        #expect(defaults[MovedKeys.launches] == 0, "and so is the store in memory")
        #expect(!defaults.hasStoredValue(forKey: Defaults.movedFromUserDefaultsMarker))
        for key in ["launches", "sounds", "profileFromJSONString", "avatar"] { #expect(suite.has(key)) }

        // With the fault gone, the move happens; the value the store held before is kept.
        let report = try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all)
        #expect(report.moved.count == 11 && report.kept == ["sounds"], "\(report)")
        #expect(defaults[MovedKeys.launches] == 42 && defaults[MovedKeys.sounds] == false)
    }

    /// A save whose directory cannot be flushed is in place but may not survive a power loss: nothing is
    /// removed from UserDefaults, which keeps its copy.
    @Test func aSaveThatIsNotDurableRemovesNothingFromUserDefaults() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let plan = FaultPlan()
        let defaults = try FaultPlan.install(plan) { try Defaults(url: dir.file(), saveMode: .manual) }
        plan.fail(.fsync, on: .exactly(dir.url.path), with: EIO)
        let error = #expect(throws: DefaultsError.self) {
            try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all, removingMovedValues: true)
        }
        #expect(error?.code == .notDurable)
        for key in ["launches", "sounds", "profileFromJSONString", "avatar"] { #expect(suite.has(key)) }
    }

    @Test func aSecretKeysValueThatDoesNotConvertIsReportedWithoutQuotingIt() throws {
        let suite = try Suite()
        suite.defaults.set("hunter2-not-a-number", forKey: "pin")
        let dir = try TemporaryDirectory()
        let pin = Defaults.Key<Int>("pin", default: 0, secret: true)
        let report = try openFresh(dir.file()).moveValues(fromUserDefaults: suite.name, keys: [pin])
        let failure = try #require(report.failures.first)
        #expect(failure.error.code == .decodingFailed)
        #expect(!"\(failure.error)".contains("hunter2"), "\(failure.error)")
    }

    @Test func aMarkerThatIsNotAListOfNamesIsAnErrorAndNothingMoves() throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        try defaults.modify(forKey: Defaults.movedFromUserDefaultsMarker) { $0 = 3 }
        let error = #expect(throws: DefaultsError.self) {
            try defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all)
        }
        #expect(error?.code == .invalidValue)
        #expect(error?.key == Defaults.movedFromUserDefaultsMarker)
        #expect(!defaults.hasStoredValue(for: MovedKeys.launches))
    }

    @Test func theAsyncFormsMoveTheSame() async throws {
        let suite = try Suite()
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let report = try await defaults.moveValues(
            fromUserDefaults: suite.name, keys: MovedKeys.all, removingMovedValues: true)
        #expect(report.moved.count == 12 && report.failures.count == 2)
        #expect(defaults[MovedKeys.jsonString] == suite.profile)
        #expect(!suite.has("profileFromJSONString") && suite.has("brokenCount"))
        #expect(try await defaults.moveValues(fromUserDefaults: suite.name, keys: MovedKeys.all).moved.isEmpty)

        let old = dir.file("count.json")
        try Data("5".utf8).write(to: old)
        let count = Defaults.Key<Int>("count", default: 0)
        #expect(try await defaults.moveValue(count, fromFile: old).moved == ["count"])
        #expect(defaults[count] == 5)
    }

    /// A suite whose property-list file another program wrote (here python's `plistlib`, as `defaults import` or
    /// an older version of the app would have): what Foundation reads from it moves.
    @Test(.enabled(if: findExecutable("python3") != nil, "needs python3, whose plistlib writes the suite's file"))
    func aSuiteFileWrittenByAnotherProgramMoves() throws {
        let name = "CodableDefaultsTests.\(UUID().uuidString)"
        let environment = ProcessInfo.processInfo.environment
        let configuration = environment["XDG_CONFIG_HOME"] ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        let plist = configuration + "/" + name + ".plist"
        try FileManager.default.createDirectory(atPath: configuration, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: plist) }
        let script = """
            import datetime, plistlib, sys
            value = {"launches": 3, "sounds": True, "lastOpened": datetime.datetime(2024, 5, 6, 7, 8, 9),
                     "grid": [[1], [2, 3]], "avatar": b"\\x00\\x01", "theme": "dark"}
            with open(sys.argv[1], "wb") as f: plistlib.dump(value, f, fmt=plistlib.FMT_BINARY)
            """
        let (status, output) = try runCommandBlocking(["python3", "-c", script, plist])
        try #require(status == .exited(0), "python3: \(output)")
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let keys: [Defaults.AnyKey] = [
            MovedKeys.launches, MovedKeys.sounds, MovedKeys.lastOpened, MovedKeys.grid, MovedKeys.avatar,
            MovedKeys.theme,
        ]
        let report = try defaults.moveValues(fromUserDefaults: name, keys: keys)
        defer { UserDefaults(suiteName: name)?.removePersistentDomain(forName: name) }
        #expect(report.moved == ["launches", "sounds", "lastOpened", "grid", "avatar", "theme"], "\(report)")
        #expect(defaults[MovedKeys.launches] == 3 && defaults[MovedKeys.sounds] == true)
        #expect(defaults[MovedKeys.lastOpened] == Date(timeIntervalSince1970: 1_714_979_289))
        #expect(defaults[MovedKeys.grid] == [[1], [2, 3]] && defaults[MovedKeys.avatar] == Data([0, 1]))
        #expect(defaults[MovedKeys.theme] == .dark)
    }

    // MARK: A JSON file per value

    @Test func aFilesValueMovesAndTheFileIsRenamedAfterTheSave() throws {
        let dir = try TemporaryDirectory()
        let profile = Profile(name: "Ana", born: Date(timeIntervalSinceReferenceDate: 5), tags: [])
        let old = dir.file("profile.json")
        try JSONEncoder().encode(profile).write(to: old)
        let defaults = try openFresh(dir.file())
        let key = Defaults.Key<Profile?>("profile")

        #expect(try defaults.moveValue(key, fromFile: old).moved == ["profile"])
        #expect(try openFresh(dir.file())[key] == profile)
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(
            try JSONDecoder().decode(Profile.self, from: Data(contentsOf: dir.file("profile.json.moved"))) == profile)
        #expect(try defaults.moveValue(key, fromFile: old) == Defaults.MoveReport(), "a second run finds nothing")

        // A file written again later is moved aside under another name, never over the first.
        try JSONEncoder().encode(profile).write(to: old)
        defaults[key] = nil
        try defaults.save()
        #expect(try defaults.moveValue(key, fromFile: old).moved == ["profile"])
        #expect(FileManager.default.fileExists(atPath: dir.file("profile.json.moved-2").path))
    }

    @Test func aFileThatIsNotJSONOrNotOfTheKeysTypeIsReportedAndLeftAsItIs() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let key = Defaults.Key<Profile?>("profile")
        let old = dir.file("profile.json")
        try Data("{\"name\": \"Ana\",\n \"born\": }".utf8).write(to: old)
        let bad = try #require(try defaults.moveValue(key, fromFile: old).failures.first)
        #expect(bad.error.code == .invalidJSON)
        #expect(bad.error.path == old.path && bad.error.line == 2 && bad.error.column != nil, "\(bad.error)")

        try Data("{\"name\": \"Ana\"}".utf8).write(to: old)
        let mismatch = try #require(try defaults.moveValue(key, fromFile: old).failures.first)
        #expect(mismatch.error.code == .decodingFailed)
        #expect(try Data(contentsOf: old) == Data("{\"name\": \"Ana\"}".utf8), "the file is left as it is")
        #expect(!defaults.hasStoredValue(for: key))
    }

    @Test func aFailedSaveLeavesTheFileWhereItWas() throws {
        let dir = try TemporaryDirectory()
        let plan = FaultPlan()
        let defaults = try FaultPlan.install(plan) { try Defaults(url: dir.file(), saveMode: .manual) }
        let old = dir.file("count.json")
        try Data("41".utf8).write(to: old)
        plan.fail(.fsync, on: .suffix(".tmp"), with: EIO)
        let key = Defaults.Key<Int>("count", default: 0)
        #expect(throws: DefaultsError.self) { try defaults.moveValue(key, fromFile: old) }
        #expect(FileManager.default.fileExists(atPath: old.path))
        #expect(!defaults.hasStoredValue(for: key))
        #expect(try defaults.moveValue(key, fromFile: old).moved == ["count"])
        #expect(defaults[key] == 41)
    }
}
