import CodableDefaults
import CodableDefaultsEtcd
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store on a local one-member etcd that serves a private authority's certificate and requires client
/// certificates (`--client-cert-auth --trusted-ca-file`, as production clusters run), made with `openssl` for the
/// run (skipped, with a note, without etcd or openssl). Its references are the package's own etcd client speaking
/// the same TLS (``EtcdClient``: libcurl, its connection kept alive between calls, nothing of the store: no value
/// encoded, no history record, no watch), and the same client making a new connection, with its handshake, for each
/// call. Rows: an `.immediate` set against a put; a change to another handle's observer against a put to the
/// client's own watch event; the flush of 100 sets against a transaction of 100 puts; the open of 10k keys against
/// a range of them. Each row's contenders in turns.
enum EtcdTLSCases {
    static func etcdStoreTLS(_ context: Context) throws {
        let binary = ProcessInfo.processInfo.environment["ETCD_BINARY"] ?? "/usr/bin/etcd"
        guard access(binary, X_OK) == 0, let openssl = executable("openssl") else {
            progress("etcd-store-tls: skipped: needs \(binary) and openssl (apt-get install etcd-server openssl)")
            return
        }
        let sampling = context.scale.slow
        let bigPrefixKeys = 10_000
        var result = CaseResult(
            id: "etcd-store-tls", title: "the store on a local etcd that requires client certificates (TLS)",
            detail: "one member serving a private authority's certificate, --client-cert-auth; references: the "
                + "package's etcd client over the same TLS, its connection kept alive (and the same put over a new "
                + "connection each time); .immediate set against a put; a change until another handle's observer "
                + "runs against a put until the client's own watch event; flush of 100 .manual sets against a "
                + "transaction of 100 puts; open of \(bigPrefixKeys) keys against a range of them; in turns; "
                + "\(sampling.samples) samples after \(sampling.warmup) warm-up",
            ratioReference: "client: put, kept-alive TLS")
        try context.withDirectory("etcd-store-tls") { directory in
            let pki = try makeCertificates(openssl, in: directory.path)
            let server = try LocalEtcd(
                binary: binary, directory: directory.path,
                tls: [
                    "--cert-file", pki.server.certificate, "--key-file", pki.server.key, "--client-cert-auth",
                    "--trusted-ca-file", pki.authority,
                ])
            defer { server.stop() }
            let tls = EtcdTLS(
                certificateAuthorities: URL(fileURLWithPath: pki.authority),
                certificate: URL(fileURLWithPath: pki.client.certificate), key: URL(fileURLWithPath: pki.client.key))
            let client = try EtcdClient(endpoints: [server.endpoint], tls: tls)
            try waitUntilServing(client)
            func open(
                _ prefix: String = "bench/", _ mode: Defaults.SaveMode = .immediate,
                options: Defaults.Options = .default
            ) throws -> Defaults {
                do {
                    return try Defaults.openingEtcd(
                        [URL(string: server.endpoint)!], prefix: prefix, saveMode: mode, tls: tls, options: options)
                } catch {
                    throw BenchmarkError("etcd-store-tls: \(error)")
                }
            }
            let a = try open()
            let b = try open()
            let later = try open("bench/", .manual)
            // The same set without its history record, to tell what the record costs.
            let unrecorded = try open("bench/", options: Defaults.Options(history: .off))
            let key = Defaults.Key<Int>("counter", default: 0)
            let other = Defaults.Key<Int>("unrecorded", default: 0)
            let rounds = sampling.warmup + sampling.samples
            func keep(_ round: Int, _ time: UInt64, in times: inout [Double]) {
                if round >= sampling.warmup { times.append(Double(time)) }
            }

            // An .immediate set against the client's put (kept alive, and over a new connection).
            var setTimes: [Double] = []
            var unrecordedSetTimes: [Double] = []
            var putTimes: [Double] = []
            var freshPutTimes: [Double] = []
            for round in 0..<rounds {
                var set: UInt64 = 0
                var unrecordedSet: UInt64 = 0
                var put: UInt64 = 0
                var fresh: UInt64 = 0
                try EtcdCases.inTurn(
                    round,
                    [
                        { set = elapsed { a[key] = round + 1 } },
                        { unrecordedSet = elapsed { unrecorded[other] = round + 1 } },
                        {
                            // Under the prefix the three handles watch: etcd sends it to their watches as it sends
                            // the set.
                            put = try elapsed { _ = try client.put(Array("bench/put".utf8), Array("\(round)".utf8)) }
                        },
                        {
                            let once = try EtcdClient(endpoints: [server.endpoint], tls: tls)
                            fresh = try elapsed { _ = try once.put(Array("bench/put".utf8), Array("\(round)".utf8)) }
                        },
                    ])
                keep(round, set, in: &setTimes)
                keep(round, unrecordedSet, in: &unrecordedSetTimes)
                keep(round, put, in: &putTimes)
                keep(round, fresh, in: &freshPutTimes)
            }

            // A change through one handle until the other's observer runs, against a put until the client's own
            // watch of the same prefix brings its event.
            let seen = DispatchSemaphore(value: 0)
            // When it ran, and the value it was told of: a change made before it was registered may still reach
            // it (the other handle's watch catching up), and must not count as the round's.
            let observerRan = Locked<(time: UInt64, value: Int)>((0, Int.min))
            let token = b.observe(key) { change in
                observerRan.withLock { $0 = (monotonicNanoseconds(), change.newValue) }
                seen.signal()
            }
            defer { token.cancel() }
            let watched = DispatchSemaphore(value: 0)
            let eventArrived = Locked<UInt64>(0)
            let watch = client.watch(prefix: Array("bench/".utf8), startRevision: 0)
            let watcher = Task.detached {
                for try await response in watch
                where response.events.contains(where: { $0.key == Array("bench/plain".utf8) }) {
                    eventArrived.withLock { $0 = monotonicNanoseconds() }
                    watched.signal()
                }
            }
            defer { watcher.cancel() }
            // The watch is made on a task of its own: a put before etcd took it would bring no event. Put until one
            // comes (a second for each).
            var primed = false
            for attempt in 0..<30 where !primed {
                _ = try client.put(Array("bench/plain".utf8), Array("prime-\(attempt)".utf8))
                primed = watched.wait(timeout: .now() + 1) == .success
            }
            guard primed else { throw BenchmarkError("etcd-store-tls: the client's watch never started") }
            var observedTimes: [Double] = []
            var watchedTimes: [Double] = []
            for round in 0..<rounds {
                var observed: UInt64 = 0
                var event: UInt64 = 0
                try EtcdCases.inTurn(
                    round,
                    [
                        {
                            let value = 10_000 + round
                            let start = monotonicNanoseconds()
                            a[key] = value
                            while observerRan.withLock({ $0.value }) != value {
                                guard seen.wait(timeout: .now() + 30) == .success else {
                                    throw BenchmarkError("etcd-store-tls: the observer never ran")
                                }
                            }
                            observed = observerRan.withLock { $0.time } &- start
                        },
                        {
                            let start = monotonicNanoseconds()
                            _ = try client.put(Array("bench/plain".utf8), Array("\(round)".utf8))
                            guard watched.wait(timeout: .now() + 30) == .success else {
                                throw BenchmarkError("etcd-store-tls: the client's watch brought no event")
                            }
                            event = eventArrived.withLock { $0 } &- start
                        },
                    ])
                keep(round, observed, in: &observedTimes)
                keep(round, event, in: &watchedTimes)
            }

            // The flush of 100 sets made under .manual against a transaction of 100 puts.
            let burst = (0..<100).map { Defaults.Key<Int>("burst-\($0)", default: 0) }
            var flushTimes: [Double] = []
            var transactionTimes: [Double] = []
            for round in 0..<rounds {
                for burstKey in burst { later[burstKey] = round + 1 }
                let puts = (0..<burst.count).map {
                    EtcdOperation.put(key: Array("bench/plain-\($0)".utf8), value: Array("\(round + 1)".utf8))
                }
                var flush: UInt64 = 0
                var transaction: UInt64 = 0
                try EtcdCases.inTurn(
                    round,
                    [
                        { flush = try elapsed { try later.save() } },
                        { transaction = try elapsed { _ = try client.transaction(compares: [], operations: puts) } },
                    ])
                keep(round, flush, in: &flushTimes)
                keep(round, transaction, in: &transactionTimes)
            }

            // The open of a prefix of 10k keys against a range of it.
            for start in stride(from: 0, to: bigPrefixKeys, by: 100) {
                let puts = (start..<start + 100).map {
                    EtcdOperation.put(key: Array("big/key-\($0)".utf8), value: Array("\($0)".utf8))
                }
                _ = try client.transaction(compares: [], operations: puts)
            }
            var openTimes: [Double] = []
            var rangeTimes: [Double] = []
            let probe = Defaults.Key<Int>("key-1", default: 0)
            for round in 0..<rounds {
                var opened: UInt64 = 0
                var range: UInt64 = 0
                var value = 0
                try EtcdCases.inTurn(
                    round,
                    [
                        { opened = try elapsed { value = try open("big/")[probe] } },
                        { range = try elapsed { _ = try client.range(prefix: Array("big/".utf8)) } },
                    ])
                guard value == 1 else { throw BenchmarkError("etcd-store-tls: the open of big/ read \(value)") }
                keep(round, opened, in: &openTimes)
                keep(round, range, in: &rangeTimes)
            }
            progress("etcd-store-tls: the client opened \(client.httpsConnections.opened) connections")
            result.figures = [
                Figure(contender: ".immediate set", stats: Stats(setTimes)),
                Figure(contender: ".immediate set, history off", stats: Stats(unrecordedSetTimes)),
                Figure(contender: "client: put, kept-alive TLS", stats: Stats(putTimes)),
                Figure(contender: "client: put, a new TLS connection each", stats: Stats(freshPutTimes)),
                Figure(contender: "change to the other handle's observer", stats: Stats(observedTimes)),
                Figure(contender: "client: put to its watch's event", stats: Stats(watchedTimes)),
                Figure(contender: "flush of 100 sets (one transaction)", stats: Stats(flushTimes)),
                Figure(contender: "client: transaction of 100 puts", stats: Stats(transactionTimes)),
                Figure(contender: "open of a prefix of \(bigPrefixKeys) keys", stats: Stats(openTimes)),
                Figure(contender: "client: range of the prefix", stats: Stats(rangeTimes)),
            ]
        }
        try result.computeRatios(against: "client: put, kept-alive TLS")
        try result.goalAtMost(
            ".immediate set ≤ 1.3× a kept-alive TLS put", subject: ".immediate set",
            reference: "client: put, kept-alive TLS", factor: 1.3)
        try result.goalAtMost(
            "set → other handle's observer ≤ 2× a put → watch event (TLS)",
            subject: "change to the other handle's observer", reference: "client: put to its watch's event",
            factor: 2)
        try result.goalAtMost(
            "flush of 100 sets ≤ 1.5× the transaction (TLS)", subject: "flush of 100 sets (one transaction)",
            reference: "client: transaction of 100 puts", factor: 1.5)
        try result.goalAtMost(
            "open of \(bigPrefixKeys) keys ≤ 1.5× the range (TLS)",
            subject: "open of a prefix of \(bigPrefixKeys) keys",
            reference: "client: range of the prefix", factor: 1.5)
        try result.goalAtMost(
            "a kept-alive TLS put ≤ 0.5× one over a new connection", subject: "client: put, kept-alive TLS",
            reference: "client: put, a new TLS connection each", factor: 0.5)
        context.record(result)
    }

    /// Asks etcd through `client` until it answers (it starts serving a moment after its process starts).
    private static func waitUntilServing(_ client: EtcdClient) throws {
        let deadline = Date().addingTimeInterval(30)
        while true {
            do {
                _ = try client.get(Array("probe".utf8))
                return
            } catch {
                guard Date() < deadline else { throw BenchmarkError("etcd-store-tls: etcd did not answer: \(error)") }
                usleep(50_000)
            }
        }
    }

    /// The path of `name` in `$PATH`, when it is an executable there.
    private static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    /// A private authority, a certificate for 127.0.0.1 and a client certificate (no CommonName) it signed, made
    /// with `openssl` in `directory`.
    private static func makeCertificates(_ openssl: String, in directory: String) throws -> (
        authority: String, server: (certificate: String, key: String), client: (certificate: String, key: String)
    ) {
        let script = """
            set -e
            cd "$1"; openssl=$2
            $openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=bench-ca \
                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            for name in server client; do
                $openssl req -newkey rsa:2048 -nodes -keyout $name.key -out $name.csr -subj /O=$name
            done
            printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' > server.ext
            printf 'extendedKeyUsage=clientAuth\\n' > client.ext
            for name in server client; do
                $openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $name.pem -days 1 \
                    -extfile $name.ext
            done
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "sh", directory, openssl]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("etcd-store-tls: openssl failed") }
        return (
            "\(directory)/ca.pem", ("\(directory)/server.pem", "\(directory)/server.key"),
            ("\(directory)/client.pem", "\(directory)/client.key")
        )
    }
}
