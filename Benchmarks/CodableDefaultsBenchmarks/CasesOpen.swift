import CodableDefaults
import Foundation

/// Opening a large store: time to the first read, and the memory it takes to hold it.
enum OpenCases {
    /// Opens the big store and reads one key, against parsing the same bytes with Foundation.
    static func openBigStore(_ context: Context) throws {
        let big = try context.bigStore()
        let url = URL(fileURLWithPath: big.path)
        let sampling = context.scale.slow.with(samples: context.scale.quick ? 3 : 7)
        let ours = "CodableDefaults: Defaults(url:) + read one key"
        let parseOnly = "JSONSerialization.jsonObject on the bytes (already in memory)"
        var result = CaseResult(
            id: "open-10mb", title: "open a \(format(Double(big.bytes), .bytes)) store and read one key",
            detail: "\(big.keys) keys, file in the page cache; each contender starts from nothing and ends holding "
                + "the parsed store (released untimed); \(sampling.samples) samples after \(sampling.warmup) warm-up",
            ratioReference: ours)

        progress("open-10mb: CodableDefaults")
        let key = Defaults.Key<Int>(big.probeKey, default: -1)
        var held: [Any] = []
        result.figures.append(
            Figure(
                contender: ours,
                stats: try measure(sampling) {
                    var value = -1
                    let took = try elapsed {
                        let defaults = try Defaults(url: url, saveMode: .manual)
                        value = defaults[key]
                        held.append(defaults)
                    }
                    held.removeAll()
                    guard value == big.probeValue else { throw BenchmarkError("open: wrong value at \(big.probeKey)") }
                    return took
                }))

        progress("open-10mb: JSONSerialization")
        let data = try Data(contentsOf: url)
        for (label, readsFile) in [("JSONSerialization: read file + jsonObject + lookup", true), (parseOnly, false)] {
            result.figures.append(
                Figure(
                    contender: label,
                    stats: try measure(sampling) {
                        var value: Int?
                        let took = try elapsed {
                            let bytes = readsFile ? try Data(contentsOf: url) : data
                            let object = try JSONSerialization.jsonObject(with: bytes)
                            value = (object as? [String: Any])?[big.probeKey] as? Int
                            held.append(object)
                        }
                        held.removeAll()
                        guard value == big.probeValue else { throw BenchmarkError("open: JSONSerialization misread") }
                        return took
                    }))
        }

        progress("open-10mb: naive JSONDecoder")
        result.figures.append(
            Figure(
                contender: "naive: read file + JSONDecoder [String: Value]",
                stats: try measure(sampling.with(samples: min(sampling.samples, 3))) {
                    var value: AnyJSON?
                    let took = try elapsed {
                        let dictionary = try JSONDecoder().decode([String: AnyJSON].self, from: Data(contentsOf: url))
                        value = dictionary[big.probeKey]
                        held.append(dictionary)
                    }
                    held.removeAll()
                    guard value == .integer(big.probeValue) else { throw BenchmarkError("open: JSONDecoder misread") }
                    return took
                }))

        result.figures.append(
            Figure(
                contender: "reference: read the file's bytes only",
                stats: try measure(sampling) { try elapsed { held.append(try Data(contentsOf: url)) } }))
        held.removeAll()
        try result.computeRatios(against: ours)
        try result.goalFaster(
            "≥ 20× faster than JSONSerialization.jsonObject on the same bytes", fast: ours, slow: parseOnly, factor: 20)
        context.record(result)
    }

    /// The peak and held memory of each contender holding the big store, each in a fresh child process.
    static func memory(_ context: Context) throws {
        let big = try context.bigStore()
        let runs = context.scale.memoryRuns
        let fileSize = "store file on disk"
        var result = CaseResult(
            id: "memory-10mb", title: "memory holding a \(format(Double(big.bytes), .bytes)) store",
            detail:
                "each figure from \(runs) fresh child process(es) of this binary: peak = VmHWM after opening − VmRSS "
                + "before (VmHWM reset first), held = VmRSS after − VmRSS before, still holding the store",
            ratioReference: "the store file's size")
        result.figures.append(Figure(contender: fileSize, stats: Stats(single: Double(big.bytes)), unit: .bytes))

        let suiteName = context.freshSuiteName("memory")
        let plistPath = try UserDefaultsSuite.plistPath(forSuite: suiteName)
        let plist: Data
        do {
            plist = try PropertyListSerialization.data(
                fromPropertyList: Fixture.propertyList(keys: big.keys), format: .xml, options: 0)
        } catch {
            throw BenchmarkError("memory: cannot make the property list: \(error)")
        }
        try Files.write([UInt8](plist), to: plistPath)

        var resetRefused = false
        for contender in Child.memoryContenders {
            progress("memory-10mb: \(contender)")
            var peaks: [Double] = []
            var helds: [Double] = []
            for _ in 0..<runs {
                let isSuite = contender.hasPrefix("UserDefaults")
                let output = try Child.run(["memory", contender, isSuite ? suiteName : big.path, big.probeKey])
                let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
                guard fields.count == 4 else { throw BenchmarkError("memory: the child printed \(output)") }
                peaks.append((fields[1] - fields[0]) * 1024)
                helds.append((fields[2] - fields[0]) * 1024)
                resetRefused = resetRefused || fields[3] == 0
            }
            let note = contender.hasPrefix("UserDefaults") ? "plist is \(format(Double(plist.count), .bytes))" : nil
            result.figures.append(
                Figure(contender: "\(contender): peak", stats: Stats(peaks), unit: .bytes, note: note))
            result.figures.append(Figure(contender: "\(contender): held", stats: Stats(helds), unit: .bytes))
        }
        do {
            try FileManager.default.removeItem(atPath: plistPath)
        } catch {
            throw BenchmarkError("memory: cannot remove \(plistPath): \(error)")
        }
        if resetRefused { result.detail += " (the kernel refused to reset VmHWM: peaks include the process start)" }
        try result.computeRatios(against: fileSize)
        try result.goalAtMost(
            "held ≤ 1.5× the file size", subject: "CodableDefaults: held", reference: fileSize, factor: 1.5)
        try result.goalAtMost(
            "peak ≤ 2× the file size", subject: "CodableDefaults: peak", reference: fileSize, factor: 2)
        context.record(result)
    }
}
