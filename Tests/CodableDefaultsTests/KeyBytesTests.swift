import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// Member names are bytes: two names that differ only in Unicode normalization (equal as Swift strings)
/// are two keys, each read, written, observed and saved with its own bytes.
@Suite struct KeyBytesTests {
    /// `é` as one code point, U+00E9: the UTF-8 bytes C3 A9.
    static let composed = "\u{E9}"
    /// `é` as `e` and U+0301 COMBINING ACUTE ACCENT: the UTF-8 bytes 65 CC 81.
    static let decomposed = "e\u{301}"

    /// A file as another program wrote it: one member named with the bytes C3 A9.
    static let composedFile: [UInt8] = [0x7B, 0x22, 0xC3, 0xA9, 0x22, 0x3A, 0x20, 0x31, 0x7D, 0x0A]  // {"é": 1}

    /// `{"é": 1, "é": 2}`, the first name C3 A9, the second 65 CC 81.
    static let bothSpellings = KeySpellings.bothSpellings

    @Test func theSpellingsHaveTheBytesThisSuiteAssumes() {
        #expect(Array(Self.composed.utf8) == [0xC3, 0xA9])
        #expect(Array(Self.decomposed.utf8) == [0x65, 0xCC, 0x81])
        #expect(Self.composed == Self.decomposed, "Swift compares strings by canonical equivalence")
        #expect(MemberName(Self.composed) != MemberName(Self.decomposed))
        #expect(MemberName(Self.composed) == MemberName(String(decoding: [0xC3, 0xA9], as: UTF8.self)))
    }

    @Test func aSaveAfterReadingTheOtherSpellingKeepsBothMembersWithTheirBytes() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(Self.composedFile).write(to: url)
        let defaults = try openFresh(url)
        let decomposed = Defaults.Key<Int>(Self.decomposed, default: 0)
        let composed = Defaults.Key<Int>(Self.composed, default: 0)

        #expect(defaults[decomposed] == 0, "the other spelling has no value")
        #expect(defaults[composed] == 1)
        defaults[decomposed] = 2
        #expect(defaults[composed] == 1)
        #expect(defaults[decomposed] == 2)
        try defaults.save()

        // Sorted by UTF-8 bytes: 65 before C3.
        let expected: [UInt8] =
            Array("{\n  \"".utf8) + [0x65, 0xCC, 0x81] + Array("\": 2,\n  \"".utf8) + [0xC3, 0xA9]
            + Array("\": 1\n}\n".utf8)
        #expect(try bytes(url) == expected)
        #expect(defaults.keys.map { Array($0.utf8) } == [[0x65, 0xCC, 0x81], [0xC3, 0xA9]])

        let reopened = try openFresh(url)
        #expect(reopened[composed] == 1)
        #expect(reopened[decomposed] == 2)
    }

    @Test func theStringKeyAPIReadsSetsAndRemovesOnlyItsOwnSpelling() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(Self.composedFile).write(to: url)
        let defaults = try openFresh(url)

        #expect(defaults.object(forKey: Self.decomposed) == nil)
        #expect(!defaults.hasStoredValue(forKey: Self.decomposed))
        defaults.set(3, forKey: Self.decomposed)
        #expect(defaults.integer(forKey: Self.composed) == 1)
        #expect(defaults.integer(forKey: Self.decomposed) == 3)
        defaults.removeValue(forKey: Self.decomposed)
        #expect(defaults.integer(forKey: Self.composed) == 1)
        #expect(defaults.hasStoredValue(forKey: Self.composed))
        #expect(!defaults.hasStoredValue(forKey: Self.decomposed))

        defaults.register(defaults: [Self.decomposed: 7])
        #expect(defaults.integer(forKey: Self.decomposed) == 7)
        #expect(defaults.integer(forKey: Self.composed) == 1)
        defaults.removeValue(forKey: Self.composed)
        #expect(defaults.object(forKey: Self.composed) == nil, "the registered value is the other spelling's")
        try defaults.save()
        #expect(try bytes(url) == Array("{}\n".utf8))
    }

    @Test func aBatchAndTheArgumentDomainKeepTheSpellingsApart() throws {
        let defaults = Defaults(store: Store(storage: MemoryStorage(), options: .default), saveMode: .manual, url: nil)
        let decomposed = Defaults.Key<Int>(Self.decomposed, default: 0)
        let composed = Defaults.Key<Int>(Self.composed, default: 0)
        defaults.batch {
            $0[composed] = 1
            $0[decomposed] = 2
            #expect($0[composed] == 1)
        }
        #expect(defaults[composed] == 1)
        #expect(defaults[decomposed] == 2)
        #expect(defaults.keys.count == 2)

        let arguments = ArgumentDomain.parse(["program", "-" + Self.composed, "1", "-" + Self.decomposed, "2"])
        #expect(arguments.count == 2)
        #expect(arguments[MemberName(Self.composed)] == Array("1".utf8))
        #expect(arguments[MemberName(Self.decomposed)] == Array("2".utf8))
    }

    @Test func observersOfOneSpellingAreNotToldOfTheOther() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(Self.composedFile).write(to: url)
        let defaults = try openFresh(url)
        let composed = Defaults.Key<Int>(Self.composed, default: 0)
        let decomposed = Defaults.Key<Int>(Self.decomposed, default: 0)
        let composedChanges = ChangeLog()
        let decomposedChanges = ChangeLog()
        let tokens = [
            defaults.observe(composed) { composedChanges.append($0.oldValue, $0.newValue) },
            defaults.observe(decomposed) { decomposedChanges.append($0.oldValue, $0.newValue) },
        ]
        defer { for token in tokens { token.cancel() } }

        // Local changes are delivered on the setting thread before the set returns.
        defaults[decomposed] = 2
        defaults[composed] = 5
        #expect(composedChanges.changes == [[1, 5]], "only its own change")
        #expect(decomposedChanges.changes == [[0, 2]])

        // Another program changes only the decomposed member; a reload tells only its observers.
        let rewritten: [UInt8] =
            Array("{\n  \"".utf8) + [0x65, 0xCC, 0x81] + Array("\": 9,\n  \"".utf8) + [0xC3, 0xA9]
            + Array("\": 5\n}\n".utf8)
        try await defaults.save()
        try Data(rewritten).write(to: url, options: .atomic)
        try await defaults.reload()
        // The reload tells them, or the watcher that read the file first does, on the store's queue: wait.
        #expect(try await eventually { decomposedChanges.changes == [[0, 2], [2, 9]] })
        #expect(composedChanges.changes == [[1, 5]])
    }

    @Test func theParserAcceptsBothSpellingsAndRefusesByteIdenticalDuplicates() throws {
        let members = try JSONParser.parse(Self.bothSpellings)
        #expect(members.map { Array($0.key.utf8) } == [[0xC3, 0xA9], [0x65, 0xCC, 0x81]])
        #expect(members.map(\.value) == [Array("1".utf8), Array("2".utf8)])
        // The same through escapes, and nested.
        let escaped = try JSONParser.parse(Array(#"{"x": {"\u00e9": 1, "e\u0301": 2}}"#.utf8))
        #expect(escaped.count == 1)
        #expect(try JSONParser.compactValue(Array(#"{"\u00e9": 1, "e\u0301": 2}"#.utf8)).count > 0)

        // Byte-identical names (here the second spelled with an escape of the same code point) are duplicates.
        let duplicate: [UInt8] =
            Array("{\n  \"".utf8) + [0xC3, 0xA9] + Array("\": 1,\n  \"".utf8) + [0xC3, 0xA9] + Array("\": 2\n}".utf8)
        for input in [duplicate, Array("{\n  \"\u{E9}\": 1,\n  \"\\u00e9\": 2\n}".utf8)] {
            do {
                _ = try JSONParser.parse(input)
                Issue.record("a duplicate name was accepted")
            } catch {
                #expect(error.kind == .duplicateKey)
                #expect(error.line == 3)
                #expect(error.column == 3)
                #expect(error.key.map { Array($0.utf8) } == [0xC3, 0xA9])
            }
        }

        // Opening such a file reports path, line and column.
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(duplicate).write(to: url)
        do {
            _ = try openFresh(url)
            Issue.record("a file with a duplicate name opened")
        } catch let error as DefaultsError {
            #expect(error.code == .invalidJSON)
            #expect(error.line == 3 && error.column == 3)
            #expect(error.path == url.path)
        } catch {
            Issue.record(error)
        }
    }

    @Test func aLargeObjectComparesNamesByBytesToo() throws {
        // Past a dozen members the duplicate check uses a hash set.
        let filler = (0..<20).map { "\"k\($0)\": 0, " }.joined()
        let members = try JSONParser.parse(Array("{\(filler)\"\(Self.composed)\": 1, \"\(Self.decomposed)\": 2}".utf8))
        #expect(members.count == 22)
        let duplicate = "{\(filler)\"\(Self.composed)\": 1, \"\(Self.decomposed)\": 2, \"\\u00e9\": 3}"
        do {
            _ = try JSONParser.parse(Array(duplicate.utf8))
            Issue.record("a duplicate name was accepted")
        } catch {
            #expect(error.kind == .duplicateKey)
            #expect(error.key.map { Array($0.utf8) } == [0xC3, 0xA9])
        }
    }

    @Test func aSerializedDocumentKeepsBothSpellings() throws {
        let members = try JSONParser.parse(Self.bothSpellings)
        let reparsed = try JSONParser.parse(FileImage(members: members).bytes)
        #expect(reparsed == members.sorted { precedesInFile($0.key, $1.key) })
        #expect(reparsed.count == 2)
        #expect(
            ParsedMember(key: Self.composed, value: [0x31]) != ParsedMember(key: Self.decomposed, value: [0x31]))
    }

    @Test func migrationsRefuseAFileWhoseNamesWouldMerge() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(Self.bothSpellings).write(to: url)
        let options = Defaults.Options(migrations: [.init(to: 1) { _ in }])
        do {
            _ = try openFresh(url, options: options)
            Issue.record("the migration merged two members")
        } catch let error as DefaultsError {
            #expect(error.code == .migrationFailed)
            #expect(error.message.contains(#""\u00E9""#), "\(error.message)")
            #expect(error.message.contains(#""e\u0301""#), "\(error.message)")
            #expect(error.path == url.path)
        } catch {
            Issue.record(error)
        }
        #expect(try bytes(url) == Self.bothSpellings, "the file is left as it is")
        let left = try directory.contents()
        #expect(
            !left.contains { $0.hasSuffix(".bak") || $0.hasSuffix(".tmp") }, "no backup, no temporary file: \(left)")
    }

    /// File names are bytes too: two files whose names differ only in normalization are two files to the
    /// kernel, and get two stores in one process.
    @Test func filesWhoseNamesDifferOnlyInNormalizationGetTwoStores() throws {
        let dir = try TemporaryDirectory()
        let first = try Defaults(url: dir.file(Self.composed + ".json"), saveMode: .manual)
        let second = try Defaults(url: dir.file(Self.decomposed + ".json"), saveMode: .manual)
        #expect(first.store !== second.store)
        first[.count] = 1
        second[.count] = 2
        try first.save()
        try second.save()
        #expect(try text(dir.file(Self.composed + ".json")) == "{\n  \"count\": 1\n}\n")
        #expect(try text(dir.file(Self.decomposed + ".json")) == "{\n  \"count\": 2\n}\n")
    }
}

/// The changes one observer saw, as `[old, new]` pairs.
private final class ChangeLog: Sendable {
    private let storage = Locked<[[Int]]>([])

    var changes: [[Int]] { storage.withLock { $0 } }

    func append(_ old: Int, _ new: Int) { storage.withLock { $0.append([old, new]) } }
}
