import CodableDefaults
import Foundation

/// Reads of keys whose value comes from a read-only layer: the layers are merged into each name's effective
/// value when they load, so a layered read should cost what a stored read costs.
enum LayerCases {
    /// A cached `Int` read from an environment override and from a fallback file, against a stored one.
    static func readLayered(_ context: Context) throws {
        let scale = context.scale
        let stored = "CodableDefaults defaults[key], stored value"
        var result = CaseResult(
            id: "read-layered", title: "read a cached Int supplied by a layer",
            detail: "a store of \(ReadCases.storeKeys) keys with an environment override (given variables) and a "
                + "fallback JSON file; each key read once before timing; \(scale.fast.samples) samples after "
                + "\(scale.fast.warmup) warm-up",
            ratioReference: stored)
        try context.withDirectory("read-layered") { directory in
            try Files.write(Fixture.storeFile(keys: ReadCases.storeKeys), to: directory.file("store.json"))
            try Files.write(Array("{\"fromFile\": 11}".utf8), to: directory.file("fallback.json"))
            let defaults = try Defaults(
                url: directory.url("store.json"), saveMode: .manual,
                overrides: [.environment(["BENCH_OVERRIDDEN": "7"], prefix: "BENCH_")],
                fallbacks: [.file(directory.url("fallback.json"))])
            let cases: [(String, Defaults.Key<Int>, Int)] = [
                (stored, Defaults.Key<Int>(SampleValue.key(40), default: -1), 280),
                (
                    "CodableDefaults defaults[key], from an environment override",
                    Defaults.Key<Int>("overridden", default: -1), 7
                ),
                ("CodableDefaults defaults[key], from a fallback file", Defaults.Key<Int>("fromFile", default: -1), 11),
            ]
            for (contender, key, expected) in cases {
                guard try defaults.value(for: key) == expected else {
                    throw BenchmarkError("read-layered: \(key.name) does not read \(expected)")
                }
                progress("read-layered: \(contender)")
                result.figures.append(
                    Figure(
                        contender: contender,
                        stats: measureRepeated(scale.fast) { count in
                            var sum = 0
                            for _ in 0..<count { sum &+= defaults[key] }
                            blackHole(sum)
                        }))
            }
            try result.computeRatios(against: stored)
            // The same code path as a stored read (a slot whose version matches): the margin is this machine's
            // run-to-run noise between two figures, not a cost the layers are allowed.
            for (contender, _, _) in cases.dropFirst() {
                try result.goalAtMost(
                    "≤ 1.5× a stored read: \(contender.replacingOccurrences(of: "CodableDefaults defaults[key], ", with: ""))",
                    subject: contender, reference: stored, factor: 1.5)
            }
        }
        context.record(result)
    }
}
