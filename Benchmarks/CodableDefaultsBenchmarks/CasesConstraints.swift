import CodableDefaults
import Foundation

/// Constraints: what checking a key's rules costs a set.
enum ConstraintCases {
    /// A set through a key with two rules (a range and a check of its own) against one through a key without,
    /// in one 1k-key store, in the same run.
    static func setWithConstraints(_ context: Context) throws {
        let scale = context.scale
        let plain = "defaults[key] = v, a key without rules (.manual)"
        var result = CaseResult(
            id: "set-constrained", title: "set an Int through a key with rules, in a store of 1k keys",
            detail: "two rules: .range(0...Int.max) and .custom (a closure); every set changes the value; .manual; "
                + "alternating, \(scale.fast.samples) samples",
            ratioReference: plain)
        try context.withDirectory("set-constrained") { directory in
            let path = directory.url("store.json")
            try Files.write(Fixture.storeFile(keys: SetCases.storeKeys), to: path.path)
            let defaults = try Defaults(url: path, saveMode: .manual)
            let constrained = Defaults.Key<Int>(
                "constrained", default: 0, constraints: [.range(0...Int.max), .custom("not 13") { $0 != 13 }])
            let unconstrained = Defaults.Key<Int>("unconstrained", default: 0)
            var counter = 100
            let keys = [(constrained, "defaults[key] = v, a key with two rules"), (unconstrained, plain)]
            // Sample by sample in alternation, so that a drift of the machine's speed affects both alike.
            let stats = try measureInterleaved(
                scale.fast,
                keys.map { key, _ in
                    { count in
                        for _ in 0..<count {
                            counter += 1
                            defaults[key] = counter
                        }
                    }
                })
            for ((key, label), stats) in zip(keys, stats) {
                result.figures.append(Figure(contender: label, stats: stats))
                guard defaults.hasStoredValue(for: key) else {
                    throw BenchmarkError("set-constrained: \(label) lost a set")
                }
            }
        }
        try result.computeRatios(against: plain)
        try result.goalAtMost(
            "≤ 1.2× a set through a key without rules", subject: "defaults[key] = v, a key with two rules",
            reference: plain, factor: 1.2)
        context.record(result)
    }
}
