import CodableDefaults
import Foundation

/// Atomic updates: `modify` against the get-then-set it replaces, followed by a flush (both one durable write).
enum ModifyCases {
    /// `modify(key) { $0 += 1 }` against `defaults[key] += 1; save()` in a 1k-key store, sample by sample in
    /// alternation, in the same run.
    static func modifyAgainstSetAndFlush(_ context: Context) throws {
        let keys = 1000
        let sampling = context.scale.slow
        var result = CaseResult(
            id: "modify-1k", title: "atomic increment in a \(keys)-key store",
            detail: "modify(key) { $0 += 1 } (lock file taken, file re-read if changed, durable write) against "
                + "defaults[key] += 1 then save() (.manual); alternating, \(sampling.samples) samples after "
                + "\(sampling.warmup) warm-up",
            ratioReference: "set + save()")
        let (modify, setAndFlush) = try context.withDirectory("modify-1k") { directory in
            let path = directory.file("store.json")
            try Files.write(Fixture.storeFile(keys: keys), to: path)
            let defaults = try Defaults(url: URL(fileURLWithPath: path), saveMode: .manual)
            let key = Defaults.Key<Int>("modify-counter", default: 0)
            var modifyTimes: [Double] = []
            var setTimes: [Double] = []
            for round in 0..<(sampling.warmup + sampling.samples) {
                let modifying = try elapsed { try defaults.modify(key) { $0 += 1 } }
                let setting = try elapsed {
                    defaults[key] += 1
                    try defaults.save()
                }
                if round >= sampling.warmup {
                    modifyTimes.append(Double(modifying))
                    setTimes.append(Double(setting))
                }
            }
            let expected = 2 * (sampling.warmup + sampling.samples)
            guard try Defaults(url: URL(fileURLWithPath: path))[key] == expected else {
                throw BenchmarkError("modify: the file does not hold \(expected) increments")
            }
            return (Stats(modifyTimes, operationsPerSample: 1), Stats(setTimes, operationsPerSample: 1))
        }
        result.figures = [
            Figure(contender: "modify", stats: modify),
            Figure(contender: "set + save()", stats: setAndFlush),
        ]
        try result.computeRatios(against: "set + save()")
        try result.goalAtMost(
            "≤ 1.5× a set and a save", subject: "modify", reference: "set + save()", factor: 1.5)
        context.record(result)
    }
}
