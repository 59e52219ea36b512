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

/// A writer process killed with SIGKILL at random moments never leaves a half-written file, and the file
/// always holds a state the writer actually flushed: the last one it acknowledged, or the next one. Its history
/// never claims a change the file does not hold: every record is one generation's save, exactly, of a
/// generation the file reached; a kill loses at most the record of the save it interrupted, and a record cut
/// short is skipped with a report.
///
/// The number of kills comes from `CODABLE_DEFAULTS_CRASH_KILLS` (default 200). For a long run:
///
///     CODABLE_DEFAULTS_CRASH_KILLS=5000 swift test --filter CrashTests
@Suite struct CrashTests {
    /// How many times the writer is killed.
    static let kills = ProcessInfo.processInfo.environment["CODABLE_DEFAULTS_CRASH_KILLS"].flatMap { Int($0) } ?? 200

    @Test func harnessAgreesWithTheFixtureOnTheWriterStates() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        for generation in [1, 2, 7, 600, 12345] {
            let child = try ChildProcess(fixture, ["state", String(generation)])
            let lines = try await child.readToEnd(timeout: 20)
            #expect(try await child.wait(timeout: 10) == .exited(0))
            let printed = try JSONDecoder().decode([String: JSONValue].self, from: Data(lines.joined().utf8))
            #expect(printed == WriterState.values(generation), "generation \(generation)")
        }
    }

    @Test func killedWriterAlwaysLeavesAnAcknowledgedState() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        let temporaryPrefix = "." + url.lastPathComponent + "."
        let started = Date()
        var known = 0  // the generation the file was last seen to hold (0: no file)
        var stats = (acknowledged: 0, ahead: 0, leftovers: 0, earlyKills: 0, lost: 0)
        var history = (records: Set<Int>(), torn: 0)

        for iteration in 0..<Self.kills {
            // The writer runs until it is killed (600 s bound its life if the test dies): on a loaded machine this task
            // may wait long for a thread between the writer's start and the kill (a full run of the suite left it
            // waiting over 30 s once, and a writer that ended on its own failed the test).
            let child = try ChildProcess(fixture, ["writer", url.path, "--seconds", "600"])
            // Most kills land while the writer loops; one in eight lands while it starts up and opens the file.
            let early = Int.random(in: 0..<8) == 0
            var lines: [String] = []
            if early {
                stats.earlyKills += 1
            } else {
                let line = try await child.readLine(timeout: 20)
                lines.append(line ?? "")
                #expect(line == "start \(known)", "iteration \(iteration): the writer read the state left last time")
            }
            usleep(UInt32.random(in: early ? 0...30_000 : 1_000...40_000))
            child.kill(SIGKILL)
            let status = try await child.wait(timeout: 20)
            await lines += try child.readToEnd(timeout: 20)
            guard status == .signaled(SIGKILL) else {
                Issue.record("iteration \(iteration): the writer ended on its own: \(status), output \(lines)")
                break
            }

            var lastAcknowledged = known
            for line in lines where line.hasPrefix("ack ") {
                let generation = try #require(Int(line.dropFirst(4)))
                #expect(generation == lastAcknowledged + 1, "iteration \(iteration): acks in order")
                lastAcknowledged = generation
                stats.acknowledged += 1
            }
            #expect(!lines.contains { $0.hasPrefix("error") }, "iteration \(iteration): \(lines)")

            // The file parses and holds the last acknowledged state or the one after it.
            let found = try Self.generationInFile(url)
            #expect(
                found == lastAcknowledged || found == lastAcknowledged + 1,
                "iteration \(iteration): the file holds generation \(found), last acknowledged \(lastAcknowledged)")
            if found == lastAcknowledged + 1 { stats.ahead += 1 }
            if found != lastAcknowledged && found != lastAcknowledged + 1 { stats.lost += 1 }

            // A fresh store opens it, sees the same state and removes the killed writer's temporary file.
            let leftovers = try dir.contents().filter { $0.hasPrefix(temporaryPrefix) && $0.hasSuffix(".tmp") }
            stats.leftovers += leftovers.count
            let reopened = try openFresh(url)
            let errors = ErrorLog()
            reopened.onError = errors.handler
            #expect(reopened.integer(forKey: "generation") == found)
            for generation in try Self.checkHistory(reopened, fileGeneration: found, iteration: iteration) {
                history.records.insert(generation)
            }
            history.torn += errors.errors.count
            #expect(
                errors.errors.allSatisfy { $0.code == .invalidJSON && $0.path?.hasSuffix(".history") == true },
                "iteration \(iteration): \(errors.errors)")
            #expect(
                Set(reopened.keys) == Set(WriterState.fragments(found).keys),
                "iteration \(iteration): a fresh store sees generation \(found)'s keys")
            let remaining = try dir.contents().filter { $0.hasPrefix(temporaryPrefix) && $0.hasSuffix(".tmp") }
            #expect(remaining.isEmpty, "iteration \(iteration): leftover temporary files \(remaining)")
            known = found
        }
        testLog(
            """
            crash test: \(Self.kills) kills, \(stats.lost) lost; \(stats.acknowledged) generations acknowledged, \
            \(stats.ahead) kills between rename and acknowledgement, \(stats.leftovers) leftover temporary \
            files removed on reopen, \(stats.earlyKills) kills during start-up, final generation \(known), \
            \(history.records.count) generations seen recorded, \(history.torn) records cut short and skipped, \
            \(Int(Date().timeIntervalSince(started))) s
            """)
    }

    /// Checks the history of the store `defaults` against the file's generation: each record is the save of one
    /// generation (its `generation` key's new value) no newer than the file's, its changes exactly what that
    /// generation changed from the one before, newest first with revisions that only grow. Returns the
    /// generations recorded.
    static func checkHistory(_ defaults: Defaults, fileGeneration: Int, iteration: Int) throws -> [Int] {
        var generations: [Int] = []
        var lastRevision = Int.max
        for entry in try defaults.history() {
            #expect(entry.revision < lastRevision, "iteration \(iteration): revisions grow")
            lastRevision = entry.revision
            guard case .json(.number(let number))? = entry.changes.first(where: { $0.key == "generation" })?.newValue,
                let generation = Int(number.literal)
            else {
                Issue.record("iteration \(iteration): a record without a generation: \(entry.changes.map(\.key))")
                continue
            }
            #expect(generation <= fileGeneration, "iteration \(iteration): a record of a change the file never held")
            let old = generation > 1 ? WriterState.values(generation - 1) : [:]
            let new = WriterState.values(generation)
            let changed = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
            #expect(Set(entry.changes.map(\.key)) == changed, "iteration \(iteration): generation \(generation)")
            for change in entry.changes {
                #expect(change.oldValue == (old[change.key].map { .json($0) } ?? .absent))
                #expect(change.newValue == (new[change.key].map { .json($0) } ?? .absent))
            }
            generations.append(generation)
        }
        return generations
    }

    /// The generation the store file holds, after checking that it holds exactly that generation's state;
    /// 0 when there is no file.
    static func generationInFile(_ url: URL) throws -> Int {
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        let data = try bytes(url)
        let members = try JSONParser.parse(data)
        var stored: [String: [UInt8]] = [:]
        for member in members { stored[member.key] = member.value }
        let text = String(decoding: data, as: UTF8.self)
        let generation = try #require(
            stored["generation"].flatMap { Int(String(decoding: $0, as: UTF8.self)) },
            "no generation in \(text.prefix(200))")
        #expect(stored == WriterState.fragments(generation), "the file is not generation \(generation)'s state")
        #expect(members.map(\.key) == members.map(\.key).sorted(), "members sorted")
        #expect(text.hasSuffix("\n}\n"))
        return generation
    }
}

/// The crash-test writer's state per generation. It must match `WriterState` in the fixture's main.swift;
/// ``CrashTests/harnessAgreesWithTheFixtureOnTheWriterStates()`` checks that it does.
enum WriterState {
    /// The keys and values of generation `generation`.
    static func values(_ generation: Int) -> [String: JSONValue] {
        var values: [String: JSONValue] = [
            "generation": .number(JSONNumber(generation)),
            "blob": .string("g\(generation)-" + String(repeating: "b", count: (generation &* 997) % 6000)),
        ]
        for index in 0..<12 where (generation / (index + 1) + index) % 3 != 0 {
            let name = index < 10 ? "k0\(index)" : "k\(index)"
            values[name] = .string(
                "g\(generation)-k\(index)-" + String(repeating: "x", count: (generation &* 7 + index * 13) % 200))
        }
        return values
    }

    /// The same state as the compact JSON fragments the file holds (0: no keys).
    static func fragments(_ generation: Int) -> [String: [UInt8]] {
        guard generation > 0 else { return [:] }
        var fragments: [String: [UInt8]] = [:]
        for (name, value) in values(generation) {
            switch value {
            case .number(let number): fragments[name] = Array(number.literal.utf8)
            case .string(let text): fragments[name] = Array("\"\(text)\"".utf8)
            default: Issue.record("unexpected value \(value)")
            }
        }
        return fragments
    }
}
