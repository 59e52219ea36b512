import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// A file that cannot be read or parsed is an error, and is never written over.
@Suite struct LoadErrorTests {
    @Test func corruptFileFailsToOpenWithLineAndColumnAndIsNotTouched() throws {
        let dir = try TemporaryDirectory()
        let corrupt = "{\n  \"volume\": 0.8,\n  \"count\": 3 x\n}\n"
        try write(corrupt, to: dir.file())
        let before = try bytes(dir.file())
        let error = #expect(throws: DefaultsError.self) { try Defaults(url: dir.file()) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.path == dir.file().path)
        #expect(error?.line == 3)
        #expect(error?.column == 14)
        #expect(error.map { "\($0)" }?.hasPrefix("\(dir.file().path):3:14: ") == true)
        #expect(try bytes(dir.file()) == before)
        #expect(try dir.contents() == ["settings.json"])
    }

    @Test(arguments: [
        ("[1, 2]", "not an object"),
        ("{\"a\": 1, \"a\": 2}", "duplicate"),
        ("{\"a\": 1} trailing", "trailing"),
        ("{\"a\": 01}", "number"),
        (" \n\t", "whitespace only"),
    ])
    func invalidFilesAreRefused(content: String, label: String) throws {
        let dir = try TemporaryDirectory()
        try write(content, to: dir.file())
        let error = #expect(throws: DefaultsError.self, "\(label)") { try openFresh(dir.file()) }
        #expect(error?.code == .invalidJSON, "\(label)")
        #expect(error?.line != nil, "\(label)")
        #expect(try text(dir.file()) == content)
    }

    @Test func anEmptyFileIsAnEmptyStore() throws {
        let dir = try TemporaryDirectory()
        try write("", to: dir.file())
        let defaults = try openFresh(dir.file())
        #expect(defaults.keys.isEmpty)
        #expect(try bytes(dir.file()) == [], "opening writes nothing")
        defaults[.count] = 1
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"count\": 1\n}\n")

        // With migrations: nothing to migrate or back up; the first save writes the newest version.
        try write("", to: dir.file("migrated.json"))
        let step = Defaults.Migration(to: 3) { values in values["ran"] = .bool(true) }
        let migrated = try openFresh(dir.file("migrated.json"), options: .init(migrations: [step]))
        #expect(migrated.keys.isEmpty)
        migrated[.count] = 2
        try migrated.save()
        #expect(try text(dir.file("migrated.json")) == "{\n  \"$schemaVersion\": 3,\n  \"count\": 2\n}\n")
        #expect(!FileManager.default.fileExists(atPath: dir.file("migrated.json.v0.bak").path))
    }

    /// A file this store read with data in it, then found empty, is being rewritten in place by another program
    /// (truncated, not yet written): a save must not take that for "every key removed" and write over it.
    @Test func aFileEmptiedSinceItWasReadIsNotWrittenOver() throws {
        let dir = try TemporaryDirectory()
        try write("{\"name\": \"theirs\"}", to: dir.file())
        let defaults = try openFresh(dir.file())
        let handle = try FileHandle(forWritingTo: dir.file())
        try handle.truncate(atOffset: 0)
        defaults[.count] = 1
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .invalidJSON, "\(String(describing: error))")
        #expect(error?.message.contains("empty") == true, "\(String(describing: error))")
        #expect(try bytes(dir.file()) == [], "the emptied file is not written over")
        #expect(defaults.hasStoredValue(for: .count), "the change stays pending")
        // The other program finishes its in-place write; the next save merges with it.
        try handle.write(contentsOf: Data("{\"name\": \"new\"}".utf8))
        try handle.close()
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"count\": 1,\n  \"name\": \"new\"\n}\n")
    }

    @Test func invalidUTF8IsRefused() throws {
        let dir = try TemporaryDirectory()
        try Data([0x7B, 0x22, 0x61, 0xFF, 0x22, 0x3A, 0x31, 0x7D]).write(to: dir.file())
        let error = #expect(throws: DefaultsError.self) { try openFresh(dir.file()) }
        #expect(error?.code == .invalidJSON)
    }

    @Test func tooDeepIsRefused() throws {
        let dir = try TemporaryDirectory()
        try write(
            "{\"a\": " + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}", to: dir.file())
        let error = #expect(throws: DefaultsError.self) { try openFresh(dir.file()) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.key == "a")
    }

    @Test func fileOverTheSizeLimitIsRefused() throws {
        let dir = try TemporaryDirectory()
        try write("{\"a\": \"\(String(repeating: "x", count: 100))\"}", to: dir.file())
        let error = #expect(throws: DefaultsError.self) {
            try Defaults(url: dir.file(), options: .init(maximumFileSize: 64))
        }
        #expect(error?.code == .fileTooLarge)
        #expect(error?.path == dir.file().path)
    }

    /// A limit no file could meet (a negative one, a depth under 1: the top-level object is level 1) is refused
    /// when opening, with the option's name, rather than refusing every file.
    @Test(arguments: [
        Defaults.Options(maximumFileSize: -1), Defaults.Options(maximumDepth: -1), Defaults.Options(maximumDepth: 0),
        Defaults.Options(maximumKeyLength: Int.min),
    ])
    func negativeLimitsAreRefused(options: Defaults.Options) throws {
        let dir = try TemporaryDirectory()
        let error = #expect(throws: DefaultsError.self) { try Defaults(url: dir.file(), options: options) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("maximum") == true)
        #expect(error?.path == dir.file().path)
    }

    @Test func numbersOutOfRangeForTheAskedTypeAreDecodingErrors() throws {
        let dir = try TemporaryDirectory()
        try write("{\"small\": 300, \"huge\": 1e300, \"fraction\": 2.5}", to: dir.file())
        let defaults = try openFresh(dir.file())
        defaults.onError = ErrorLog().handler
        for (name, read) in [
            ("small", { try defaults.value(for: Defaults.Key<UInt8>("small", default: 0)) != 0 }),
            ("huge", { try defaults.value(for: Defaults.Key<Int>("huge", default: 0)) != 0 }),
            ("fraction", { try defaults.value(for: Defaults.Key<Int>("fraction", default: 0)) != 0 }),
        ] as [(String, () throws -> Bool)] {
            let error = #expect(throws: DefaultsError.self, "\(name)") { _ = try read() }
            #expect(error?.code == .decodingFailed, "\(name)")
            #expect(error?.key == name)
        }
        #expect(defaults[Defaults.Key<Double>("huge", default: 0)] == 1e300, "it reads as a type that holds it")
    }

    @Test func keysOverTheLengthLimitAreRefused() throws {
        let dir = try TemporaryDirectory()
        let long = String(repeating: "k", count: 1025)
        try write("{\"\(long)\": 1}", to: dir.file())
        let error = #expect(throws: DefaultsError.self) { try openFresh(dir.file()) }
        #expect(error?.code == .keyTooLong)
        #expect(error?.key == long)
        #expect(try openFresh(dir.file(), options: .init(maximumKeyLength: 2048)).integer(forKey: long) == 1)

        let defaults = try openFresh(dir.file("other.json"))
        let errors = ErrorLog()
        defaults.onError = errors.handler
        defaults[Defaults.Key<Int>(long, default: 0)] = 1
        defaults.set(2, forKey: long)
        defaults.batch { $0[Defaults.Key<Int>(long, default: 0)] = 3 }
        #expect(throws: DefaultsError.self) { try defaults.set(4, for: Defaults.Key<Int>(long, default: 0)) }
        #expect(errors.errors.map(\.code) == [.keyTooLong, .keyTooLong, .keyTooLong])
        #expect(defaults.keys.isEmpty)
        let fits = String(repeating: "k", count: 1024)
        defaults.set(5, forKey: fits)
        #expect(defaults.integer(forKey: fits) == 5)
    }

    @Test func fifoAndDirectoryAreRefused() throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.file("fifo.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let fifoError = #expect(throws: DefaultsError.self) { try openFresh(fifo) }
        #expect(fifoError?.code == .notARegularFile)
        let sub = dir.file("sub.json")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
        let dirError = #expect(throws: DefaultsError.self) { try openFresh(sub) }
        #expect(dirError?.code == .notARegularFile)
    }

    @Test func fileCorruptedAfterOpeningIsNeitherReloadedNorOverwritten() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.count] = 1
        try defaults.save()
        try write("{\"count\": 2,,}", to: dir.file())
        let before = try bytes(dir.file())

        let reloadError = #expect(throws: DefaultsError.self) { try defaults.reload() }
        #expect(reloadError?.code == .invalidJSON)
        #expect(defaults[.count] == 1, "the last good state stays")

        defaults[.count] = 5
        let flushError = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(flushError?.code == .invalidJSON)
        #expect(flushError?.line == 1)
        #expect(try bytes(dir.file()) == before)
        #expect(defaults[.count] == 5)

        // Once the file is fixed, the pending change is written on top of it.
        try write("{\"count\": 2, \"other\": true}", to: dir.file())
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"count\": 5,\n  \"other\": true\n}\n")
    }

    @Test func valueOfTheWrongTypeStaysInTheFile() throws {
        let dir = try TemporaryDirectory()
        try write("{\n  \"profile\": {\"age\":\"old\",\"name\":\"X\"},\n  \"volume\": 0.1\n}\n", to: dir.file())
        let defaults = try openFresh(dir.file())
        defaults.onError = ErrorLog().handler
        #expect(defaults[.profile] == Profile(name: "Guest", age: 0))
        let error = #expect(throws: DefaultsError.self) { try defaults.value(for: .profile) }
        #expect(error?.key == "profile")
        #expect(error?.message.contains("age") == true)
        defaults[.volume] = 0.9
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"profile\": {\"age\":\"old\",\"name\":\"X\"},\n  \"volume\": 0.9\n}\n")
        // Setting the key replaces the bad value.
        defaults[.profile] = Profile(name: "Y", age: 2)
        try defaults.save()
        #expect(try text(dir.file()).contains("\"profile\": {\"age\":2,\"name\":\"Y\"}"))
    }
}
