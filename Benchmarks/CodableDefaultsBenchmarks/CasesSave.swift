import CodableDefaults
import Foundation

/// Saves: writing a store after one change, against the cost of durably writing the same bytes.
enum SaveCases {
    /// The figures of one store size.
    struct SaveFigures {
        /// CodableDefaults `save()` after one set.
        var ours: Stats
        /// The raw durable write of the same bytes.
        var raw: Stats
        /// The naive pattern's set (encode everything, `.atomic` write).
        var naive: Stats
        /// `UserDefaults.synchronize()` after one set, when measured.
        var userDefaults: Stats?
        /// The store file's size.
        var fileBytes: Int
    }

    /// Saves after one changed key in a 10k-key store.
    static func saveOneChange(_ context: Context) throws {
        let keys = 10000
        let sampling = context.scale.slow
        var result = CaseResult(
            id: "save-10k", title: "save after 1 changed key in a \(keys)-key store",
            detail: "one key set (untimed), then the save timed: CodableDefaults save() (.manual); "
                + "UserDefaults synchronize(); naive set = encode all + .atomic write (Foundation fsyncs the file, not the directory); "
                + "\(sampling.samples) samples after \(sampling.warmup) warm-up",
            ratioReference: "reference: raw durable write of the same bytes")
        let figures = try context.withDirectory("save-10k") { directory in
            try measureSaves(keys: keys, sampling: sampling, userDefaults: true, context: context, directory: directory)
        }
        let size = format(Double(figures.fileBytes), .bytes)
        result.detail += "; file \(size)"
        result.figures = [
            Figure(contender: "CodableDefaults save()", stats: figures.ours),
            Figure(contender: "reference: raw durable write of the same bytes", stats: figures.raw),
            Figure(contender: "UserDefaults.synchronize()", stats: figures.userDefaults!),
            Figure(contender: "naive: [String: Value] + JSONEncoder + .atomic write", stats: figures.naive),
        ]
        try result.computeRatios(against: "reference: raw durable write of the same bytes")
        try result.goalAtMost(
            "≤ 1.5× the raw durable write of the same bytes", subject: "CodableDefaults save()",
            reference: "reference: raw durable write of the same bytes", factor: 1.5)
        try result.goalFaster(
            "≥ 10× faster than UserDefaults.synchronize()", fast: "CodableDefaults save()",
            slow: "UserDefaults.synchronize()", factor: 10)
        context.record(result)
    }

    /// Save time against file size, for the chart.
    static func saveAgainstSize(_ context: Context) throws {
        let scale = context.scale
        var result = CaseResult(
            id: "save-size", title: "save after 1 changed key, against store size",
            detail: "as save-10k, for stores of \(scale.saveSizes.map(String.init).joined(separator: ", ")) keys; "
                + "fewer samples for the largest",
            ratioReference: "the raw durable write at the same size")
        var ours = Series(name: "CodableDefaults save()", color: "#1f77b4", points: [])
        var naive = Series(name: "naive (encode all, .atomic write)", color: "#ff7f0e", points: [])
        var raw = Series(name: "raw durable write", color: "#2ca02c", points: [])
        try context.withDirectory("save-size") { directory in
            for keys in scale.saveSizes {
                progress("save-size: \(keys) keys")
                let sampling = keys >= 100_000 ? scale.slow.with(samples: 5) : scale.slow
                let figures = try measureSaves(
                    keys: keys, sampling: sampling, userDefaults: false, context: context, directory: directory)
                let size = format(Double(figures.fileBytes), .bytes)
                var rows = [
                    Figure(contender: "CodableDefaults save() @ \(keys) keys (\(size))", stats: figures.ours),
                    Figure(contender: "naive @ \(keys) keys", stats: figures.naive),
                    Figure(contender: "raw durable write @ \(keys) keys", stats: figures.raw),
                ]
                for index in rows.indices { rows[index].ratio = rows[index].stats.median / figures.raw.median }
                result.figures += rows
                let x = Double(figures.fileBytes)
                ours.points.append((x, figures.ours.median))
                naive.points.append((x, figures.naive.median))
                raw.points.append((x, figures.raw.median))
            }
        }
        context.results.saveTimeSeries = [ours, naive, raw]
        context.record(result)
    }

    /// Measures the saves of one store size, each contender in its own subdirectory.
    private static func measureSaves(
        keys: Int, sampling: Sampling, userDefaults: Bool, context: Context, directory: TempDirectory
    ) throws -> SaveFigures {
        let name = SampleValue.key(0)
        var counter = 0

        // CodableDefaults: set one key, then time save().
        let ourDirectory = try TempDirectory(in: directory.path, prefix: "cd-\(keys)")
        let storePath = ourDirectory.file("store.json")
        try Files.write(Fixture.storeFile(keys: keys), to: storePath)
        let defaults = try Defaults(url: URL(fileURLWithPath: storePath), saveMode: .manual)
        let key = Defaults.Key<Int>(name, default: -1)
        let ours = try measure(sampling) {
            counter += 1
            defaults[key] = counter
            return try elapsed { try defaults.save() }
        }
        let bytes = try Files.read(storePath)
        guard String(decoding: bytes.prefix(40), as: UTF8.self).contains("\"\(name)\": \(counter)") else {
            throw BenchmarkError("save: CodableDefaults' file does not hold the last value set")
        }

        // The raw durable write of the same bytes.
        let rawDirectory = try TempDirectory(in: directory.path, prefix: "raw-\(keys)")
        let raw = try measure(sampling) {
            try elapsed { try RawDurableWrite.save(bytes, directory: rawDirectory.path, name: "store.json") }
        }
        guard try Files.size(rawDirectory.file("store.json")) == bytes.count else {
            throw BenchmarkError("save: the raw write left a file of the wrong size")
        }

        // The naive pattern: the set itself encodes and writes everything.
        let naiveDirectory = try TempDirectory(in: directory.path, prefix: "naive-\(keys)")
        let naive = NaiveStore(path: naiveDirectory.file("store.json"), values: Fixture.naiveDictionary(keys: keys))
        let naiveSampling = keys >= 10000 ? sampling.with(samples: min(sampling.samples, 7)) : sampling
        let naiveStats = try measure(naiveSampling) {
            counter += 1
            return try elapsed { try naive.set(.integer(counter), forKey: name) }
        }

        // UserDefaults: set one key, then time synchronize(), and check the file really holds the value.
        var userDefaultsStats: Stats?
        if userDefaults {
            progress("save: UserDefaults.synchronize() with \(keys) keys")
            let suite = try UserDefaultsSuite(
                name: context.freshSuiteName("save-\(keys)"), contents: Fixture.propertyList(keys: keys))
            userDefaultsStats = try measure(sampling) {
                counter += 1
                suite.defaults.set(counter, forKey: name)
                var synchronized = false
                let took = elapsed { synchronized = suite.defaults.synchronize() }
                guard synchronized else { throw BenchmarkError("UserDefaults.synchronize() returned false") }
                return took
            }
            try suite.verifyPersisted(key: name, value: counter)
            try suite.remove()
        }
        return SaveFigures(
            ours: ours, raw: raw, naive: naiveStats, userDefaults: userDefaultsStats, fileBytes: bytes.count)
    }
}
