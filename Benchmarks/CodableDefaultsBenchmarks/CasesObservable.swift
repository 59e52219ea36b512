import CodableDefaults
import Foundation
import Observation

/// Reads that take part in Observation: the cost of a read inside `withObservationTracking`, beside the same
/// cached read outside any tracking.
enum ObservableCases {
    /// A cached `Int` read through a typed key, untracked and tracked.
    static func readTracked(_ context: Context) throws {
        let scale = context.scale
        let name = SampleValue.key(40)
        let expected = 280
        var result = CaseResult(
            id: "read-tracked", title: "read a cached Int inside withObservationTracking",
            detail: "stores of \(ReadCases.storeKeys) keys; file-backed CodableDefaults (.manual); each sample's "
                + "reads run in one tracking, as a view's body does; \(scale.fast.samples) samples after "
                + "\(scale.fast.warmup) warm-up",
            ratioReference: "CodableDefaults defaults[key], untracked")
        try context.withDirectory("read-tracked") { directory in
            try Files.write(Fixture.storeFile(keys: ReadCases.storeKeys), to: directory.file("store.json"))
            let defaults = try Defaults(url: directory.url("store.json"), saveMode: .manual)
            let key = Defaults.Key<Int>(name, default: -1)
            guard try defaults.value(for: key) == expected else {
                throw BenchmarkError("read-tracked: the store does not hold \(expected) at \(name)")
            }
            progress("read-tracked: untracked")
            result.figures.append(
                Figure(
                    contender: "CodableDefaults defaults[key], untracked",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= defaults[key] }
                        blackHole(sum)
                    }))
            progress("read-tracked: tracked")
            result.figures.append(
                Figure(
                    contender: "CodableDefaults defaults[key], tracked",
                    stats: measureRepeated(scale.fast) { count in
                        let sum = withObservationTracking {
                            var sum = 0
                            for _ in 0..<count { sum &+= defaults[key] }
                            return sum
                        } onChange: {
                        }
                        blackHole(sum)
                    }))
        }
        try result.computeRatios(against: "CodableDefaults defaults[key], untracked")
        context.record(result)
    }
}
