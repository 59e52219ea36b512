import CodableDefaults
import CodableDefaultsEtcd
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store kept in etcd, against a local one-member etcd the case starts (skipped, with a note, when there is no
/// `/usr/bin/etcd` or `$ETCD_BINARY`): a cached read, an `.immediate` set against `etcdctl put`, how long a
/// change made through one handle takes to reach an observer of another, the flush of 100 sets and the open of a
/// prefix of 10k keys; each of the last three against what a plain client gets from etcd in the same run
/// (``RawEtcd``: the same transaction, a put seen by a watch, a range of the prefix), in turns (each first in
/// its turn of the rounds).
enum EtcdCases {
    static func etcdStore(_ context: Context) throws {
        let binary = ProcessInfo.processInfo.environment["ETCD_BINARY"] ?? "/usr/bin/etcd"
        let etcdctl = URL(fileURLWithPath: binary).deletingLastPathComponent().appendingPathComponent("etcdctl").path
        guard access(binary, X_OK) == 0, access(etcdctl, X_OK) == 0 else {
            progress("etcd-store: skipped: no \(binary) and \(etcdctl) (apt-get install etcd-server etcd-client)")
            return
        }
        let sampling = context.scale.slow
        let bigPrefixKeys = 10_000
        var result = CaseResult(
            id: "etcd-store", title: "the store on a local one-member etcd",
            detail: "cached read; a set under .manual (in memory, saved later); flush of 100 such sets (one "
                + "transaction) against a plain client's transaction of 100 such puts under the prefix the three "
                + "handles watch (and under one nobody watches); .immediate set (one "
                + "transaction, acknowledged) against `etcdctl put` (a process each); a change through one handle "
                + "until another handle's observer runs against a plain client's put until its watch's event "
                + "arrives (under the handles' prefix, under one only it watches, and over a new connection each "
                + "time); the open of a prefix of \(bigPrefixKeys) keys against a plain client's range of it; a "
                + "plain client POSTs JSON made beforehand (HTTP/1.0) on one connection kept alive, as the store "
                + "does (its range over a new socket, as etcd closes after an answer that large); the contenders "
                + "of a row "
                + "in turns (each first in its turn of the rounds); \(sampling.samples) samples after "
                + "\(sampling.warmup) warm-up",
            ratioReference: "etcdctl put")
        try context.withDirectory("etcd-store") { directory in
            let server = try LocalEtcd(binary: binary, directory: directory.path)
            defer { server.stop() }
            let a = try open(server.endpoint)
            let b = try open(server.endpoint)
            let later = try open(server.endpoint, saveMode: .manual)
            let key = Defaults.Key<Int>("counter", default: 0)

            a[key] = 1
            let reads = context.scale.fast
            var readTimes: [Double] = []
            let perSample = 100_000
            for round in 0..<(reads.warmup + reads.samples) {
                var sum = 0
                let time = elapsed { for _ in 0..<perSample { sum &+= a[key] } }
                if sum == 0 { throw BenchmarkError("etcd-store: the cached reads read nothing") }
                if round >= reads.warmup { readTimes.append(Double(time) / Double(perSample)) }
            }

            // Sets that etcd sees later: their cost in memory, and the flush that saves a burst of 100 of them.
            let burst = (0..<100).map { Defaults.Key<Int>("burst-\($0)", default: 0) }
            // The plain client's transaction: 100 puts of the same sizes under the same prefix, which the three
            // handles watch (etcd sends its changes to them as it sends the flush's), its JSON made beforehand. Its
            // keys are others than the store's, which it would otherwise change under it.
            let rawTransactions = (0..<(sampling.warmup + sampling.samples)).map { round in
                RawEtcd.transaction((0..<burst.count).map { ("bench/plain-\($0)", "\(round + 1)") })
            }
            let unwatchedTransactions = (0..<(sampling.warmup + sampling.samples)).map { round in
                RawEtcd.transaction((0..<burst.count).map { ("other/plain-\($0)", "\(round + 1)") })
            }
            // The plain client's calls, on one connection kept alive, as the store's are.
            let plain = RawEtcd.Connection(port: server.port)
            var laterSetTimes: [Double] = []
            var flushTimes: [Double] = []
            var rawTransactionTimes: [Double] = []
            var unwatchedTransactionTimes: [Double] = []
            for round in 0..<(sampling.warmup + sampling.samples) {
                let start = monotonicNanoseconds()
                for burstKey in burst { later[burstKey] = round + 1 }
                let set = monotonicNanoseconds() &- start
                var flush: UInt64 = 0
                var raw: UInt64 = 0
                var unwatched: UInt64 = 0
                try inTurn(
                    round,
                    [
                        {
                            flush = try elapsed {
                                do { try later.save() } catch { throw BenchmarkError("etcd-store: flush: \(error)") }
                            }
                        },
                        {
                            raw = try elapsed {
                                try plain.post(path: "/v3/kv/txn", body: rawTransactions[round])
                            }
                        },
                        {
                            // The same transaction under a prefix nobody watches: etcd sends no event of it.
                            unwatched = try elapsed {
                                try plain.post(path: "/v3/kv/txn", body: unwatchedTransactions[round])
                            }
                        },
                    ])
                if round >= sampling.warmup {
                    laterSetTimes.append(Double(set) / Double(burst.count))
                    flushTimes.append(Double(flush))
                    rawTransactionTimes.append(Double(raw))
                    unwatchedTransactionTimes.append(Double(unwatched))
                }
            }

            // When b's observer ran (the set's caller may still be waiting for etcd's answer then).
            let seen = DispatchSemaphore(value: 0)
            // When it ran, and the value it was told of: a change made before it was registered may still reach
            // it (the other handle's watch catching up), and must not count as the round's.
            let observerRan = Locked<(time: UInt64, value: Int)>((0, Int.min))
            let token = b.observe(key) { change in
                observerRan.withLock { $0 = (monotonicNanoseconds(), change.newValue) }
                seen.signal()
            }
            defer { token.cancel() }
            // The plain client's watches: one of the prefix the handles watch (so that etcd sends each change to
            // as many watches as it sends the set's to), one of a prefix only it watches; its puts' JSON made
            // beforehand.
            let rawWatch = try RawEtcd.Watch(port: server.port, prefix: "bench/", key: "bench/plain-watched")
            defer { rawWatch.stop() }
            let loneWatch = try RawEtcd.Watch(port: server.port, prefix: "other/", key: "other/watched")
            defer { loneWatch.stop() }
            let rawPuts = (0..<(sampling.warmup + sampling.samples)).map {
                RawEtcd.put("bench/plain-watched", "\($0)")
            }
            let lonePuts = (0..<(sampling.warmup + sampling.samples)).map { RawEtcd.put("other/watched", "\($0)") }
            var setTimes: [Double] = []
            var observedTimes: [Double] = []
            var rawObservedTimes: [Double] = []
            var loneObservedTimes: [Double] = []
            var freshObservedTimes: [Double] = []
            for round in 0..<(sampling.warmup + sampling.samples) {
                var set: UInt64 = 0
                var observed: UInt64 = 0
                var rawObserved: UInt64 = 0
                var loneObserved: UInt64 = 0
                var freshObserved: UInt64 = 0
                try inTurn(
                    round,
                    [
                        {
                            let value = round + 2
                            let start = monotonicNanoseconds()
                            a[key] = value
                            set = monotonicNanoseconds() &- start
                            while observerRan.withLock({ $0.value }) != value {
                                guard seen.wait(timeout: .now() + 30) == .success else {
                                    throw BenchmarkError(
                                        "etcd-store: the other handle's observer did not run within 30 s")
                                }
                            }
                            observed = observerRan.withLock { $0.time } &- start
                        },
                        {
                            let start = monotonicNanoseconds()
                            try plain.post(path: "/v3/kv/put", body: rawPuts[round])
                            rawObserved = try rawWatch.waitForEvent(timeout: 30) &- start
                        },
                        {
                            let start = monotonicNanoseconds()
                            try plain.post(path: "/v3/kv/put", body: lonePuts[round])
                            loneObserved = try loneWatch.waitForEvent(timeout: 30) &- start
                        },
                        {
                            // The same put over a new connection each time.
                            let start = monotonicNanoseconds()
                            try RawEtcd.post(port: server.port, path: "/v3/kv/put", body: rawPuts[round])
                            freshObserved = try rawWatch.waitForEvent(timeout: 30) &- start
                        },
                    ])
                if round >= sampling.warmup {
                    setTimes.append(Double(set))
                    observedTimes.append(Double(observed))
                    rawObservedTimes.append(Double(rawObserved))
                    loneObservedTimes.append(Double(loneObserved))
                    freshObservedTimes.append(Double(freshObserved))
                }
            }
            // etcdctl on its own: a process that starts and ends slows the call made just after it.
            var putTimes: [Double] = []
            for round in 0..<(sampling.warmup + sampling.samples) {
                let put = try elapsed { try server.etcdctl(etcdctl, ["put", "bench/other", "\(round)"]) }
                if round >= sampling.warmup { putTimes.append(Double(put)) }
            }

            // A prefix of 10k keys (the values of the file store's benchmarks), put by the plain client 100 at a
            // time; then its open by the store (the range, every value checked, the store made, its watch started)
            // against the plain client's range of it, alternating.
            for start in stride(from: 0, to: bigPrefixKeys, by: 100) {
                let puts = (start..<min(start + 100, bigPrefixKeys)).map {
                    ("big/\(SampleValue.key($0))", SampleValue.make($0).json)
                }
                try RawEtcd.post(port: server.port, path: "/v3/kv/txn", body: RawEtcd.transaction(puts))
            }
            let rawRange = RawEtcd.range(prefix: "big/")
            let probe = Defaults.Key<Int>(SampleValue.key(0), default: -1)
            var openTimes: [Double] = []
            var rawRangeTimes: [Double] = []
            var rangeBytes = 0
            for round in 0..<(sampling.warmup + sampling.samples) {
                var value = -1
                var opened: UInt64 = 0
                var raw: UInt64 = 0
                try inTurn(
                    round,
                    [
                        {
                            // The store is closed after the clock stops (its 10k members freed).
                            var kept: Defaults?
                            opened = try elapsed {
                                let big = try open(server.endpoint, prefix: "big/")
                                value = big[probe]
                                kept = big
                            }
                            withExtendedLifetime(kept) {}
                            kept = nil
                        },
                        {
                            raw = try elapsed {
                                rangeBytes = try RawEtcd.post(port: server.port, path: "/v3/kv/range", body: rawRange)
                                    .count
                            }
                        },
                    ])
                guard value == 0 else { throw BenchmarkError("etcd-store: the open of big/ read \(value) for key 0") }
                if round >= sampling.warmup {
                    openTimes.append(Double(opened))
                    rawRangeTimes.append(Double(raw))
                }
            }
            progress("etcd-store: the range of big/ is \(rangeBytes) bytes")
            result.figures = [
                Figure(contender: "cached read (subscript)", stats: Stats(readTimes)),
                Figure(contender: "set, .manual (in memory)", stats: Stats(laterSetTimes)),
                Figure(contender: "flush of 100 sets (one transaction)", stats: Stats(flushTimes)),
                Figure(contender: "plain client: transaction of 100 puts", stats: Stats(rawTransactionTimes)),
                Figure(
                    contender: "plain client: the same, a prefix nobody watches",
                    stats: Stats(unwatchedTransactionTimes)),
                Figure(contender: ".immediate set", stats: Stats(setTimes)),
                Figure(contender: "change to the other handle's observer", stats: Stats(observedTimes)),
                Figure(contender: "plain client: put to its watch's event", stats: Stats(rawObservedTimes)),
                Figure(
                    contender: "plain client: the same, a prefix only it watches", stats: Stats(loneObservedTimes)),
                Figure(
                    contender: "plain client: the same, a new connection each", stats: Stats(freshObservedTimes)),
                Figure(contender: "etcdctl put", stats: Stats(putTimes)),
                Figure(contender: "open of a prefix of \(bigPrefixKeys) keys", stats: Stats(openTimes)),
                Figure(contender: "plain client: range of the prefix", stats: Stats(rawRangeTimes)),
            ]
        }
        try result.computeRatios(against: "etcdctl put")
        try result.goalAtMost(
            ".immediate set ≤ etcdctl put", subject: ".immediate set", reference: "etcdctl put", factor: 1)
        try result.goalAtMost(
            "flush of 100 sets ≤ 1.5× the plain transaction", subject: "flush of 100 sets (one transaction)",
            reference: "plain client: transaction of 100 puts", factor: 1.5)
        try result.goalAtMost(
            "set → other handle's observer ≤ 2× a plain put → watch event",
            subject: "change to the other handle's observer", reference: "plain client: put to its watch's event",
            factor: 2)
        try result.goalAtMost(
            "open of \(bigPrefixKeys) keys ≤ 1.5× the plain range",
            subject: "open of a prefix of \(bigPrefixKeys) keys",
            reference: "plain client: range of the prefix", factor: 1.5)
        context.record(result)
    }

    /// Runs each of `contenders` once, the first one in round 0, the second one first in round 1, and so on
    /// round and round: none always comes first (the first call of a round runs right after the previous round's
    /// last, which may leave etcd busy) nor always last.
    static func inTurn(_ round: Int, _ contenders: [() throws -> Void]) throws {
        for index in 0..<contenders.count { try contenders[(round + index) % contenders.count]() }
    }

    /// Opens the store under `prefix` at `endpoint`, `.immediate` unless `saveMode` says otherwise.
    private static func open(
        _ endpoint: String, prefix: String = "bench/", saveMode: Defaults.SaveMode = .immediate
    ) throws -> Defaults {
        do {
            return try Defaults.openingEtcd([URL(string: endpoint)!], prefix: prefix, saveMode: saveMode)
        } catch {
            throw BenchmarkError("etcd-store: \(error)")
        }
    }
}

/// A one-member etcd on free loopback ports, its data and log in `directory`; with `tls` (its certificate and key,
/// and the arguments that go with them), serving clients over HTTPS.
final class LocalEtcd {
    let endpoint: String
    /// The client port, on 127.0.0.1.
    let port: Int
    private let process = Process()

    init(binary: String, directory: String, tls: [String]? = nil) throws {
        let client = try freePort()
        var peer = try freePort()
        while peer == client { peer = try freePort() }
        endpoint = "\(tls == nil ? "http" : "https")://127.0.0.1:\(client)"
        port = client
        let peerURL = "http://127.0.0.1:\(peer)"
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            [
                "--name", "bench", "--data-dir", "\(directory)/etcd.data", "--listen-client-urls", endpoint,
                "--advertise-client-urls", endpoint, "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls",
                peerURL, "--initial-cluster", "bench=\(peerURL)", "--logger", "zap", "--log-outputs", "stderr",
            ] + (tls ?? [])
        guard FileManager.default.createFile(atPath: "\(directory)/etcd.log", contents: nil),
            let log = FileHandle(forWritingAtPath: "\(directory)/etcd.log")
        else { throw BenchmarkError("etcd-store: cannot make \(directory)/etcd.log") }
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // Over TLS, the case asks it with its client until it answers.
        if tls != nil { return }
        // Healthy: /health says so (polled, bounded).
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if !process.isRunning { throw BenchmarkError("etcd-store: etcd exited; see \(directory)/etcd.log") }
            do {
                let data = try Data(contentsOf: URL(string: endpoint + "/health")!)
                if String(decoding: data, as: UTF8.self).contains("\"health\":\"true\"") { return }
            } catch {
                // Not listening yet: asked again below, until the deadline.
            }
            usleep(50_000)
        }
        stop()
        throw BenchmarkError("etcd-store: etcd was not healthy within 30 s")
    }

    /// Runs etcdctl with `arguments` against this etcd, to its end.
    func etcdctl(_ path: String, _ arguments: [String]) throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: path)
        child.arguments = ["--endpoints", endpoint] + arguments
        child.environment = ["ETCDCTL_API": "3"]
        child.standardOutput = FileHandle.nullDevice
        try child.run()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else { throw BenchmarkError("etcdctl \(arguments) failed") }
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// A TCP port of 127.0.0.1 that is free right now.
private func freePort() throws -> Int {
    #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw BenchmarkError("socket failed") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 ? getsockname(descriptor, $0, &length) : -1
        }
    }
    guard named == 0 else { throw BenchmarkError("bind failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}
