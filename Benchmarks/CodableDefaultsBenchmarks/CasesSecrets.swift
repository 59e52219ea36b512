import CodableDefaults
import Foundation

/// Secret values encrypted at rest: what sealing a value at a save and opening it for a read cost.
enum SecretCases {
    /// `save()` after one change in two 1k-key stores opened with the same encryption key: one changes a secret
    /// key (its value sealed at the save), the other a plain key, sample by sample in alternation; and cached reads
    /// of the two keys (recorded as `read-secret`).
    static func secretCost(_ context: Context) throws {
        let keys = 1000
        let sampling = context.scale.slow
        var result = CaseResult(
            id: "secret-1k", title: "save after 1 changed secret key in a \(keys)-key store, encrypted at rest",
            detail: "two stores opened with one encryption key (a key file); one key set (untimed), then save() "
                + "(.manual) timed: a secret key's value (sealed with AES-256-GCM at the save) in one store, a plain "
                + "key's in the other, alternating, \(sampling.samples) samples after \(sampling.warmup) warm-up; "
                + "then cached reads of each key, \(context.scale.fast.samples) samples",
            ratioReference: "save() of a plain value")
        var reads = CaseResult(
            id: "read-secret", title: "read a cached secret value (encrypted at rest) via typed key",
            detail: "the stores of secret-1k after their last save; a String read through a typed key, secret in "
                + "one, plain in the other; \(context.scale.fast.samples) samples after \(context.scale.fast.warmup) "
                + "warm-up",
            ratioReference: "cached read of a plain value")
        try context.withDirectory("secret-1k") { directory in
            let keyFile = directory.file("settings.key")
            guard
                FileManager.default.createFile(
                    atPath: keyFile, contents: Data(String(repeating: "7a", count: 32).utf8),
                    attributes: [.posixPermissions: 0o600])
            else { throw BenchmarkError("secret-1k: cannot write the key file") }
            let options = Defaults.Options(encryptionKey: .file(URL(fileURLWithPath: keyFile)))
            try Files.write(Fixture.storeFile(keys: keys), to: directory.file("secret.json"))
            try Files.write(Fixture.storeFile(keys: keys), to: directory.file("plain.json"))
            let secretStore = try Defaults(url: directory.url("secret.json"), saveMode: .manual, options: options)
            let plainStore = try Defaults(url: directory.url("plain.json"), saveMode: .manual, options: options)
            let secret = Defaults.Key<String>("api-token", default: "", secret: true)
            let plain = Defaults.Key<String>("api-token", default: "")
            var secretTimes: [Double] = []
            var plainTimes: [Double] = []
            progress("secret-1k: saves")
            for round in 0..<(sampling.warmup + sampling.samples) {
                let value = "token-\(round)-" + String(repeating: "x", count: 40)
                secretStore[secret] = value
                let timedSecret = try elapsed { try secretStore.save() }
                plainStore[plain] = value
                let timedPlain = try elapsed { try plainStore.save() }
                if round >= sampling.warmup {
                    secretTimes.append(Double(timedSecret))
                    plainTimes.append(Double(timedPlain))
                }
            }
            let text = String(decoding: try Data(contentsOf: directory.url("secret.json")), as: UTF8.self)
            guard text.contains("\"api-token\": \"cdenc:1:"), try secretStore.value(for: secret).hasPrefix("token-")
            else { throw BenchmarkError("secret-1k: the secret is not stored encrypted") }
            result.figures = [
                Figure(contender: "save() of a secret value", stats: Stats(secretTimes, operationsPerSample: 1)),
                Figure(contender: "save() of a plain value", stats: Stats(plainTimes, operationsPerSample: 1)),
            ]

            // The value is opened once, at the first read after it changed; the reads after it are cached.
            progress("secret-1k: cached reads")
            guard try secretStore.value(for: secret) == plainStore[plain] else {
                throw BenchmarkError("secret-1k: the two stores do not hold the same value")
            }
            for (contender, store, key) in [
                ("cached read of a secret value", secretStore, secret),
                ("cached read of a plain value", plainStore, plain),
            ] {
                reads.figures.append(
                    Figure(
                        contender: contender,
                        stats: measureRepeated(context.scale.fast) { count in
                            var total = 0
                            for _ in 0..<count { total &+= store[key].utf8.count }
                            blackHole(total)
                        }))
            }
        }
        try result.computeRatios(against: "save() of a plain value")
        try result.goalAtMost(
            "≤ 1.1× a save of a plain value", subject: "save() of a secret value", reference: "save() of a plain value",
            factor: 1.1)
        context.record(result)
        try reads.computeRatios(against: "cached read of a plain value")
        try reads.goalAtMost(
            "≤ 1.1× a cached read of a plain value", subject: "cached read of a secret value",
            reference: "cached read of a plain value", factor: 1.1)
        context.record(reads)
    }
}
