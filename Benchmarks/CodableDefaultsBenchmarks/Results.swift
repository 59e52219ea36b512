import Foundation

/// What a figure measures.
enum Unit: String, Sendable {
    /// Time, per operation.
    case nanoseconds = "ns"
    /// Memory or file size.
    case bytes
    /// A count of events (file writes).
    case count
}

/// One contender's result in one case: a row of the table.
struct Figure: Sendable {
    /// Who did the work, and how (e.g. "UserDefaults.integer(forKey:)").
    let contender: String
    /// The median and spread.
    let stats: Stats
    /// What the numbers are.
    var unit: Unit = .nanoseconds
    /// This figure's median divided by the case's reference median (`nil` when there is no reference).
    var ratio: Double?
    /// A short remark printed after the row.
    var note: String?
}

/// A target the code is measured against: printed beside the figures and marked met or not met.
struct Goal: Sendable {
    /// The goal as stated in the project's issue.
    let text: String
    /// The measured value the goal is judged on (e.g. "31.2×").
    let measured: String
    /// Whether the measurement meets the goal.
    let met: Bool
    /// The figure the goal is about (its JSON record carries the goal).
    let contender: String
}

/// The result of one case: its figures and goals.
struct CaseResult: Sendable {
    /// A short stable identifier, used by `--filter` and in the JSON.
    let id: String
    /// What is measured.
    var title: String
    /// The setup: store size, samples, save mode.
    var detail: String
    /// What the ratio column divides by.
    var ratioReference: String
    /// The rows.
    var figures: [Figure] = []
    /// The goals.
    var goals: [Goal] = []

    /// The figure of `contender`; a missing one is a bug in the case, reported loudly.
    func figure(_ contender: String) throws -> Figure {
        guard let figure = figures.first(where: { $0.contender == contender }) else {
            throw BenchmarkError("case \(id) has no figure \"\(contender)\"")
        }
        return figure
    }

    /// Sets each figure's ratio to its median divided by the median of `reference`.
    mutating func computeRatios(against reference: String) throws {
        let base = try figure(reference).stats.median
        for index in figures.indices { figures[index].ratio = figures[index].stats.median / base }
    }

    /// Adds a "`fast` is at least `factor`× faster than `slow`" goal.
    mutating func goalFaster(_ text: String, fast: String, slow: String, factor: Double) throws {
        let ratio = try figure(slow).stats.median / figure(fast).stats.median
        goals.append(Goal(text: text, measured: format(ratio: ratio), met: ratio >= factor, contender: fast))
    }

    /// Adds a "`subject` costs at most `factor`× `reference`" goal.
    mutating func goalAtMost(_ text: String, subject: String, reference: String, factor: Double) throws {
        let ratio = try figure(subject).stats.median / figure(reference).stats.median
        goals.append(Goal(text: text, measured: format(ratio: ratio), met: ratio <= factor, contender: subject))
    }
}

/// A line of points for a chart.
struct Series: Sendable {
    /// The legend text.
    let name: String
    /// The line's colour (an SVG colour).
    let color: String
    /// The points, x ascending.
    var points: [(x: Double, y: Double)]
}

/// Everything one run measured, in the order the cases ran.
struct RunResults: Sendable {
    /// The cases.
    var cases: [CaseResult] = []
    /// Cost of a set against store size, one series per contender.
    var setCostSeries: [Series] = []
    /// Save time against file size, one series per contender.
    var saveTimeSeries: [Series] = []
}

/// `12.3×` with a precision that suits the size.
func format(ratio: Double) -> String {
    if ratio >= 100 { return "\(Int(ratio.rounded()))×" }
    if ratio >= 10 { return "\(fixed(ratio, 1))×" }
    return "\(fixed(ratio, 2))×"
}

/// A figure in its unit, human-readable: `18.2 ns`, `4.56 ms`, `12.3 MB`, `1`.
func format(_ value: Double, _ unit: Unit) -> String {
    switch unit {
    case .nanoseconds:
        let magnitude = abs(value)
        if magnitude < 1000 { return "\(fixed(value, magnitude < 100 ? 1 : 0)) ns" }
        if magnitude < 1_000_000 { return "\(significant(value / 1000)) µs" }
        if magnitude < 1_000_000_000 { return "\(significant(value / 1_000_000)) ms" }
        return "\(significant(value / 1_000_000_000)) s"
    case .bytes:
        if value < 1000 { return "\(Int(value)) B" }
        if value < 1_000_000 { return "\(significant(value / 1000)) kB" }
        return "\(significant(value / 1_000_000)) MB"
    case .count:
        return value == value.rounded() ? "\(Int(value))" : fixed(value, 1)
    }
}

/// Three significant digits for numbers from 1 to 999.
private func significant(_ value: Double) -> String {
    let magnitude = abs(value)
    return fixed(value, magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0)
}

/// `value` with exactly `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}
