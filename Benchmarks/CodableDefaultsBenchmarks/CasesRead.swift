import CodableDefaults
import Foundation

/// A small struct, as settings often hold.
struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

/// Reads of a value already in memory: the hottest path of a settings store.
enum ReadCases {
    /// Keys in the store the reads look into.
    static let storeKeys = 100

    /// A cached `Int` read through a typed key.
    static func readInt(_ context: Context) throws {
        let scale = context.scale
        let name = SampleValue.key(40)
        let expected = 280
        var result = CaseResult(
            id: "read-int", title: "read a cached Int via typed key",
            detail: "stores of \(storeKeys) keys; file-backed CodableDefaults (.manual), value read once before "
                + "timing; \(scale.fast.samples) samples after \(scale.fast.warmup) warm-up",
            ratioReference: "CodableDefaults defaults[key]")
        try context.withDirectory("read-int") { directory in
            try Files.write(Fixture.storeFile(keys: storeKeys), to: directory.file("store.json"))
            let defaults = try Defaults(url: directory.url("store.json"), saveMode: .manual)
            let key = Defaults.Key<Int>(name, default: -1)
            guard try defaults.value(for: key) == expected else {
                throw BenchmarkError("read-int: the store does not hold \(expected) at \(name)")
            }
            progress("read-int: CodableDefaults")
            result.figures.append(
                Figure(
                    contender: "CodableDefaults defaults[key]",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= defaults[key] }
                        blackHole(sum)
                    }))
            guard defaults.integer(forKey: name) == expected else {
                throw BenchmarkError("read-int: integer(forKey:) does not read \(expected) at \(name)")
            }
            result.figures.append(
                Figure(
                    contender: "CodableDefaults integer(forKey:) (string-key API)",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= defaults.integer(forKey: name) }
                        blackHole(sum)
                    }))

            progress("read-int: UserDefaults")
            let suite = try UserDefaultsSuite(
                name: context.freshSuiteName("read-int"), contents: Fixture.propertyList(keys: storeKeys))
            let userDefaults = suite.defaults
            guard userDefaults.integer(forKey: name) == expected else {
                throw BenchmarkError("read-int: UserDefaults does not hold \(expected) at \(name)")
            }
            result.figures.append(
                Figure(
                    contender: "UserDefaults.integer(forKey:)",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= userDefaults.integer(forKey: name) }
                        blackHole(sum)
                    }))
            try suite.remove()

            progress("read-int: lock-guarded Dictionary")
            var contents: [String: Int] = [:]
            for index in 0..<storeKeys { contents[SampleValue.key(index)] = index * 7 }
            let dictionary = LockedDictionary(contents)
            result.figures.append(
                Figure(
                    contender: "reference: lock-guarded [String: Int] lookup",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= dictionary[name] ?? 0 }
                        blackHole(sum)
                    }))
        }
        try result.computeRatios(against: "CodableDefaults defaults[key]")
        try result.goalFaster(
            "≥ 20× faster than UserDefaults.integer(forKey:)", fast: "CodableDefaults defaults[key]",
            slow: "UserDefaults.integer(forKey:)", factor: 20)
        try result.goalAtMost(
            "≤ 3× a lock-guarded Dictionary lookup", subject: "CodableDefaults defaults[key]",
            reference: "reference: lock-guarded [String: Int] lookup", factor: 3)
        context.record(result)
    }

    /// A cached small struct read through a typed key.
    static func readStruct(_ context: Context) throws {
        let scale = context.scale
        let expected = Profile(name: "Mister Default", age: 29)
        var result = CaseResult(
            id: "read-struct", title: "read a cached small struct via typed key",
            detail: "struct Profile { name: String; age: Int } in stores of \(storeKeys + 1) keys; UserDefaults "
                + "holds it as a dictionary; \(scale.fast.samples) samples after \(scale.fast.warmup) warm-up",
            ratioReference: "CodableDefaults defaults[key]")
        try context.withDirectory("read-struct") { directory in
            var file = Fixture.storeFile(keys: storeKeys)
            file.removeLast(3)  // "\n}\n": "profile" sorts after every "key…" name.
            file += Array(",\n  \"profile\": {\"age\":29,\"name\":\"Mister Default\"}\n}\n".utf8)
            try Files.write(file, to: directory.file("store.json"))
            let defaults = try Defaults(url: directory.url("store.json"), saveMode: .manual)
            let key = Defaults.Key<Profile>("profile", default: Profile(name: "", age: 0))
            guard try defaults.value(for: key) == expected else {
                throw BenchmarkError("read-struct: the store does not hold the expected profile")
            }
            progress("read-struct: CodableDefaults")
            result.figures.append(
                Figure(
                    contender: "CodableDefaults defaults[key]",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= defaults[key].age }
                        blackHole(sum)
                    }))

            progress("read-struct: UserDefaults")
            var contents = Fixture.propertyList(keys: storeKeys)
            contents["profile"] = ["name": expected.name, "age": expected.age] as [String: Any]
            let suite = try UserDefaultsSuite(name: context.freshSuiteName("read-struct"), contents: contents)
            let userDefaults = suite.defaults
            func profile() -> Profile? {
                guard let dictionary = userDefaults.dictionary(forKey: "profile"),
                    let name = dictionary["name"] as? String, let age = dictionary["age"] as? Int
                else { return nil }
                return Profile(name: name, age: age)
            }
            guard profile() == expected else { throw BenchmarkError("read-struct: UserDefaults lost the profile") }
            result.figures.append(
                Figure(
                    contender: "UserDefaults.dictionary(forKey:) → Profile",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= profile()?.age ?? 0 }
                        blackHole(sum)
                    }))
            let intName = SampleValue.key(40)
            result.figures.append(
                Figure(
                    contender: "UserDefaults.integer(forKey:) (the goal's yardstick)",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= userDefaults.integer(forKey: intName) }
                        blackHole(sum)
                    }))
            try suite.remove()

            progress("read-struct: lock-guarded Dictionary")
            let dictionary = LockedDictionary(["profile": expected, "other": expected])
            result.figures.append(
                Figure(
                    contender: "reference: lock-guarded [String: Profile] lookup",
                    stats: measureRepeated(scale.fast) { count in
                        var sum = 0
                        for _ in 0..<count { sum &+= dictionary["profile"]?.age ?? 0 }
                        blackHole(sum)
                    }))
        }
        try result.computeRatios(against: "CodableDefaults defaults[key]")
        try result.goalFaster(
            "≥ 20× faster than UserDefaults.integer(forKey:)", fast: "CodableDefaults defaults[key]",
            slow: "UserDefaults.integer(forKey:) (the goal's yardstick)", factor: 20)
        try result.goalAtMost(
            "≤ 3× a lock-guarded Dictionary lookup", subject: "CodableDefaults defaults[key]",
            reference: "reference: lock-guarded [String: Profile] lookup", factor: 3)
        context.record(result)
    }
}
