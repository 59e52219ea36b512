import Foundation

/// Draws a log–log line chart as a plain SVG document, with no library.
struct LogLogChart {
    /// The title above the plot.
    var title: String
    /// The horizontal axis' label.
    var xLabel: String
    /// The vertical axis' label.
    var yLabel: String
    /// The units of the horizontal axis' ticks, one per factor of 1000 (e.g. `["", "k", "M"]`).
    var xUnits: [String]
    /// The units of the vertical axis' ticks, one per factor of 1000 (e.g. `["ns", "µs", "ms", "s"]`).
    var yUnits: [String]
    /// The lines.
    var series: [Series]
    /// A line of small print under the plot (the run's date and machine).
    var footnote: String

    private let width = 980.0
    private let height = 500.0
    private let left = 90.0
    private let right = 410.0
    private let top = 56.0
    private let bottom = 70.0

    /// Creates a chart.
    init(
        title: String, xLabel: String, yLabel: String, xUnits: [String], yUnits: [String], series: [Series],
        footnote: String
    ) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.xUnits = xUnits
        self.yUnits = yUnits
        self.series = series
        self.footnote = footnote
    }

    /// The SVG document.
    func render() throws -> String {
        let points = series.flatMap(\.points)
        guard !points.isEmpty, points.allSatisfy({ $0.x > 0 && $0.y > 0 }) else {
            throw BenchmarkError("chart \"\(title)\": no data, or a value that is not positive (log scale)")
        }
        let xDecades = decades(points.map(\.x))
        let yDecades = decades(points.map(\.y))
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        func px(_ x: Double) -> Double {
            left + (log10(x) - Double(xDecades.lowerBound)) / Double(xDecades.count - 1) * plotWidth
        }
        func py(_ y: Double) -> Double {
            top + plotHeight - (log10(y) - Double(yDecades.lowerBound)) / Double(yDecades.count - 1) * plotHeight
        }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="28" font-size="16" font-weight="bold">\(escape(title))</text>

            """
        // Grid: a line at each power of ten, fainter ones at 2× and 5×.
        for decade in xDecades {
            let value = pow(10, Double(decade))
            svg += line(px(value), top, px(value), top + plotHeight, "#bbbbbb")
            svg += text(px(value), top + plotHeight + 18, tick(decade, units: xUnits), anchor: "middle")
            if decade < xDecades.upperBound {
                for minor in [2.0, 5.0] {
                    svg += line(px(value * minor), top, px(value * minor), top + plotHeight, "#eeeeee")
                }
            }
        }
        for decade in yDecades {
            let value = pow(10, Double(decade))
            svg += line(left, py(value), left + plotWidth, py(value), "#bbbbbb")
            svg += text(left - 8, py(value) + 4, tick(decade, units: yUnits), anchor: "end")
            if decade < yDecades.upperBound {
                for minor in [2.0, 5.0] {
                    svg += line(left, py(value * minor), left + plotWidth, py(value * minor), "#eeeeee")
                }
            }
        }
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotWidth)\" height=\"\(plotHeight)\" "
        svg += "fill=\"none\" stroke=\"#333333\"/>\n"
        svg += text(left + plotWidth / 2, height - 30, xLabel, anchor: "middle")
        svg += "<text transform=\"translate(22 \(top + plotHeight / 2)) rotate(-90)\" text-anchor=\"middle\">"
        svg += "\(escape(yLabel))</text>\n"
        svg += text(left, height - 8, footnote, anchor: "start", size: 10, color: "#666666")

        // The lines, and the legend on the right.
        for (index, line) in series.enumerated() {
            let coordinates = line.points.map { "\(round2(px($0.x))),\(round2(py($0.y)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\" points=\"\(coordinates)\"/>\n"
            for point in line.points {
                svg += "<circle cx=\"\(round2(px(point.x)))\" cy=\"\(round2(py(point.y)))\" r=\"3.5\" "
                svg += "fill=\"\(line.color)\"/>\n"
            }
            let legendY = top + 12 + Double(index) * 22
            svg += self.line(left + plotWidth + 16, legendY - 4, left + plotWidth + 40, legendY - 4, line.color, 3)
            svg += text(left + plotWidth + 46, legendY, line.name, anchor: "start")
        }
        svg += "</svg>\n"
        return svg
    }

    /// The powers of ten that enclose `values`.
    private func decades(_ values: [Double]) -> ClosedRange<Int> {
        let low = Int(log10(values.min()!).rounded(.down))
        var high = Int(log10(values.max()!).rounded(.up))
        if high <= low { high = low + 1 }
        return low...high
    }

    /// The label of 10^`decade` with the unit of its factor of 1000: `100 µs`, `10k` (units that start with
    /// an empty string are counts, written without a space).
    private func tick(_ decade: Int, units: [String]) -> String {
        let group = max(0, min(units.count - 1, decade / 3))
        let mantissa = pow(10, Double(decade - group * 3))
        let number = mantissa >= 1 ? String(Int(mantissa)) : String(mantissa)
        return units[0].isEmpty ? number + units[group] : number + " " + units[group]
    }

    private func line(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ color: String, _ width: Double = 1
    ) -> String {
        "<line x1=\"\(round2(x1))\" y1=\"\(round2(y1))\" x2=\"\(round2(x2))\" y2=\"\(round2(y2))\" "
            + "stroke=\"\(color)\" stroke-width=\"\(width)\"/>\n"
    }

    private func text(
        _ x: Double, _ y: Double, _ content: String, anchor: String, size: Int = 12, color: String = "#222222"
    ) -> String {
        "<text x=\"\(round2(x))\" y=\"\(round2(y))\" text-anchor=\"\(anchor)\" font-size=\"\(size)\" "
            + "fill=\"\(color)\">\(escape(content))</text>\n"
    }

    private func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Writes the run's two charts.
enum Charts {
    /// Writes `set-cost-vs-store-size.svg` and `save-time-vs-file-size.svg` into `directory` (made if
    /// missing), for the series the run measured; a chart whose case did not run is skipped with a note.
    static func write(_ results: RunResults, to directory: String, footnote: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw BenchmarkError("cannot make the SVG directory \(directory): \(error)")
        }
        let charts = [
            (
                "set-cost-vs-store-size.svg", "set-growth",
                LogLogChart(
                    title: "Cost of setting a new key, against store size", xLabel: "keys in the store",
                    yLabel: "time per set (median)", xUnits: ["", "k", "M"], yUnits: ["ns", "µs", "ms", "s"],
                    series: results.setCostSeries, footnote: footnote)
            ),
            (
                "save-time-vs-file-size.svg", "save-size",
                LogLogChart(
                    title: "Saving after one change, against file size", xLabel: "store file size",
                    yLabel: "time per save (median)", xUnits: ["B", "kB", "MB", "GB"], yUnits: ["ns", "µs", "ms", "s"],
                    series: results.saveTimeSeries, footnote: footnote)
            ),
        ]
        for (name, caseID, chart) in charts {
            guard !chart.series.isEmpty else {
                progress("not drawing \(name): the case \(caseID) did not run")
                continue
            }
            let path = "\(directory)/\(name)"
            do {
                try Data(try chart.render().utf8).write(to: URL(fileURLWithPath: path))
            } catch let error as BenchmarkError {
                throw error
            } catch {
                throw BenchmarkError("cannot write \(path): \(error)")
            }
            progress("wrote \(path)")
        }
    }
}
