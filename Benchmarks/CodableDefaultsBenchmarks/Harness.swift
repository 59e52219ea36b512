import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure that makes a measurement impossible or untrustworthy: the program stops with its message.
struct BenchmarkError: Error, CustomStringConvertible {
    /// What went wrong, with the path or value involved.
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// An error for a failed system call, with `errno` spelled out.
    static func system(_ call: String, _ subject: String, errno code: Int32 = errno) -> BenchmarkError {
        BenchmarkError("\(call) \(subject): \(String(cString: strerror(code))) (errno \(code))")
    }
}

/// Nanoseconds on the monotonic clock (`CLOCK_MONOTONIC`): never goes back, and is the same clock in every
/// process on the machine, so a child's timestamps compare with the parent's.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Runs `body` once and returns how long it took, in nanoseconds.
@inline(__always)
func elapsed(_ body: () throws -> Void) rethrows -> UInt64 {
    let start = monotonicNanoseconds()
    try body()
    return monotonicNanoseconds() &- start
}

/// Keeps `value` observable so the optimizer cannot remove the work that produced it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// When the program started (set by `main` touching it first), for the times in progress lines.
let programStart = monotonicNanoseconds()

/// Writes a progress line, with the seconds since the start, to standard error (the table goes to standard
/// output).
func progress(_ message: String) {
    let start = programStart
    let seconds = Double(monotonicNanoseconds() - start) / 1e9
    FileHandle.standardError.write(Data("… [\(fixed(seconds, 1)) s] \(message)\n".utf8))
}

/// The summary of one contender's samples: the median and the spread.
struct Stats: Sendable {
    /// The median sample, per operation.
    let median: Double
    /// The smallest sample, per operation.
    let minimum: Double
    /// The 10th percentile, per operation.
    let p10: Double
    /// The 90th percentile, per operation.
    let p90: Double
    /// The largest sample, per operation.
    let maximum: Double
    /// How many samples were kept (warm-up samples are not counted).
    let samples: Int
    /// How many operations each sample timed (its time is divided by this).
    let operationsPerSample: Int

    /// Summarizes samples that are already per operation.
    init(_ values: [Double], operationsPerSample: Int = 1) {
        precondition(!values.isEmpty, "no samples")
        let sorted = values.sorted()
        func percentile(_ fraction: Double) -> Double {
            let position = fraction * Double(sorted.count - 1)
            let lower = Int(position.rounded(.down))
            let upper = min(lower + 1, sorted.count - 1)
            let weight = position - Double(lower)
            return sorted[lower] * (1 - weight) + sorted[upper] * weight
        }
        median = percentile(0.5)
        minimum = sorted[0]
        p10 = percentile(0.1)
        p90 = percentile(0.9)
        maximum = sorted[sorted.count - 1]
        samples = sorted.count
        self.operationsPerSample = operationsPerSample
    }

    /// A single figure measured once (a count, a size).
    init(single value: Double) {
        self.init([value])
    }
}

/// How much to measure: warm-up and sample counts, and how long one sample of a fast operation lasts.
struct Sampling: Sendable {
    /// Samples run and thrown away first.
    var warmup: Int
    /// Samples kept.
    var samples: Int
    /// For fast operations: how long one sample should take, so that the clock's cost is negligible.
    var sampleNanoseconds: UInt64 = 10_000_000

    /// The same sampling with a different number of kept samples (at least one).
    func with(samples: Int) -> Sampling {
        var copy = self
        copy.samples = max(1, samples)
        return copy
    }
}

/// Measures an operation that times itself: `sample` does one sample's work, timing only the part that
/// counts, and returns those nanoseconds.
///
/// - Parameters:
///   - sampling: Warm-up and sample counts.
///   - operations: How many operations one sample covers; the figures are per operation.
///   - sample: Runs one sample and returns the nanoseconds it measured.
func measure(
    _ sampling: Sampling, operations: Int = 1, _ sample: () throws -> UInt64
) rethrows -> Stats {
    for _ in 0..<sampling.warmup { _ = try sample() }
    var values: [Double] = []
    values.reserveCapacity(sampling.samples)
    for _ in 0..<sampling.samples { values.append(Double(try sample()) / Double(operations)) }
    return Stats(values, operationsPerSample: operations)
}

/// Measures a fast operation: `body(n)` runs the operation `n` times. The number of operations per sample
/// is calibrated so that a sample lasts about `sampling.sampleNanoseconds`.
///
/// - Parameters:
///   - sampling: Warm-up and sample counts, and the target length of a sample.
///   - maximumOperations: A cap on the operations in one sample (for operations that change state).
///   - body: Runs the operation the given number of times.
func measureRepeated(
    _ sampling: Sampling, maximumOperations: Int = 1 << 26, _ body: (Int) throws -> Void
) rethrows -> Stats {
    var operations = 1
    var took = try elapsed { try body(operations) }
    while took < sampling.sampleNanoseconds / 8 && operations < maximumOperations {
        operations = min(operations * 8, maximumOperations)
        took = try elapsed { try body(operations) }
    }
    let scaled = Double(operations) * Double(sampling.sampleNanoseconds) / Double(max(took, 1))
    operations = max(1, min(maximumOperations, Int(scaled)))
    return try measure(sampling, operations: operations) { try elapsed { try body(operations) } }
}

/// Measures several fast operations in alternation, sample by sample, so that a drift of the machine's speed
/// (other processes, frequency changes) affects them alike. The operation count per sample is calibrated on
/// the first operation and used for all.
///
/// - Parameters:
///   - sampling: Warm-up and sample counts, and the target length of a sample.
///   - bodies: Each runs its operation the given number of times.
/// - Returns: One summary per operation, in order.
func measureInterleaved(_ sampling: Sampling, _ bodies: [(Int) throws -> Void]) throws -> [Stats] {
    guard let first = bodies.first else { return [] }
    var operations = 1
    var took = try elapsed { try first(operations) }
    while took < sampling.sampleNanoseconds / 8 {
        operations *= 8
        took = try elapsed { try first(operations) }
    }
    operations = max(1, Int(Double(operations) * Double(sampling.sampleNanoseconds) / Double(max(took, 1))))
    var values = [[Double]](repeating: [], count: bodies.count)
    for round in 0..<(sampling.warmup + sampling.samples) {
        for (index, body) in bodies.enumerated() {
            let nanoseconds = try elapsed { try body(operations) }
            if round >= sampling.warmup { values[index].append(Double(nanoseconds) / Double(operations)) }
        }
    }
    return values.map { Stats($0, operationsPerSample: operations) }
}

/// A mutual-exclusion lock for the benchmark's own shared state and for the "lock-guarded `Dictionary`"
/// reference (the same `pthread_mutex_t` the library uses on Linux).
final class BenchLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates an unlocked lock.
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
