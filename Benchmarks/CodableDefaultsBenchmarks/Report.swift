import Foundation

/// Prints the results as a table and writes them as JSON.
enum Report {
    /// The table for one case: a header, one row per figure, one line per goal.
    static func table(_ result: CaseResult) -> String {
        var lines: [String] = []
        lines.append("── \(result.id) · \(result.title)")
        lines.append("   \(result.detail)")
        lines.append("   ratio = median ÷ \(result.ratioReference)")
        lines.append(
            "   " + pad("contender", 64) + pad("median", 11, left: true) + "   " + pad("p10 … p90", 23)
                + pad("ratio", 8, left: true) + "   samples×ops")
        for figure in result.figures {
            let stats = figure.stats
            let spread = "\(format(stats.p10, figure.unit)) … \(format(stats.p90, figure.unit))"
            let ratio = figure.ratio.map { format(ratio: $0) } ?? "—"
            var line =
                "   " + pad(figure.contender, 64) + pad(format(stats.median, figure.unit), 11, left: true) + "   "
                + pad(spread, 23) + pad(ratio, 8, left: true) + "   \(stats.samples)×\(stats.operationsPerSample)"
            if let note = figure.note { line += "  (\(note))" }
            lines.append(line)
        }
        for goal in result.goals {
            lines.append(
                "   goal: " + pad(goal.text, 80) + " measured " + pad(goal.measured, 9)
                    + (goal.met ? " MET" : " NOT MET"))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The summary of every goal, met or not.
    static func goalSummary(_ results: RunResults) -> String {
        let goals = results.cases.flatMap { result in result.goals.map { (result.id, $0) } }
        guard !goals.isEmpty else { return "" }
        var lines = ["── goals: \(goals.filter { $0.1.met }.count) of \(goals.count) met"]
        for (id, goal) in goals {
            lines.append(
                "   " + (goal.met ? "met     " : "NOT MET ") + pad(id, 16) + pad(goal.text, 74) + " " + goal.measured)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes every figure and goal as JSON to `path`.
    static func writeJSON(_ results: RunResults, header: [String: Any], to path: String) throws {
        var figures: [[String: Any]] = []
        for result in results.cases {
            for figure in result.figures {
                let goals = result.goals.filter { $0.contender == figure.contender }
                let stats = figure.stats
                figures.append([
                    "case": result.id,
                    "case_title": result.title,
                    "contender": figure.contender,
                    "unit": figure.unit.rawValue,
                    "median": stats.median,
                    "median_ns": figure.unit == .nanoseconds ? stats.median : NSNull(),
                    "spread": ["min": stats.minimum, "p10": stats.p10, "p90": stats.p90, "max": stats.maximum],
                    "iterations": stats.samples,
                    "operations_per_iteration": stats.operationsPerSample,
                    "ratio": figure.ratio ?? NSNull(),
                    "ratio_to": result.ratioReference,
                    "goal": goals.isEmpty ? NSNull() : goals.map(\.text).joined(separator: "; "),
                    "met": goals.isEmpty ? NSNull() : goals.allSatisfy(\.met),
                    "note": figure.note ?? NSNull(),
                ])
            }
        }
        var goals: [[String: Any]] = []
        for result in results.cases {
            for goal in result.goals {
                goals.append([
                    "case": result.id, "goal": goal.text, "measured": goal.measured, "met": goal.met,
                    "contender": goal.contender,
                ])
            }
        }
        var document = header
        document["figures"] = figures
        document["goals"] = goals
        document["cases"] = results.cases.map { ["id": $0.id, "title": $0.title, "detail": $0.detail] }
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw BenchmarkError("cannot write the JSON report to \(path): \(error)")
        }
    }

    /// `text` padded with spaces to `width` characters (on the left for numbers).
    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let count = text.count
        guard count < width else { return text + " " }
        let padding = String(repeating: " ", count: width - count)
        return left ? padding + text : text + padding
    }
}
