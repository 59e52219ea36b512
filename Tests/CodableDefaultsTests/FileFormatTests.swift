import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The file, byte for byte.
@Suite struct FileFormatTests {
    @Test func membersSortedOnePerLineValuesCompact() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.volume] = 0.8
        defaults[.profile] = Profile(name: "Mister Default", age: 29)
        defaults[Defaults.Key<[String: Int]>("B", default: [:])] = ["z": 1, "a": 2]
        defaults[Defaults.Key<String>("é", default: "")] = "accent"
        defaults[Defaults.Key<String>("a/b", default: "")] = "x/y"
        try defaults.save()
        let expected = """
            {
              "B": {"a":2,"z":1},
              "a/b": "x/y",
              "profile": {"age":29,"name":"Mister Default"},
              "volume": 0.8,
              "é": "accent"
            }

            """
        #expect(try text(dir.file()) == expected)
    }

    @Test func emptyStoreIsAnEmptyObject() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        defaults[.count] = 1
        try defaults.save()
        defaults.reset(.count)
        try defaults.save()
        #expect(try text(dir.file()) == "{}\n")
    }

    @Test func newKeysAreMergedIntoTheOrderAndRemovedOnesDropped() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        let names = ["m", "c", "x", "a"]
        for name in names { defaults[Defaults.Key<Int>(name, default: 0)] = name.count }
        try defaults.save()
        defaults[Defaults.Key<Int>("b", default: 0)] = 2
        defaults[Defaults.Key<Int>("z", default: 0)] = 26
        defaults.reset(Defaults.Key<Int>("m", default: 0))
        try defaults.save()
        #expect(try text(dir.file()) == "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 1,\n  \"x\": 1,\n  \"z\": 26\n}\n")
    }

    /// Random sets of values of changing lengths, additions and removals, each followed by a save: the file
    /// must always be exactly the sorted members (saves that change only values splice them into the last
    /// image; the others rebuild it).
    @Test(arguments: [3, 40])
    func randomEditsAlwaysGiveTheExactFile(editsPerSave: Int) throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        var expected: [String: String] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<600 {
            let name = "k\(Int.random(in: 0..<40, using: &generator))"
            let key = Defaults.Key<String>(name, default: "")
            switch Int.random(in: 0..<10, using: &generator) {
            case 0:
                defaults.reset(key)
                expected[name] = nil
            default:
                let value = String(repeating: "v", count: Int.random(in: 0..<30, using: &generator)) + "\(step)"
                defaults[key] = value
                expected[name] = value
            }
            if step % editsPerSave == 0 {
                try defaults.save()
                let members = expected.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                    .map { "  \"\($0)\": \"\(expected[$0]!)\"" }
                let file = members.isEmpty ? "{}\n" : "{\n" + members.joined(separator: ",\n") + "\n}\n"
                if FileManager.default.fileExists(atPath: dir.file().path) {
                    #expect(try text(dir.file()) == file, "step \(step)")
                } else {
                    #expect(members.isEmpty, "nothing saved yet at step \(step)")
                }
            }
        }
    }

    @Test func handEditedValuesAreKeptAsWrittenButCompacted() throws {
        let dir = try TemporaryDirectory()
        try write("{ \"zeta\" : [ 1 , 2 ],\n\"alpha\":{\"b\" : \"a b\", \"a\":1} }", to: dir.file())
        let defaults = try openFresh(dir.file())
        defaults[.count] = 3
        try defaults.save()
        #expect(
            try text(dir.file()) == "{\n  \"alpha\": {\"b\":\"a b\",\"a\":1},\n  \"count\": 3,\n  \"zeta\": [1,2]\n}\n")
    }

    @Test func aNewFileIsPrivateAndItsDirectoryIsCreated() throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("a/b/settings.json")
        let defaults = try openFresh(url)
        defaults[.count] = 1
        try defaults.save()
        let fileMode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        let dirMode =
            try FileManager.default.attributesOfItem(atPath: dir.url.appendingPathComponent("a/b").path)[
                .posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(dirMode == 0o700)
    }

    @Test func anExistingFilesModeIsKept() throws {
        let dir = try TemporaryDirectory()
        try write("{}", to: dir.file())
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: dir.file().path)
        let defaults = try openFresh(dir.file())
        defaults[.count] = 1
        try defaults.save()
        let mode = try FileManager.default.attributesOfItem(atPath: dir.file().path)[.posixPermissions] as? Int
        #expect(mode == 0o640)
    }

    @Test func onlyTheFileItsLockAndQueueFilesAndItsHistoryAreLeftBehind() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file())
        for index in 0..<20 {
            defaults[.count] = index
            try defaults.save()
        }
        #expect(
            try dir.contents() == [
                ".settings.json.history", ".settings.json.lock", ".settings.json.queue", "settings.json",
            ])
    }

    @Test func leftoverTemporaryFilesAreRemovedOnOpen() throws {
        let dir = try TemporaryDirectory()
        try write("{\"count\": 1}", to: dir.file())
        try write("{\"count\": 2", to: dir.file(".settings.json.999999.abc.tmp"))
        try write("unrelated", to: dir.file(".other.json.1.x.tmp"))
        let defaults = try openFresh(dir.file())
        #expect(defaults[.count] == 1)
        #expect(
            try dir.contents() == [
                ".other.json.1.x.tmp", ".settings.json.lock", ".settings.json.queue", "settings.json",
            ])
    }
}
