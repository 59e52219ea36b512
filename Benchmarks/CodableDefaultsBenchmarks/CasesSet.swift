import CodableDefaults
import Foundation

/// Sets: the cost of changing a value in memory, and how it grows with the store.
enum SetCases {
    /// Keys in the store of the small-value case.
    static let storeKeys = 1000

    /// Sets a small value in a store of 1k keys.
    static func setSmallValue(_ context: Context) throws {
        let scale = context.scale
        let name = SampleValue.key(400)
        let reference = "CodableDefaults defaults[key] = v (.afterIdle 500 ms, the default)"
        var result = CaseResult(
            id: "set-1k", title: "set a small value (Int) in a store of \(storeKeys) keys",
            detail: "every set changes the value; UserDefaults keeps it in memory until synchronize(); the naive "
                + "pattern encodes and writes the whole store on each set; \(scale.fast.samples) samples",
            ratioReference: reference)
        try context.withDirectory("set-1k") { directory in
            var counter = 0
            for (mode, label) in [(Defaults.SaveMode.default, reference), (.manual, "CodableDefaults (.manual)")] {
                progress("set-1k: \(label)")
                let path = directory.url(mode == .manual ? "manual.json" : "store.json")
                try Files.write(Fixture.storeFile(keys: storeKeys), to: path.path)
                let defaults = try Defaults(url: path, saveMode: mode)
                let key = Defaults.Key<Int>(name, default: -1)
                result.figures.append(
                    Figure(
                        contender: label,
                        stats: measureRepeated(scale.fast) { count in
                            for _ in 0..<count {
                                counter += 1
                                defaults[key] = counter
                            }
                        },
                        note: mode == .manual ? nil : "background saves run meanwhile"))
                guard defaults[key] == counter else { throw BenchmarkError("set-1k: \(label) lost the last set") }
                try defaults.save()
            }
            progress("set-1k: CodableDefaults string-key API")
            try Files.write(Fixture.storeFile(keys: storeKeys), to: directory.file("strings.json"))
            let strings = try Defaults(url: directory.url("strings.json"), saveMode: .manual)
            result.figures.append(
                Figure(
                    contender: "CodableDefaults set(_:forKey:) (string-key API, .manual)",
                    stats: measureRepeated(scale.fast) { count in
                        for _ in 0..<count {
                            counter += 1
                            strings.set(counter, forKey: name)
                        }
                    }))

            progress("set-1k: UserDefaults")
            let suite = try UserDefaultsSuite(
                name: context.freshSuiteName("set-1k"), contents: Fixture.propertyList(keys: storeKeys))
            let userDefaults = suite.defaults
            result.figures.append(
                Figure(
                    contender: "UserDefaults.set(_:forKey:)",
                    stats: measureRepeated(scale.fast) { count in
                        for _ in 0..<count {
                            counter += 1
                            userDefaults.set(counter, forKey: name)
                        }
                    }))
            guard userDefaults.integer(forKey: name) == counter else {
                throw BenchmarkError("set-1k: UserDefaults lost the last set")
            }
            try suite.remove()

            progress("set-1k: naive pattern")
            let naive = NaiveStore(path: directory.file("naive.json"), values: Fixture.naiveDictionary(keys: storeKeys))
            result.figures.append(
                Figure(
                    contender: "naive: [String: Value] + JSONEncoder + .atomic write",
                    stats: try measureRepeated(scale.fast) { count in
                        for _ in 0..<count {
                            counter += 1
                            try naive.set(.integer(counter), forKey: name)
                        }
                    }))

            var contents: [String: Int] = [:]
            for index in 0..<storeKeys { contents[SampleValue.key(index)] = index }
            let dictionary = LockedDictionary(contents)
            result.figures.append(
                Figure(
                    contender: "reference: lock-guarded [String: Int] assignment",
                    stats: measureRepeated(scale.fast) { count in
                        for _ in 0..<count {
                            counter += 1
                            dictionary[name] = counter
                        }
                    }))
        }
        try result.computeRatios(against: reference)
        try result.goalFaster(
            "≥ 5× faster than UserDefaults.set", fast: reference, slow: "UserDefaults.set(_:forKey:)", factor: 5)
        context.record(result)
    }

    /// Sets new keys into a store that grows: the cost of a set should not depend on the store's size.
    static func setGrowth(_ context: Context) throws {
        let scale = context.scale
        let batch = scale.growthBatch
        let largest = scale.growthSizes.last ?? 0
        var result = CaseResult(
            id: "set-growth", title: "set a new key, store growing from 1 to \(largest) keys",
            detail: "at each size N, a sample times \(batch) sets of new keys (UserDefaults: \(batch / 2)), which "
                + "are then removed untimed. \"grown by sets\": the N keys were set in this session (CodableDefaults "
                + ".manual, UserDefaults never synchronized); \"loaded\": the N keys came from the file",
            ratioReference: "the same contender at 1000 keys")
        var series: [Series] = []
        try context.withDirectory("set-growth") { directory in
            var counter = 0
            let contenders: [(name: String, color: String, sizes: [Int], make: () throws -> any GrowthSubject)] = [
                (
                    "CodableDefaults, grown by sets", "#1f77b4", scale.growthSizes,
                    {
                        counter += 1
                        return try CodableDefaultsSubject(path: directory.file("grown-\(counter).json"), loadedKeys: 0)
                    }
                ),
                (
                    "UserDefaults, grown by sets (never synchronized)", "#d62728", scale.userDefaultsGrownSizes,
                    { try UserDefaultsSubject(name: context.freshSuiteName("grown"), loadedKeys: 0) }
                ),
                (
                    "reference: lock-guarded [String: Int] insert", "#7f7f7f", scale.growthSizes,
                    { ReferenceSubject() }
                ),
            ]
            for contender in contenders {
                let subject = try contender.make()
                var line = Series(name: contender.name, color: contender.color, points: [])
                for size in contender.sizes {
                    progress("set-growth: \(contender.name) at \(size) keys")
                    try subject.grow(to: size)
                    let stats = try measureNewKeys(subject, batch: batch, size: size, scale: scale)
                    result.figures.append(Figure(contender: "\(contender.name) @ \(size) keys", stats: stats))
                    line.points.append((Double(size), stats.median))
                }
                try subject.close()
                series.append(line)
            }
            // The same, into stores loaded from a file of N keys: one fresh store per size.
            var loaded = Series(name: "UserDefaults, loaded from a plist", color: "#ff9896", points: [])
            for size in scale.userDefaultsLoadedSizes {
                progress("set-growth: UserDefaults loaded from a plist of \(size) keys")
                let subject = try UserDefaultsSubject(name: context.freshSuiteName("loaded"), loadedKeys: size)
                let stats = try measureNewKeys(subject, batch: batch, size: size, scale: scale)
                result.figures.append(Figure(contender: "UserDefaults, loaded @ \(size) keys", stats: stats))
                loaded.points.append((Double(size), stats.median))
                try subject.close()
            }
            series.insert(loaded, at: 2)
            for size in [1000, largest] {
                progress("set-growth: CodableDefaults loaded from a file of \(size) keys")
                counter += 1
                let subject = try CodableDefaultsSubject(
                    path: directory.file("loaded-\(counter).json"), loadedKeys: size)
                let stats = try measureNewKeys(subject, batch: batch, size: size, scale: scale)
                result.figures.append(Figure(contender: "CodableDefaults, loaded @ \(size) keys", stats: stats))
                try subject.close()
            }
        }
        for index in result.figures.indices {
            let contender = result.figures[index].contender
            guard let at = contender.range(of: " @ ") else { continue }
            let base = try result.figure(contender[..<at.lowerBound] + " @ 1000 keys").stats.median
            result.figures[index].ratio = result.figures[index].stats.median / base
        }
        for variant in ["grown by sets", "loaded"] {
            try result.goalAtMost(
                "cost per set flat (\(variant)): at \(largest) keys ≤ 2× the cost at 1k keys",
                subject: "CodableDefaults, \(variant) @ \(largest) keys",
                reference: "CodableDefaults, \(variant) @ 1000 keys", factor: 2)
        }
        context.results.setCostSeries = series
        context.record(result)
    }

    /// Times sets of new keys into `subject`, which holds `size` keys; each sample's keys are removed after
    /// it, untimed, so the store stays at `size`.
    private static func measureNewKeys(_ subject: any GrowthSubject, batch: Int, size: Int, scale: Scale) throws
        -> Stats
    {
        let isSlow = subject is UserDefaultsSubject
        let count = isSlow ? max(1, batch / 2) : batch
        var sampling = isSlow ? scale.slow : scale.fast
        if isSlow && size >= 10000 { sampling = sampling.with(samples: sampling.samples / 2 + 1) }
        var sample = 0
        return try measure(sampling, operations: count) {
            sample += 1
            let names = (0..<count).map { "new-\(size)-\(sample)-\($0)" }
            let took = try subject.timedSets(names)
            try subject.remove(names)
            return took
        }
    }
}

/// A store that the growth case fills and sets new keys into.
protocol GrowthSubject: AnyObject {
    /// Sets keys (untimed) until the store holds `size` keys made by sets.
    func grow(to size: Int) throws
    /// Sets each name to a new value and returns the nanoseconds that took.
    func timedSets(_ names: [String]) throws -> UInt64
    /// Removes the names again (untimed).
    func remove(_ names: [String]) throws
    /// Checks the store and releases it.
    func close() throws
}

/// CodableDefaults in `.manual` mode, set through typed keys.
final class CodableDefaultsSubject: GrowthSubject {
    private let defaults: Defaults
    private var count: Int
    private let loadedKeys: Int

    /// A store at `path`, first written with `loadedKeys` keys when that is not zero.
    init(path: String, loadedKeys: Int) throws {
        if loadedKeys > 0 { try Files.write(Fixture.storeFile(keys: loadedKeys), to: path) }
        defaults = try Defaults(url: URL(fileURLWithPath: path), saveMode: .manual)
        count = loadedKeys
        self.loadedKeys = loadedKeys
        guard defaults.keys.count == loadedKeys else { throw BenchmarkError("set-growth: the store did not load") }
    }

    func grow(to size: Int) throws {
        while count < size {
            defaults[Defaults.Key<Int>(SampleValue.key(count), default: -1)] = count
            count += 1
        }
    }

    func timedSets(_ names: [String]) throws -> UInt64 {
        let keys = names.map { Defaults.Key<Int>($0, default: -1) }
        return elapsed {
            for key in keys { defaults[key] = 1 }
        }
    }

    func remove(_ names: [String]) throws {
        for name in names { defaults.removeValue(forKey: name) }
    }

    func close() throws {
        guard defaults.keys.count == count else {
            throw BenchmarkError("set-growth: CodableDefaults holds \(defaults.keys.count) keys, not \(count)")
        }
    }
}

/// A UserDefaults suite, never synchronized.
final class UserDefaultsSubject: GrowthSubject {
    private let suite: UserDefaultsSuite
    private var count: Int

    /// A fresh suite, first written as a property list of `loadedKeys` keys when that is not zero.
    init(name: String, loadedKeys: Int) throws {
        suite = try UserDefaultsSuite(
            name: name, contents: loadedKeys > 0 ? Fixture.propertyList(keys: loadedKeys) : nil)
        count = loadedKeys
    }

    func grow(to size: Int) throws {
        while count < size {
            suite.defaults.set(count, forKey: SampleValue.key(count))
            count += 1
        }
    }

    func timedSets(_ names: [String]) throws -> UInt64 {
        elapsed {
            for name in names { suite.defaults.set(1, forKey: name) }
        }
    }

    func remove(_ names: [String]) throws {
        for name in names { suite.defaults.removeObject(forKey: name) }
    }

    func close() throws {
        guard count == 0 || suite.defaults.object(forKey: SampleValue.key(count - 1)) != nil else {
            throw BenchmarkError("set-growth: the UserDefaults suite lost its keys")
        }
        try suite.remove()
    }
}

/// The physical reference: inserting into a `Dictionary` behind a lock.
final class ReferenceSubject: GrowthSubject {
    private let dictionary = LockedDictionary([String: Int]())
    private var count = 0

    func grow(to size: Int) throws {
        while count < size {
            dictionary[SampleValue.key(count)] = count
            count += 1
        }
    }

    func timedSets(_ names: [String]) throws -> UInt64 {
        elapsed {
            for name in names { dictionary[name] = 1 }
        }
    }

    func remove(_ names: [String]) throws {
        for name in names { dictionary[name] = nil }
    }

    func close() throws {}
}
