import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Testing

@testable import CodableDefaults

/// Many threads using one store at once.
@Suite struct ConcurrencyTests {
    @Test func readersWritersAndSavesFromManyThreads() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), saveMode: .afterIdle(.milliseconds(1)))
        let errors = ErrorLog()
        defaults.onError = errors.handler
        let threads = 8
        let iterations = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let own = Defaults.Key<Int>("thread-\(thread)", default: -1)
            for index in 0..<iterations {
                defaults[own] = index
                #expect(defaults[own] == index)
                defaults[.count] = index
                _ = defaults[.count]
                defaults[.profile].age = index
                if index % 500 == 0 {
                    do { try defaults.save() } catch { Issue.record(error) }
                }
            }
        }
        try defaults.save()
        #expect(errors.errors.isEmpty)
        let reopened = try openFresh(dir.file())
        for thread in 0..<threads {
            #expect(reopened[Defaults.Key<Int>("thread-\(thread)", default: -1)] == iterations - 1)
        }
        #expect(reopened[.count] == defaults[.count])
        #expect(reopened[.profile] == defaults[.profile])
    }

    /// Saves racing sets must never lose a change: the last value of every key reaches the file.
    @Test func savesRacingSetsLoseNothing() throws {
        for round in 0..<20 {
            let dir = try TemporaryDirectory()
            let defaults = try openFresh(dir.file())
            let writers = 3
            let iterations = 300
            DispatchQueue.concurrentPerform(iterations: writers + 1) { worker in
                if worker == writers {
                    // A flusher: saves while the others set, so saves find nothing to do, or start just as a
                    // set lands.
                    for _ in 0..<iterations {
                        do { try defaults.save() } catch { Issue.record(error) }
                    }
                } else {
                    let key = Defaults.Key<Int>("w\(worker)", default: -1)
                    for index in 0..<iterations {
                        defaults[key] = index
                        if index % 7 == 0 { do { try defaults.save() } catch { Issue.record(error) } }
                    }
                }
            }
            try defaults.save()
            let reopened = try openFresh(dir.file())
            for worker in 0..<writers {
                #expect(reopened[Defaults.Key<Int>("w\(worker)", default: -1)] == iterations - 1, "round \(round)")
            }
        }
    }

    @Test func concurrentFirstReadsDecodeConsistently() throws {
        let dir = try TemporaryDirectory()
        try write("{\"profile\": {\"age\": 7, \"name\": \"N\"}}", to: dir.file())
        let defaults = try openFresh(dir.file())
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            #expect(defaults[.profile] == Profile(name: "N", age: 7))
        }
    }
}
