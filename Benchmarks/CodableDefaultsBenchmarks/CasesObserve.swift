import CodableDefaults
import Dispatch
import Foundation

/// Save scheduling and observation: coalesced writes, observer fan-out, and outside changes.
enum ObservationCases {
    /// A burst of sets in `.afterIdle` mode must be one write; the writes are counted with inotify.
    static func burst(_ context: Context) throws {
        let scale = context.scale
        let sets = scale.burstSets
        let keyCount = 1000
        let writes = "CodableDefaults .afterIdle(500 ms): file writes per burst"
        var result = CaseResult(
            id: "burst-afteridle", title: "burst of \(sets) sets in .afterIdle (the default, 500 ms)",
            detail: "sets cycle over \(keyCount) keys of a \(keyCount)-key store; writes counted by inotify "
                + "(IN_MOVED_TO of the store's name), until 1.5 s pass without one; \(scale.burstRepeats) burst(s)",
            ratioReference: "nothing (counts and times)")
        try context.withDirectory("burst") { directory in
            try Files.write(Fixture.storeFile(keys: keyCount), to: directory.file("store.json"))
            let counter = try RenameCounter(directory: directory.path, fileName: "store.json")
            let defaults = try Defaults(url: directory.url("store.json"), saveMode: .default)
            let keys = (0..<keyCount).map { Defaults.Key<Int>(SampleValue.key($0), default: -1) }
            var counts: [Double] = []
            var durations: [Double] = []
            var delays: [Double] = []
            for round in 0..<scale.burstRepeats {
                progress("burst-afteridle: burst \(round + 1) of \(scale.burstRepeats)")
                guard try counter.drain() == 0 else { throw BenchmarkError("burst: a write before the burst") }
                let took = elapsed {
                    for index in 0..<sets { defaults[keys[index % keyCount]] = round * sets + index }
                }
                let lastSet = monotonicNanoseconds()
                let (count, first) = try counter.count(quiet: 1_500_000_000, timeout: 10_000_000_000)
                counts.append(Double(count))
                durations.append(Double(took))
                if count > 0 { delays.append(Double(first) - Double(lastSet)) }
            }
            let stored = try Files.read(directory.file("store.json"))
            let last = (scale.burstRepeats - 1) * sets + sets - 1
            guard String(decoding: stored, as: UTF8.self).contains(": \(last)") else {
                throw BenchmarkError("burst: the file does not hold the burst's last value")
            }
            result.figures.append(Figure(contender: writes, stats: Stats(counts), unit: .count))
            result.figures.append(
                Figure(contender: "CodableDefaults: duration of the \(sets) sets", stats: Stats(durations)))
            if !delays.isEmpty {
                result.figures.append(
                    Figure(
                        contender: "CodableDefaults: last set → file replaced", stats: Stats(delays),
                        note: "inotify polled every 1 ms"))
            }
            let goal = counts.allSatisfy { $0 == 1 }
            result.goals.append(
                Goal(
                    text: "exactly one file write per burst",
                    measured: counts.map { "\(Int($0))" }.joined(separator: ","),
                    met: goal, contender: writes))
            try naiveInstrumentCheck(directory: directory, sets: scale.quick ? 200 : 1000, into: &result)
        }
        context.record(result)
    }

    /// Counts the naive pattern's writes with the same instrument: one per set, or the counter is broken.
    private static func naiveInstrumentCheck(directory: TempDirectory, sets: Int, into result: inout CaseResult) throws
    {
        progress("burst-afteridle: naive pattern (instrument check)")
        let naiveDirectory = try TempDirectory(in: directory.path, prefix: "naive")
        let counter = try RenameCounter(directory: naiveDirectory.path, fileName: "store.json")
        let naive = NaiveStore(path: naiveDirectory.file("store.json"), values: Fixture.naiveDictionary(keys: 100))
        for index in 0..<sets { try naive.set(.integer(index), forKey: SampleValue.key(index % 100)) }
        let (count, _) = try counter.count(quiet: 500_000_000, timeout: 5_000_000_000)
        guard count == sets else {
            throw BenchmarkError(
                "the write counter saw \(count) writes for \(sets) naive sets: the instrument is broken")
        }
        result.figures.append(
            Figure(
                contender: "naive pattern: file writes for \(sets) sets (instrument check)",
                stats: Stats(single: Double(count)), unit: .count))
    }

    /// A set with many observers on other keys should cost about what a set with none costs.
    static func fanOut(_ context: Context) throws {
        let scale = context.scale
        let observers = scale.fanOutObservers
        let none = "CodableDefaults set, no observers"
        let many = "CodableDefaults set, \(observers) observers on other keys"
        var result = CaseResult(
            id: "observer-fanout", title: "observer fan-out: set with \(observers) observers on other keys",
            detail: "three \(observers)-key stores (.manual), measured in alternation, \(scale.fast.samples) samples; "
                + "each set changes the value",
            ratioReference: none)
        try context.withDirectory("fanout") { directory in
            var stores: [Defaults] = []
            for name in ["none", "many", "one"] {
                try Files.write(Fixture.storeFile(keys: observers), to: directory.file("\(name).json"))
                stores.append(try Defaults(url: directory.url("\(name).json"), saveMode: .manual))
            }
            progress("observer-fanout: registering \(observers) observers")
            var tokens: [ObservationToken] = []
            for index in 1...observers {
                tokens.append(stores[1].observe(forKey: SampleValue.key(index)) { _ in })
            }
            let calls = CallCounter()
            let hot = Defaults.Key<Int>(SampleValue.key(0), default: -1)
            tokens.append(stores[2].observe(hot) { _ in calls.increment() })
            var counter = 0
            progress("observer-fanout: measuring")
            let stats = try measureInterleaved(
                scale.fast,
                stores.map { defaults in
                    { count in
                        for _ in 0..<count {
                            counter += 1
                            defaults[hot] = counter
                        }
                    }
                })
            guard calls.value > 0 else { throw BenchmarkError("observer-fanout: the observer was never called") }
            result.figures = [
                Figure(contender: none, stats: stats[0]),
                Figure(contender: many, stats: stats[1]),
                Figure(contender: "CodableDefaults set, 1 observer on this key (called)", stats: stats[2]),
            ]
            withExtendedLifetime(tokens) {}
        }
        try result.computeRatios(against: none)
        try result.goalAtMost("≤ 1.2× a set with no observers", subject: many, reference: none, factor: 1.2)
        context.record(result)
    }

    /// The time from another process's save to this process's observer call.
    static func outsideChange(_ context: Context) throws {
        let samples = context.scale.outsideChanges
        var result = CaseResult(
            id: "outside-change", title: "outside change (another process's flush) to observer call",
            detail: "a child process of this binary sets a key and saves; this process observes the key; "
                + "\(samples) changes, 20 ms apart; clock: CLOCK_MONOTONIC in both processes",
            ratioReference: "nothing (latencies)")
        try context.withDirectory("outside") { directory in
            let path = directory.file("store.json")
            try Files.write(Array("{\n  \"outside\": 0\n}\n".utf8), to: path)
            let defaults = try Defaults(url: URL(fileURLWithPath: path), saveMode: .manual)
            let recorder = ArrivalRecorder()
            let token = defaults.observe(Defaults.Key<Int>("outside", default: 0)) { recorder.record($0.newValue) }
            let writer = try Child.Session(["writer", path])

            // Does the store notice outside changes by itself (a file watcher)? Wait up to 3 s to find out.
            progress("outside-change: probing for a file watcher (up to 3 s)")
            try writer.send("set 1")
            _ = try parseDone(writer.receive())
            let watches = recorder.wait(for: 1, timeout: 3_000_000_000) != nil
            if !watches {
                try defaults.reload()
                guard recorder.wait(for: 1, timeout: 0) != nil else {
                    throw BenchmarkError("outside-change: reload() did not call the observer")
                }
            }
            progress("outside-change: \(watches ? "file watcher found" : "no file watcher: timing reload()")")
            var fromEnd: [Double] = []
            var fromStart: [Double] = []
            var flushes: [Double] = []
            for value in 2..<(2 + samples) {
                usleep(20000)
                try writer.send("set \(value)")
                let (start, end) = try parseDone(writer.receive())
                flushes.append(Double(end - start))
                if watches {
                    guard let arrival = recorder.wait(for: value, timeout: 5_000_000_000) else {
                        throw BenchmarkError("outside-change: the watcher missed change \(value) for 5 s")
                    }
                    fromEnd.append(Double(arrival) - Double(end))
                    fromStart.append(Double(arrival) - Double(start))
                } else {
                    let before = monotonicNanoseconds()
                    try defaults.reload()
                    guard let arrival = recorder.wait(for: value, timeout: 0) else {
                        throw BenchmarkError("outside-change: reload() did not deliver change \(value)")
                    }
                    fromStart.append(Double(arrival) - Double(before))
                }
            }
            try writer.finish()
            token.cancel()
            if watches {
                result.figures.append(
                    Figure(contender: "observer called, after the writer's save() started", stats: Stats(fromStart)))
                result.figures.append(
                    Figure(
                        contender: "observer called, after the writer's save() returned", stats: Stats(fromEnd),
                        note: "< 0: called before the writer's save() returned"))
            } else {
                result.title += " — NO FILE WATCHER: reload() + observer call instead"
                result.figures.append(
                    Figure(
                        contender: "reload() + observer call after an outside write", stats: Stats(fromStart),
                        note: "the store does not notice outside changes by itself"))
            }
            result.figures.append(Figure(contender: "(for scale) the writer's save()", stats: Stats(flushes)))
        }
        context.record(result)
    }

    /// Parses the writer's answer `done START END`.
    private static func parseDone(_ line: String) throws -> (start: UInt64, end: UInt64) {
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "done", let start = UInt64(parts[1]), let end = UInt64(parts[2]) else {
            throw BenchmarkError("outside-change: the writer answered \"\(line)\"")
        }
        return (start, end)
    }
}

/// Records when each observed value arrived, for the outside-change latency.
final class ArrivalRecorder: @unchecked Sendable {
    private let lock = BenchLock()
    private var arrivals: [Int: UInt64] = [:]
    private let signal = DispatchSemaphore(value: 0)

    /// Notes that `value` arrived now. Called by the observer, on any thread.
    func record(_ value: Int) {
        let now = monotonicNanoseconds()
        lock.withLock { arrivals[value] = now }
        signal.signal()
    }

    /// The arrival time of `value`, waiting up to `timeout` nanoseconds for it; `nil` if it did not arrive.
    func wait(for value: Int, timeout: UInt64) -> UInt64? {
        let deadline = monotonicNanoseconds() + timeout
        while true {
            if let arrival = lock.withLock({ arrivals[value] }) { return arrival }
            let now = monotonicNanoseconds()
            guard now < deadline else { return nil }
            _ = signal.wait(timeout: .now() + .nanoseconds(Int(deadline - now)))
        }
    }
}

/// Counts calls from any thread.
final class CallCounter: @unchecked Sendable {
    private let lock = BenchLock()
    private var count = 0

    /// Adds one call.
    func increment() { lock.withLock { count += 1 } }

    /// The calls so far.
    var value: Int { lock.withLock { count } }
}
