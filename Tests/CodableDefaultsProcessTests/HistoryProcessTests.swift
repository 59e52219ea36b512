import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// One history for a store file that several processes write.
@Suite struct HistoryProcessTests {
    @Test func threeProcessesOf200SavesKeepOneHistoryInOrderAndComplete() async throws {
        let dir = try TemporaryDirectory()
        var processes: [ServedStore] = []
        for _ in 0..<3 { processes.append(try await ServedStore(dir.file(), options: ["--history-saves", "1000"])) }
        // Every process is ready before any starts, so their saves interleave.
        for process in processes { try process.child.send("increment count 200") }
        for process in processes { #expect(try await process.answer() == "ok") }
        var pids: [Int32] = []
        for process in processes {
            let answer = try await process.ask("pid")
            pids.append(try #require(Int32(answer.dropFirst(4))))
        }
        for process in processes { try await process.quit() }

        let history = await Array(try openFresh(dir.file()).history().reversed())
        #expect(history.count == 600)
        // Revision n is the save that took the count from n - 1 to n: every save recorded once, in the order the
        // saves were made, whichever process made it.
        for (index, entry) in history.enumerated() {
            let n = index + 1
            #expect(entry.revision == n)
            let expected = Defaults.HistoryEntry.Change(
                key: "count", oldValue: n == 1 ? .absent : .json(.number(JSONNumber(n - 1))),
                newValue: .json(.number(JSONNumber(n))))
            #expect(entry.changes == [expected], "revision \(n)")
            if index > 0 { #expect(entry.date >= history[index - 1].date) }
        }
        let byProcess = Dictionary(grouping: history, by: \.author.processID).mapValues(\.count)
        #expect(byProcess == Dictionary(uniqueKeysWithValues: pids.map { ($0, 200) }))
    }
}
