import CodableDefaults
import Foundation
import Testing

/// Tests of `codable-defaults history` and `codable-defaults undo`, run as a real process on store files whose
/// history the tool's own writes (and, for secret keys, this process through the library) recorded.
@Suite struct HistoryToolTests {
    /// Writes `a` 1, `b` "x", `a` 2, deletes `b`: revisions 1 to 4.
    private func makeFourSaves(_ sandbox: ToolSandbox) async throws {
        try await sandbox.expectSuccess(["write", "s.json", "a", "1"])
        try await sandbox.expectSuccess(["write", "s.json", "b", "--string", "x"])
        try await sandbox.expectSuccess(["write", "s.json", "a", "2"])
        try await sandbox.expectSuccess(["delete", "s.json", "b"])
    }

    /// The stored members of `s.json`, as a dictionary.
    private func stored(_ sandbox: ToolSandbox, _ name: String = "s.json") throws -> NSDictionary {
        let object = try JSONSerialization.jsonObject(with: Data(try sandbox.bytes(name)))
        return try #require(object as? NSDictionary)
    }

    /// Every name in the work directory with the bytes of each file, hidden ones (the history, the lock file)
    /// included.
    private func snapshot(_ sandbox: ToolSandbox) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try sandbox.workContents() { files[name] = try sandbox.bytes(name) }
        return files
    }

    /// The lines of `history --json`, each parsed.
    private func jsonHistory(
        _ sandbox: ToolSandbox, _ arguments: [String] = []
    ) async throws -> [[String: Any]] {
        let result = try await sandbox.run(["history", "s.json", "--json"] + arguments)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.isEmpty || result.stdout.hasSuffix("\n"))
        return try result.stdout.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])
            return try #require(object as? [String: Any], "\(line)")
        }
    }

    /// Whether `line` is a save's header: `REVISION  TIME  USER@HOST  codable-defaults[PID]`, then `suffix`.
    private func isHeader(_ line: Substring, revision: Int, suffix: String = "") -> Bool {
        let parts = line.components(separatedBy: "  ")
        guard parts.count == (suffix.isEmpty ? 4 : 5), parts[0] == String(revision) else { return false }
        let time = parts[1]
        let isTime =
            time.count == 24 && time.hasSuffix("Z") && time.dropFirst(10).hasPrefix("T")
            && time.dropFirst(19).hasPrefix(".")
        return isTime && parts[2].contains("@") && parts[3].hasPrefix("codable-defaults[") && parts[3].hasSuffix("]")
            && (suffix.isEmpty || parts[4] == suffix)
    }

    // MARK: history

    @Test func historyPrintsEachSaveNewestFirstWithItsChanges() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let result = try await sandbox.run(["history", "s.json"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let blocks = result.stdout.components(separatedBy: "\n\n")
        try #require(blocks.count == 4, "\(result.stdout)")
        let expected = [(4, "- b\t\"x\""), (3, "~ a\t1 → 2"), (2, "+ b\t\"x\""), (1, "+ a\t1")]
        for (block, (revision, change)) in zip(blocks, expected) {
            let lines = block.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
            #expect(lines.count == 2, "\(block)")
            #expect(isHeader(lines[0], revision: revision), "\(lines[0])")
            #expect(lines.last.map(String.init) == change, "\(block)")
        }
        #expect(result.stdout.hasSuffix("+ a\t1\n"))
    }

    @Test func historyJSONIsOneParsableLinePerSaveWithTheRecordsFields() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let lines = try await jsonHistory(sandbox)
        try #require(lines.count == 4)
        #expect(lines.map { $0["revision"] as? Int } == [4, 3, 2, 1])
        for line in lines {
            #expect(Set(line.keys) == ["revision", "time", "pid", "user", "program", "host", "kind", "changes"])
            let time = try #require(line["time"] as? String)
            #expect(time.count == 24 && time.hasSuffix("Z"), "\(time)")
            #expect((line["pid"] as? Int).map { $0 > 0 } == true)
            #expect(line["program"] as? String == "codable-defaults")
            #expect(line["kind"] as? String == "save")
            #expect((line["user"] as? String)?.isEmpty == false && (line["host"] as? String)?.isEmpty == false)
        }
        let removal = try #require(lines[0]["changes"] as? [String: [String: Any]])
        #expect(removal.keys.sorted() == ["b"] && removal["b"]?["old"] as? String == "x" && removal["b"]?["new"] == nil)
        let change = try #require(lines[1]["changes"] as? [String: [String: Any]])
        #expect(change["a"]?["old"] as? Int == 1 && change["a"]?["new"] as? Int == 2)
        let addition = try #require(lines[3]["changes"] as? [String: [String: Any]])
        #expect(addition["a"]?["old"] == nil && addition["a"]?["new"] as? Int == 1)

        // A revert has its kind and its revision.
        try await sandbox.expectSuccess(["undo", "s.json", "--to", "1"])
        let revert = try #require(try await jsonHistory(sandbox).first)
        #expect(revert["revision"] as? Int == 5 && revert["kind"] as? String == "revert" && revert["to"] as? Int == 1)
    }

    @Test func historyOfAKeyListsOnlyTheSavesThatChangedIt() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let result = try await sandbox.run(["history", "s.json", "a"])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let blocks = result.stdout.components(separatedBy: "\n\n")
        #expect(blocks.count == 2, "\(result.stdout)")
        #expect(!result.stdout.contains("\"x\""))
        #expect(try await jsonHistory(sandbox, ["b"]).map { $0["revision"] as? Int } == [4, 2])
        let none = try await sandbox.run(["history", "s.json", "nope"])
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.isEmpty)
    }

    @Test func anEmptyHistoryPrintsNothingAndCreatesNothing() async throws {
        let sandbox = try ToolSandbox()
        for arguments in [["history", "s.json"], ["history", "s.json", "--json"], ["history", "s.json", "k"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(arguments)")
        }
        #expect(try sandbox.workContents().isEmpty)
    }

    // MARK: undo

    @Test func undoRevertsTheLastSaveAndPrintsWhatItChanged() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let undo = try await sandbox.run(["undo", "s.json"])
        #expect(undo.status == 0 && undo.stderr.isEmpty, "\(undo.stderr)")
        #expect(undo.stdout == "+ b\t\"x\"\n")
        #expect(try stored(sandbox) == ["a": 2, "b": "x"])
        // The undo is a save of its own: undoing it takes b away again.
        #expect(try await sandbox.run(["undo", "s.json"]).stdout == "- b\t\"x\"\n")
        #expect(try stored(sandbox) == ["a": 2])
        let history = try await sandbox.run(["history", "s.json"])
        let header = try #require(history.stdout.split(separator: "\n").first)
        #expect(isHeader(header, revision: 6, suffix: "(revert to 4)"), "\(header)")
    }

    @Test func undoOfAKeyRevertsOnlyItsLastChange() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        try await sandbox.expectSuccess(["write", "s.json", "c", "true"])
        let undo = try await sandbox.run(["undo", "s.json", "a"])
        #expect(undo.status == 0 && undo.stderr.isEmpty, "\(undo.stderr)")
        #expect(undo.stdout == "~ a\t2 → 1\n")
        #expect(try stored(sandbox) == ["a": 1, "c": true])
        // A key no save changed: the history cannot say; nothing is written.
        let before = try snapshot(sandbox)
        let none = try await sandbox.run(["undo", "s.json", "nope"])
        #expect(none.status == 1 && none.stdout.isEmpty)
        #expect(none.stderr.contains("key \"nope\": the history has no change of the key to undo"), "\(none.stderr)")
        #expect(try snapshot(sandbox) == before)
    }

    @Test func undoToARevisionOrATimePutsTheStoreBackAsItWasThen() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let toTwo = try await sandbox.run(["undo", "s.json", "--to", "2"])
        #expect(toTwo.status == 0 && toTwo.stderr.isEmpty, "\(toTwo.stderr)")
        #expect(toTwo.stdout == "~ a\t2 → 1\n+ b\t\"x\"\n")
        #expect(try stored(sandbox) == ["a": 1, "b": "x"])
        // Nothing to change: nothing printed, nothing recorded.
        let again = try await sandbox.run(["undo", "s.json", "--to", "2"])
        #expect(again.status == 0 && again.stdout.isEmpty && again.stderr.isEmpty)
        #expect(try await jsonHistory(sandbox).count == 5)

        // The time of revision 3 (with its milliseconds), and a time before every save (without).
        let times = try await jsonHistory(sandbox).compactMap { $0["time"] as? String }
        let third = times[times.count - 3]
        let toThird = try await sandbox.run(["undo", "s.json", "--to", third])
        #expect(toThird.status == 0 && toThird.stderr.isEmpty, "\(toThird.stderr)")
        #expect(toThird.stdout == "~ a\t1 → 2\n", "\(third)")
        #expect(try stored(sandbox) == ["a": 2, "b": "x"])
        let keyBefore = try await sandbox.run(["undo", "s.json", "b", "--to", "2000-01-01T00:00:00Z"])
        #expect(keyBefore.stdout == "- b\t\"x\"\n", "\(keyBefore.stderr)")
        #expect(try stored(sandbox) == ["a": 2])
        let toZero = try await sandbox.run(["undo", "s.json", "--to", "0"])
        #expect(toZero.stdout == "- a\t2\n", "\(toZero.stderr)")
        #expect(try stored(sandbox) == [:])
    }

    @Test func aDryRunOfUndoPrintsTheChangesAndWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        for arguments in [
            ["undo", "s.json"], ["undo", "s.json", "a"], ["undo", "s.json", "--to", "1"],
            ["undo", "s.json", "b", "--to", "2"], ["undo", "s.json", "--to", "2000-01-01T00:00:00.5Z"],
            ["undo", "s.json", "--to", "4"],
        ] {
            let before = try snapshot(sandbox)
            let dry = try await sandbox.run(arguments + ["--dry-run"])
            #expect(dry.status == 0 && dry.stderr.isEmpty, "\(arguments): \(dry.stderr)")
            #expect(try snapshot(sandbox) == before, "\(arguments) wrote nothing")
            // The real run makes the changes the dry run printed; then it is undone, back to revision 4.
            let real = try await sandbox.run(arguments)
            #expect(real.status == 0, "\(arguments): \(real.stderr)")
            #expect(real.stdout == dry.stdout, "\(arguments)")
            try await sandbox.expectSuccess(["undo", "s.json", "--to", "4"])
            #expect(try stored(sandbox) == ["a": 2], "\(arguments)")
        }
        // The status of a real run that the history refuses, and nothing created on a missing store.
        let missing = try await sandbox.run(["undo", "sub/none.json", "--dry-run"])
        #expect(missing.status == 1 && missing.stdout.isEmpty && missing.stderr.contains("no saves"))
        let none = try await sandbox.run(["undo", "s.json", "nope", "--dry-run"])
        #expect(none.status == 1 && none.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: sandbox.work.appendingPathComponent("sub").path))
    }

    @Test func undoWithoutHistoryExitsWithOneAndWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        for arguments in [["undo", "s.json"], ["undo", "s.json", "k"], ["undo", "s.json", "--to", "0"]] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
        }
        #expect(try sandbox.workContents().isEmpty)
        // A file saved before the history was kept: nothing recorded, nothing to undo.
        try sandbox.create("old.json", #"{"a":1}"# + "\n")
        let old = try await sandbox.run(["undo", "old.json"])
        #expect(old.status == 1 && old.stderr.contains("no saves to revert"), "\(old.stderr)")
        #expect(try sandbox.workContents() == ["old.json"])
    }

    @Test func undoBeyondWhatTheHistoryKeptExitsWithOneAndWritesNothing() async throws {
        let sandbox = try ToolSandbox()
        // A history whose saves before revision 5 were dropped by its bound.
        try sandbox.create("s.json", #"{"a":3}"# + "\n")
        let author = #""pid":7,"user":"ann","program":"app","host":"box","kind":"save""#
        try sandbox.create(
            ".s.json.history",
            #"{"revision":5,"time":"2026-12-03T04:05:05.000Z","# + author + #","changes":{"a":{"old":1,"new":2}}}"#
                + "\n" + #"{"revision":6,"time":"2026-12-03T04:05:06.000Z","# + author
                + #","changes":{"a":{"old":2,"new":3}}}"# + "\n")
        let before = try snapshot(sandbox)
        for to in ["3", "2026-12-03T04:05:04.999Z"] {
            for dryRun in [[], ["--dry-run"]] {
                let result = try await sandbox.run(["undo", "s.json", "--to", to] + dryRun)
                #expect(result.status == 1 && result.stdout.isEmpty, "\(to) \(dryRun): \(result.stderr)")
                #expect(result.stderr.contains("history before revision 5 is gone"), "\(result.stderr)")
                #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
            }
        }
        #expect(try snapshot(sandbox) == before)
        // Right before the oldest record kept is still known: its old value.
        let dry = try await sandbox.run(["undo", "s.json", "--to", "2026-12-03T04:05:05Z", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout == "~ a\t3 → 2\n", "\(dry.stderr)")
        let toFour = try await sandbox.run(["undo", "s.json", "--to", "4", "--dry-run"])
        #expect(toFour.status == 0 && toFour.stdout == "~ a\t3 → 1\n", "\(toFour.stderr)")
        #expect(try snapshot(sandbox) == before)
        let real = try await sandbox.run(["undo", "s.json", "--to", "4"])
        #expect(real.status == 0 && real.stdout == toFour.stdout, "\(real.stderr)")
        #expect(try stored(sandbox) == ["a": 1])
    }

    /// `undo --to` past a line of the history that holds no record writes nothing (exit 1, the file unchanged);
    /// a torn last record (a crash while it was written) is a note, and the undo is made (exit 0).
    @Test func undoPastAnUnreadableLineWritesNothingAndATornLastRecordIsANote() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let history = sandbox.work.appendingPathComponent(".s.json.history")
        var lines = try sandbox.text(".s.json.history").split(separator: "\n", omittingEmptySubsequences: false)
        lines[1] = "this line was edited by hand"
        try Data(lines.joined(separator: "\n").utf8).write(to: history)
        let before = try snapshot(sandbox)
        for dryRun in [[], ["--dry-run"]] {
            let result = try await sandbox.run(["undo", "s.json", "--to", "0"] + dryRun)
            #expect(result.status == 1 && result.stdout.isEmpty, "\(dryRun): \(result.stderr)")
            #expect(result.stderr.contains("\(history.path):2:"), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was written"), "\(result.stderr)")
            #expect(!result.stderr.contains("store file"), "\(result.stderr)")
        }
        #expect(try snapshot(sandbox) == before)

        // The edited line back as a record, and a record cut short after the last.
        try Data(
            (try sandbox.text(".s.json.history").replacingOccurrences(
                of: "this line was edited by hand\n", with: "") + #"{"revision":5,"ti"#).utf8
        ).write(to: history)
        let undone = try await sandbox.run(["undo", "s.json"])
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(undone.stdout == "+ b\t\"x\"\n", "\(undone.stdout)")
        #expect(undone.stderr.hasPrefix("codable-defaults: note: \(history.path):"), "\(undone.stderr)")
        #expect(try stored(sandbox) == ["a": 2, "b": "x"])
    }

    @Test func aToThatIsNeitherARevisionNorAUTCTimeIsAUsageError() async throws {
        let sandbox = try ToolSandbox()
        try await makeFourSaves(sandbox)
        let before = try snapshot(sandbox)
        for value in [
            "yesterday", "-1", "1.5", "", "2026-02-30T00:00:00Z", "2026-12-03T04:05:06", "2026-12-03T04:05:06+01:00",
            "2026-12-03T04:05:06.Z", "2026-12-03T04:05:06.1234567890Z", "2026-12-03 04:05:06Z", "99999999999999999999",
        ] {
            let result = try await sandbox.run(["undo", "s.json", "--to=\(value)"])
            #expect(result.status == 2, "\(value): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("codable-defaults: --to "), "\(value): \(result.stderr)")
            if !value.isEmpty { #expect(result.stderr.contains(value), "\(result.stderr)") }
            #expect(result.stderr.contains("Usage: codable-defaults undo"), "\(result.stderr)")
        }
        #expect(try snapshot(sandbox) == before)
    }

    // MARK: Secrets

    @Test func aSecretKeysValueIsNeverPrintedNorRecordedByHistoryOrUndo() async throws {
        let sandbox = try ToolSandbox()
        let url = sandbox.work.appendingPathComponent("s.json")
        let token = Defaults.Key<String?>("token", secret: true)
        do {
            let defaults = try Defaults(url: url, saveMode: .manual)
            defaults[token] = "s3cr3t-first"
            try await defaults.save()
        }
        try await sandbox.expectSuccess(["write", "s.json", "volume", "1"])
        do {
            let defaults = try Defaults(url: url, saveMode: .manual)
            defaults[token] = "s3cr3t-second"
            try await defaults.save()
        }

        let history = try await sandbox.run(["history", "s.json"])
        #expect(history.status == 0 && history.stderr.isEmpty, "\(history.stderr)")
        #expect(history.stdout.contains("~ token\t<secret> → <secret>\n"), "\(history.stdout)")
        #expect(history.stdout.contains("+ token\t<secret>\n"), "\(history.stdout)")
        let json = try await jsonHistory(sandbox)
        #expect((json[0]["changes"] as? [String: [String: String]])?["token"] == ["secret": "changed"])
        #expect((json[2]["changes"] as? [String: [String: String]])?["token"] == ["secret": "added"])

        // Putting a secret value back is refused, without its value.
        let before = try snapshot(sandbox)
        for arguments in [["undo", "s.json"], ["undo", "s.json", "token"], ["undo", "s.json", "--dry-run"]] {
            let refused = try await sandbox.run(arguments)
            #expect(refused.status == 1 && refused.stdout.isEmpty, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("key \"token\": the history keeps no value of a secret key"))
            #expect(!refused.stderr.contains("s3cr3t"), "\(refused.stderr)")
        }
        #expect(try snapshot(sandbox) == before)

        // Removing it is no restore: the tool, which declares no key, withholds its value as the history shows it.
        let dry = try await sandbox.run(["undo", "s.json", "--to", "0", "--dry-run"])
        #expect(dry.status == 0 && dry.stderr.isEmpty, "\(dry.stderr)")
        #expect(dry.stdout == "- token\t<secret>\n- volume\t1\n")
        #expect(try snapshot(sandbox) == before)
        let undo = try await sandbox.run(["undo", "s.json", "--to", "0"])
        #expect(undo.status == 0 && undo.stderr.isEmpty, "\(undo.stderr)")
        #expect(undo.stdout == dry.stdout)
        #expect(try stored(sandbox) == [:])
        let revert = try #require(try await jsonHistory(sandbox).first)
        let changes = try #require(revert["changes"] as? [String: [String: Any]])
        #expect(changes["token"]?.keys.sorted() == ["secret"] && changes["token"]?["secret"] as? String == "removed")
        #expect(changes["volume"]?["old"] as? Int == 1)
        for name in try sandbox.workContents() {
            #expect(!(try sandbox.text(name)).contains("s3cr3t"), "\(name) holds no secret value")
        }
    }

    // MARK: Help

    @Test func historyAndUndoAreInTheHelpFromTheirDeclarations() async throws {
        let sandbox = try ToolSandbox()
        let general = try await sandbox.run(["--help"])
        #expect(general.stdout.contains("\n  history FILE [KEY] "), "\(general.stdout)")
        #expect(general.stdout.contains("\n  undo FILE [KEY] "), "\(general.stdout)")
        let words = general.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("explain, history, undo"), "the added commands name them")
        #expect(general.stdout.contains("undo when the history"))
        let undo = try await sandbox.run(["help", "undo"])
        for text in ["--to REVISION|TIME", "--dry-run", "--etcd URLS", "2026-12-03T04:05:06Z"] {
            #expect(undo.stdout.contains(text), "\(text)")
        }
        let history = try await sandbox.run(["help", "history"])
        for text in ["--json", "--etcd URLS", "\"kind\":\"save\"", "<secret>"] {
            #expect(history.stdout.contains(text), "\(text)")
        }
        #expect(try await sandbox.run(["history", "s.json", "--dry-run"]).status == 2)
        #expect(try await sandbox.run(["undo", "s.json", "--json"]).status == 2)
        #expect(try await sandbox.run(["undo", "s.json", "a", "b"]).status == 2)
        #expect(try sandbox.workContents().isEmpty)
    }
}
