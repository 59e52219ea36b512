import CodableDefaults
import Foundation

/// The history: what recording a save costs.
enum HistoryCases {
    /// `save()` after one change in two 1k-key stores, one keeping a history (the default) and one with
    /// `history: .off`, sample by sample in alternation, in the same run.
    static func historyCost(_ context: Context) throws {
        let keys = 1000
        let sampling = context.scale.slow
        var result = CaseResult(
            id: "history-1k", title: "save after 1 changed key in a \(keys)-key store, with its history recorded",
            detail: "one key set (untimed), then save() (.manual) timed, in a store keeping its history (the "
                + "default: a record appended to .NAME.history and flushed) and in one with history: .off; "
                + "alternating, \(sampling.samples) samples after \(sampling.warmup) warm-up (the history's trim, a "
                + "durable rewrite of its newest records once every 25 saves at the default bound, falls outside them)",
            ratioReference: "save() without history")
        let (with, without) = try context.withDirectory("history-1k") { directory in
            let recorded = directory.file("recorded.json")
            let plain = directory.file("plain.json")
            try Files.write(Fixture.storeFile(keys: keys), to: recorded)
            try Files.write(Fixture.storeFile(keys: keys), to: plain)
            let withHistory = try Defaults(url: URL(fileURLWithPath: recorded), saveMode: .manual)
            let withoutHistory = try Defaults(
                url: URL(fileURLWithPath: plain), saveMode: .manual, options: Defaults.Options(history: .off))
            let key = Defaults.Key<Int>("history-counter", default: 0)
            var withTimes: [Double] = []
            var withoutTimes: [Double] = []
            for round in 0..<(sampling.warmup + sampling.samples) {
                withHistory[key] = round
                let timedWith = try elapsed { try withHistory.save() }
                withoutHistory[key] = round
                let timedWithout = try elapsed { try withoutHistory.save() }
                if round >= sampling.warmup {
                    withTimes.append(Double(timedWith))
                    withoutTimes.append(Double(timedWithout))
                }
            }
            let rounds = sampling.warmup + sampling.samples
            guard try withHistory.history().first?.changes.first?.newValue == .json(.number(JSONNumber(rounds - 1)))
            else { throw BenchmarkError("history-1k: the history does not hold the last save") }
            return (Stats(withTimes, operationsPerSample: 1), Stats(withoutTimes, operationsPerSample: 1))
        }
        result.figures = [
            Figure(contender: "save() with history", stats: with),
            Figure(contender: "save() without history", stats: without),
        ]
        try result.computeRatios(against: "save() without history")
        try result.goalAtMost(
            "≤ 1.3× a save without history", subject: "save() with history", reference: "save() without history",
            factor: 1.3)
        context.record(result)
    }
}
