import Foundation

/// The command line: `CodableDefaultsBenchmarks [--quick] [--json PATH] [--filter NAME] [--svg DIR]`.
struct Options: Sendable {
    /// Fewer samples and smaller stores, to finish in under a minute.
    var quick = false
    /// Where to write every figure as JSON.
    var jsonPath: String?
    /// Run only the cases whose identifier contains one of these strings.
    var filters: [String] = []
    /// Where to write the two SVG charts.
    var svgDirectory: String?

    static let usage = """
        usage: CodableDefaultsBenchmarks [--quick] [--json PATH] [--filter NAME]... [--svg DIR]
          --quick        fewer samples and smaller stores (under a minute); every row is still printed
          --json PATH    write every figure as JSON to PATH
          --filter NAME  run only the cases whose identifier contains NAME (repeatable); cases:
                         \(CaseCatalog.identifiers.joined(separator: ", "))
          --svg DIR      write set-cost-vs-store-size.svg and save-time-vs-file-size.svg to DIR
        """

    /// Parses the arguments after the program name.
    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(after flag: String) throws -> String {
            guard let value = rest.popFirst(), !value.hasPrefix("--") else {
                throw BenchmarkError("\(flag) needs a value\n\(usage)")
            }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": options.quick = true
            case "--json": options.jsonPath = try value(after: argument)
            case "--filter": options.filters.append(try value(after: argument))
            case "--svg": options.svgDirectory = try value(after: argument)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: throw BenchmarkError("unknown argument \(argument)\n\(usage)")
            }
        }
        let unknown = options.filters.filter { filter in
            !CaseCatalog.identifiers.contains { $0.contains(filter) }
        }
        if !unknown.isEmpty {
            throw BenchmarkError("--filter \(unknown.joined(separator: ", ")) matches no case\n\(usage)")
        }
        return options
    }

    /// Whether the case with this identifier runs.
    func selects(_ identifier: String) -> Bool {
        filters.isEmpty || filters.contains { identifier.contains($0) }
    }
}

/// The sizes and sample counts of one run: full or `--quick`.
struct Scale: Sendable {
    /// Whether this is the quick scale.
    let quick: Bool
    /// Sampling for fast, repeated operations (reads, in-memory sets).
    let fast: Sampling
    /// Sampling for operations of a millisecond or more (saves, opens).
    let slow: Sampling
    /// Store sizes (in keys) for the set-growth curve, CodableDefaults.
    let growthSizes: [Int]
    /// Store sizes (in keys) for UserDefaults grown by sets (each set costs more as unsynchronized changes
    /// pile up, so filling it is quadratic).
    let userDefaultsGrownSizes: [Int]
    /// Store sizes (in keys) for UserDefaults loaded from a property list.
    let userDefaultsLoadedSizes: [Int]
    /// New keys set per sample in the growth case.
    let growthBatch: Int
    /// Store sizes (in keys) for the save-time-against-file-size curve.
    let saveSizes: [Int]
    /// The size of the "10 MB" store, in bytes.
    let bigStoreBytes: Int
    /// Sets in the `.afterIdle` burst.
    let burstSets: Int
    /// How many times the burst is repeated.
    let burstRepeats: Int
    /// Observers registered in the fan-out case.
    let fanOutObservers: Int
    /// Outside changes timed in the latency case.
    let outsideChanges: Int
    /// Child processes per contender in the memory case.
    let memoryRuns: Int

    /// The full run: about ten minutes on two cores.
    static let full = Scale(
        quick: false,
        fast: Sampling(warmup: 2, samples: 15, sampleNanoseconds: 20_000_000),
        slow: Sampling(warmup: 2, samples: 11),
        growthSizes: [1, 10, 100, 1000, 10000, 100_000],
        userDefaultsGrownSizes: [1, 10, 100, 1000, 10000, 20000],
        userDefaultsLoadedSizes: [1, 10, 100, 1000, 10000, 100_000],
        growthBatch: 32,
        saveSizes: [10, 100, 1000, 10000, 100_000],
        bigStoreBytes: 10_000_000,
        burstSets: 10000,
        burstRepeats: 3,
        fanOutObservers: 10000,
        outsideChanges: 41,
        memoryRuns: 3)

    /// The quick run: every row, fewer samples, smaller stores where the big ones take long.
    static let quickScale = Scale(
        quick: true,
        fast: Sampling(warmup: 1, samples: 5, sampleNanoseconds: 5_000_000),
        slow: Sampling(warmup: 1, samples: 5),
        growthSizes: [1, 10, 100, 1000, 10000, 100_000],
        userDefaultsGrownSizes: [1, 10, 100, 1000, 5000],
        userDefaultsLoadedSizes: [1, 1000, 10000],
        growthBatch: 16,
        saveSizes: [10, 100, 1000, 10000],
        bigStoreBytes: 10_000_000,
        burstSets: 10000,
        burstRepeats: 1,
        fanOutObservers: 10000,
        outsideChanges: 11,
        memoryRuns: 1)

    /// A one-line description of the scale for the report's header.
    var summary: String {
        if quick {
            return "QUICK run (--quick): \(fast.samples) samples per figure, UserDefaults grown only up to "
                + "\(userDefaultsGrownSizes.last ?? 0) keys, save sweep up to \(saveSizes.last ?? 0) keys, "
                + "\(burstRepeats) burst, \(memoryRuns) child per memory figure — use a full run for README numbers"
        }
        return "full run: \(fast.samples) samples per fast figure, \(slow.samples) per slow one, after warm-up"
    }
}
