import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// A profile, for a value that is a JSON object.
private struct Profile: Codable, Sendable, Equatable {
    var name: String
    var level: Int
}

private let volume = Defaults.Key<Double>("volume", default: 0.5)
private let counter = Defaults.Key<Int>("counter", default: 0)
private let profile = Defaults.Key<Profile>("profile", default: Profile(name: "none", level: 0))
private let title = Defaults.Key<String?>("title")

/// Opens a `Defaults` on `server` under `prefix`.
private func open(
    _ server: EtcdServer, prefix: String = "myservice/", saveMode: Defaults.SaveMode = .immediate,
    onError: (@Sendable (DefaultsError) -> Void)? = nil
) async throws -> Defaults {
    try await Defaults(
        etcd: server.clientURLs.map { URL(string: $0)! }, prefix: prefix, saveMode: saveMode, onError: onError)
}

/// The engine of `defaults`.
private func engine(_ defaults: Defaults) throws -> EtcdStorage {
    try #require(defaults.engine as? EtcdStorage)
}

/// Runs `body` on a thread of its own (not Swift's cooperative pool, which other tests share) and returns what it
/// returns.
func onThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// Waits on a thread of its own (never the cooperative pool) for `semaphore`, up to 30 s; whether it came.
func signalled(_ semaphore: DispatchSemaphore) async throws -> Bool {
    // Minutes: a guard against a hang, not a time the signal is expected to take (in a full run on two cores, tasks
    // of the cooperative pool may wait long for a thread).
    try await onThread { semaphore.wait(timeout: .now() + 120) == .success }
}

@Suite("Defaults on etcd: the key API against a real etcd", .needsEtcd)
struct EtcdDefaultsTests {
    @Test func everyKeyAPIStoresInEtcdAndASecondHandleReadsIt() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, onError: errors.handler)
            let b = try await open(server, onError: errors.handler)

            a[volume] = 0.8
            try a.set(Profile(name: "A", level: 2), for: profile)
            a.set(42, forKey: "answer")
            a.register(defaults: ["registered": "yes"])
            a.batch {
                $0[title] = "batch"
                $0[counter] = 7
            }
            #expect(a[volume] == 0.8)
            #expect(try a.value(for: profile) == Profile(name: "A", level: 2))
            #expect(a.integer(forKey: "answer") == 42)
            #expect(a.string(forKey: "registered") == "yes")
            #expect(a.keys == ["answer", "counter", "profile", "title", "volume"])

            // In etcd, as compact JSON, one key each.
            #expect(
                try await server.etcdctl(["get", "--print-value-only", "myservice/profile"])
                    == "{\"level\":2,\"name\":\"A\"}\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/title"]) == "\"batch\"\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/registered"]) == "")

            // The other handle (another machine) follows through its watch.
            #expect(try await eventually { b[counter] == 7 && b[volume] == 0.8 && b.integer(forKey: "answer") == 42 })
            #expect(b[profile] == Profile(name: "A", level: 2))
            #expect(b[title] == "batch")

            @Persisted(counter, store: b) var persisted: Int
            persisted += 1
            #expect(try await eventually { a[counter] == 8 })

            a.reset(volume)
            #expect(a[volume] == 0.5)
            #expect(try await eventually { !b.hasStoredValue(for: volume) })
            #expect(try await server.etcdctl(["get", "myservice/volume"]) == "")

            b.removeAll()
            #expect(b.keys == [])
            #expect(try await eventually { a.keys == [] })
            // Only the history's record key is left (it records the removal): no member.
            let left = try await EtcdClient(endpoints: server.clientURLs).range(prefix: utf8("myservice/"))
            #expect(try left.keyValues.map(\.key) == [engine(b).historyKey])
            #expect(errors.errors.isEmpty, "\(errors.errors)")
        }
    }

    @Test func observersAndUpdatesOnOneHandleSeeTheOtherHandlesAndEtcdctlsChanges() async throws {
        try await EtcdServer.with { server in
            let a = try await open(server)
            let b = try await open(server)
            let seen = Locked<[Double]>([])
            let token = b.observe(volume) { change in seen.withLock { $0.append(change.newValue) } }
            var updates = b.updates(for: counter).makeAsyncIterator()
            #expect(await updates.next() == 0)  // the initial value

            a[volume] = 0.9
            #expect(try await eventually { seen.withLock { $0 } == [0.9] })
            try await server.etcdctl(["put", "myservice/volume", "0.25"])
            #expect(try await eventually { seen.withLock { $0 } == [0.9, 0.25] })
            #expect(try await eventually { a[volume] == 0.25 })

            a[counter] = 3
            #expect(await updates.next() == 3)
            token.cancel()
        }
    }

    @Test func modifyFromTwoHandlesFiveHundredTimesEachCountsToExactlyOneThousand() async throws {
        try await EtcdServer.with { server in
            let a = try await open(server)
            let b = try await open(server)
            async let first: Void = onThread { for _ in 0..<500 { try a.modify(counter) { $0 += 1 } } }
            async let second: Void = onThread { for _ in 0..<500 { try b.modify(counter) { $0 += 1 } } }
            _ = try await (first, second)
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/counter"]) == "1000\n")
            #expect(try await eventually { a[counter] == 1000 && b[counter] == 1000 })
        }
    }

    @Test func immediateSetsFromMoreTasksThanThePoolHasThreadsAllReturn() async throws {
        try await EtcdServer.with { server in
            let defaults = try await open(server)
            // Each set waits for etcd on its task's thread, a thread of the cooperative pool: with more tasks than
            // the pool has threads, every pool thread waits at once; the etcd calls must not need one.
            let tasks = 4 * max(2, ProcessInfo.processInfo.activeProcessorCount)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<tasks {
                    group.addTask { try defaults.set(index, for: Defaults.Key<Int>("task\(index)", default: -1)) }
                }
                try await group.waitForAll()
            }
            let keys = try await server.etcdctl(["get", "--prefix", "--keys-only", "myservice/task"])
            #expect(keys.split(separator: "\n").count == tasks)
        }
    }

    @Test func aClusterWithAuthenticationTakesTheUserAndRefusesAWrongPassword() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["user", "add", "root:pass"])
            try await server.etcdctl(["auth", "enable"])
            let urls = server.clientURLs.map { URL(string: $0)! }
            let defaults = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .immediate, username: "root", password: "pass")
            defaults[volume] = 0.6
            let stored = try await server.etcdctl(
                ["--user", "root:pass", "get", "--print-value-only", "myservice/volume"])
            #expect(stored == "0.6\n")

            let refused = await #expect(throws: DefaultsError.self) {
                try await Defaults(etcd: urls, prefix: "myservice/", username: "root", password: "wrong")
            }
            #expect(refused?.code == .readFailed)
            #expect(
                refused?.message.contains("refused the user name or password") == true, "\(String(describing: refused))"
            )
        }
    }

    @Test func aBurstOfAThousandSetsUnderAfterIdleIsOneTransaction() async throws {
        try await EtcdServer.with { server in
            let defaults = try await open(server, saveMode: .afterIdle(.milliseconds(300)))
            let storage = try engine(defaults)
            for index in 0..<1000 { defaults.set(index, forKey: "key\(index % 100)") }
            #expect(try await eventually { storage.transactionCount == 1 })
            try await defaults.save()  // nothing is left unsaved: no other transaction
            #expect(storage.transactionCount == 1)
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/key99"]) == "999\n")
            // The 100 members, and the history's record key.
            #expect(
                try await server.etcdctl(["get", "--prefix", "--keys-only", "myservice/"]).split(separator: "\n").count
                    == 101)
        }
    }

    @Test func aSetAfterAModifyOfAnUnsavedKeyIsSavedOnceInItsTransaction() async throws {
        try await EtcdServer.with { server in
            let defaults = try await open(server, saveMode: .manual)
            defaults[counter] = 1
            try await defaults.modify(counter) { $0 = 2 }
            defaults[counter] = 3
            try await defaults.save()  // etcd refuses a transaction that puts one key twice
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/counter"]) == "3\n")
            defaults[volume] = 0.9
            try await defaults.save()
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.9\n")
        }
    }

    @Test func aSaveOfMoreMembersThanATransactionTakesIsSplit() async throws {
        try await EtcdServer.with { server in
            let defaults = try await open(server, saveMode: .manual)
            let storage = try engine(defaults)
            for index in 0..<300 { defaults.set(index, forKey: "key\(index)") }
            try await defaults.save()
            #expect(storage.transactionCount == 3)
            // The 300 members, and the history's record key.
            #expect(
                try await server.etcdctl(["get", "--prefix", "--keys-only", "myservice/"]).split(separator: "\n").count
                    == 301)
        }
    }

    @Test func aSaveLargerThanEtcdsRequestLimitIsSplitByBytes() async throws {
        try await EtcdServer.with { server in
            let defaults = try await open(server, saveMode: .manual)
            let storage = try engine(defaults)
            // 40 values of 64 kB: 2.6 MB in all, over etcd's 1.5 MiB request limit; each value is far below it.
            let text = String(repeating: "x", count: 64 << 10)
            for index in 0..<40 { defaults.set("\(index)\(text)", forKey: "big\(index)") }
            try await defaults.save()
            #expect(storage.transactionCount == 3)
            let values = try await EtcdClient(endpoints: [server.clientURL]).range(prefix: Array("myservice/".utf8))
                .keyValues.filter { $0.key != storage.historyKey }
            #expect(values.count == 40)
            // Each value is the JSON string of the index and the text: quotes, one or two digits, 64 kB.
            #expect(values.allSatisfy { [3, 4].contains($0.value.count - (64 << 10)) })
        }
    }

    @Test func aValueThatIsNotJSONIsReportedForItsKeyAndKeptUntilSet() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["put", "myservice/volume", "not json"])
            let errors = ErrorLog()
            let defaults = try await open(server, onError: errors.handler)
            let storage = try engine(defaults)

            #expect(defaults[volume] == 0.5)
            let error = try #require(errors.errors.first)
            #expect(error.code == .decodingFailed)
            #expect(error.key == "volume")
            #expect(error.message.contains("myservice/volume"), "\(error)")
            #expect(throws: DefaultsError.self) { try defaults.value(for: volume) }
            #expect(!defaults.hasStoredValue(for: volume))

            // Another key's save leaves it as it is.
            defaults[counter] = 1
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "not json\n")

            // One written later, seen by the watch, is reported too.
            try await server.etcdctl(["put", "myservice/title", "{oops"])
            #expect(try await eventually { storage.unreadableValue(named: "title", secret: false) != nil })
            let late = #expect(throws: DefaultsError.self) { try defaults.value(for: title) }
            #expect(late?.code == .decodingFailed)
            #expect(late?.key == "title")

            // Neither is a stored value: a reset and removeAll leave them.
            defaults.reset(title)
            defaults.removeAll()
            #expect(defaults.keys == [])
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/title"]) == "{oops\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "not json\n")

            // Setting it writes over it; then it reads.
            defaults[volume] = 0.7
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.7\n")
            #expect(try defaults.value(for: volume) == 0.7)
        }
    }

    @Test func aKeyReadWhileAbsentThatAnotherToolSetsToTextThatIsNotJSONIsReportedThenForgottenWhenDeleted()
        async throws
    {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let defaults = try await open(server, onError: errors.handler)
            let marker = Defaults.Key<Int>("marker", default: 0)
            var markers = defaults.updates(for: marker, options: []).makeAsyncIterator()

            // Read while absent: the default, cached, no error.
            #expect(defaults[counter] == 0)
            #expect(try defaults.value(for: counter) == 0)
            #expect(errors.errors.isEmpty)

            // Another tool stores text that is not JSON, then a marker: once the marker is observed, the store has
            // taken in both (the watch delivers them in order).
            try await server.etcdctl(["put", "myservice/counter", "seven"])
            try await server.etcdctl(["put", "myservice/marker", "1"])
            #expect(await markers.next() == 1)
            #expect(defaults[counter] == 0)
            let reported = try #require(errors.errors.first)
            #expect(reported.code == .decodingFailed)
            #expect(reported.key == "counter")
            let thrown = #expect(throws: DefaultsError.self) { try defaults.value(for: counter) }
            #expect(thrown?.key == "counter")
            #expect(thrown?.message.contains("myservice/counter") == true, "\(String(describing: thrown))")

            // Deleted by that tool: the default again, without an error.
            try await server.etcdctl(["del", "myservice/counter"])
            try await server.etcdctl(["put", "myservice/marker", "2"])
            #expect(await markers.next() == 2)
            #expect(try defaults.value(for: counter) == 0)
            #expect(errors.errors.count == 1)
        }
    }

    @Test func keysWhoseNamesAreNotUTF8AreLeftOutAndNeverWritten() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: [server.clientURL])
            try await client.put(utf8("myservice/") + [0xFF], utf8("1"))
            try await client.put(utf8("myservice/") + [0xFE], utf8("2"))
            try await client.put(utf8("myservice/ok"), utf8("3"))
            let defaults = try await Defaults(etcd: [URL(string: server.clientURL)!], prefix: "myservice/")
            #expect(defaults.keys == ["ok"])
            #expect(defaults.object(forKey: "\u{FFFD}") == nil, "no name stands for both")
            defaults.removeAll()
            try await defaults.save()
            let left = try await client.range(prefix: utf8("myservice/")).keyValues.map(\.key)
            // The history's record key (not UTF-8 either) records the removal.
            #expect(
                left == [utf8("myservice/") + [0xFE], utf8("myservice/") + [0xFF], try engine(defaults).historyKey])
        }
    }
}
