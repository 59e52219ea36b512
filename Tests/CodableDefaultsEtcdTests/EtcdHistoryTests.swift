import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let volume = Defaults.Key<Double>("volume", default: 0.5)
private let name = Defaults.Key<String?>("name")
private let token = Defaults.Key<String?>("token", secret: true)

/// Opens a `Defaults` on every member of `server` under `myservice/`, its errors to `errors`.
private func open(
    _ server: EtcdServer, _ errors: ErrorLog, saveMode: Defaults.SaveMode = .immediate
) async throws -> Defaults {
    try await Defaults(
        etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "myservice/", saveMode: saveMode,
        onError: errors.handler)
}

/// The storage of a store opened on etcd.
private func engine(_ defaults: Defaults) throws -> EtcdStorage {
    try #require(defaults.engine as? EtcdStorage)
}

@Suite("Defaults on etcd: the history of saves, kept by etcd", .needsEtcd)
struct EtcdHistoryTests {
    @Test func savesOfTwoHandlesAndAnotherProcessAreRecordedInOrderWithValuesAndAuthors() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            let b = try await open(server, errors, saveMode: .manual)
            let before = Date()
            a.batch {
                $0[volume] = 0.8
                $0[name] = "Ana"
            }
            #expect(try await eventually { b[volume] == 0.8 })
            b[volume] = 0.9
            b[name] = nil
            try await b.save()
            // Another process (another machine) records its saves in the same history.
            let endpoints = server.clientURLs
            let pid = try await onThread { () throws -> Int32 in
                let path = try Fixture.locate("codable-defaults-etcd-fixture")
                let child = try ChildProcess(path, [endpoints.joined(separator: ","), "myservice/"])
                let ready = try #require(try child.readLineBlocking(timeout: 30))
                try #require(ready.hasPrefix("ready "), "\(ready)")
                #expect(try child.askBlocking("set name \"Bo\"") == "ok")
                #expect(try child.askBlocking("quit") == "bye")
                _ = try child.waitBlocking(timeout: 30)
                return try #require(Int32(ready.dropFirst("ready ".count)))
            }
            #expect(try await eventually { a[name] == "Bo" && b[name] == "Bo" })
            // A save that changes no value records nothing: b puts what the key already holds.
            b[volume] = 0.95
            a[volume] = 0.95
            try await b.save()

            let history = try await a.history()
            #expect(history.count == 4, "\(history)")
            #expect(history.map(\.revision) == history.map(\.revision).sorted(by: >), "newest first")
            #expect(
                history.map(\.changes) == [
                    [.init(key: "volume", oldValue: .json(0.9), newValue: .json(0.95))],
                    [.init(key: "name", oldValue: .absent, newValue: .json("Bo"))],
                    [
                        .init(key: "name", oldValue: .json("Ana"), newValue: .absent),
                        .init(key: "volume", oldValue: .json(0.8), newValue: .json(0.9)),
                    ],
                    [
                        .init(key: "name", oldValue: .absent, newValue: .json("Ana")),
                        .init(key: "volume", oldValue: .absent, newValue: .json(0.8)),
                    ],
                ])
            #expect(history.allSatisfy { $0.kind == .save })
            #expect(history.map(\.author.processID) == [getpid(), pid, getpid(), getpid()])
            #expect(history[0].author.program == ProcessInfo.processInfo.processName)
            #expect(history[1].author.program == "codable-defaults-etcd-fixture")
            #expect(history.allSatisfy { !$0.author.user.isEmpty && !$0.author.host.isEmpty })
            #expect(history.last!.date.timeIntervalSince(before) > -1 && history[0].date.timeIntervalSinceNow < 1)
            // Every handle reads the same history: etcd's.
            await #expect(try b.history() == history)
            await #expect(
                try a.history(forKey: "name").map(\.revision) == [
                    history[1].revision, history[2].revision,
                    history[3].revision,
                ])

            // The record key is no member: not a key, not in what a fresh store reads.
            let fresh = try await open(server, errors)
            #expect(a.keys == ["name", "volume"] && b.keys == ["name", "volume"] && fresh.keys == ["name", "volume"])
            #expect(fresh.dictionaryRepresentation().keys.sorted() == ["name", "volume"])
            let key = try engine(a).historyKey
            let record = try #require(try await EtcdClient(endpoints: endpoints).get(key))
            // b's save that changed nothing put a record too (b could not know), which the history leaves out.
            #expect(Int(record.modRevision) > history[0].revision)
            let recorded = try await onThread { [endpoints] in
                try EtcdClient(endpoints: endpoints).read([EtcdRead(key: key, revision: Int64(history[0].revision))])
            }
            #expect(recorded.first??.modRevision == Int64(history[0].revision), "the record's revision is its save's")
            // A set of the value a key holds saves nothing, so records nothing.
            let transactions = try engine(a).transactionCount
            a[volume] = 0.95
            try await a.save()
            #expect(try engine(a).transactionCount == transactions)
            #expect(errors.errors.isEmpty, "\(errors.errors)")
        }
    }

    @Test func undoOfTheStoreAndOfAKeyAndARevertAreNewRecordedChanges() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            let b = try await open(server, errors)
            a.batch {
                $0[volume] = 0.8
                $0[name] = "Ana"
            }
            a.batch {
                $0[volume] = 0.1
                $0[name] = "Bo"
            }
            let saves = try await a.history().map(\.revision)
            #expect(saves.count == 2)
            #expect(try await eventually { b[name] == "Bo" })

            // b undoes a's last save: every key it changed goes back, in etcd and in a (by its watch).
            let undone = try await b.undo()
            #expect(undone.map(\.key) == ["name", "volume"])
            #expect(b[volume] == 0.8 && b[name] == "Ana")
            #expect(try await eventually { a[volume] == 0.8 && a[name] == "Ana" })
            let revert = try await #require(try a.history().first)
            #expect(revert.kind == .revert(toRevision: saves[0] - 1) && revert.revision > saves[0])
            #expect(revert.author.processID == getpid())

            // Undoing one key undoes its last change (the revert): it alone goes back.
            await #expect(try a.undo(forKey: "name").map(\.key) == ["name"])
            #expect(a[name] == "Bo" && a[volume] == 0.8)
            #expect(try await eventually { b[name] == "Bo" })

            // Back to before the first save: nothing stored.
            let first = try await #require(try a.history().last)
            #expect(first.revision == saves[1])
            await #expect(try a.revert(toRevision: first.revision - 1).map(\.key) == ["name", "volume"])
            #expect(a.keys == [])
            #expect(try await eventually { b.keys == [] })
            // And forward again, to right after the first save.
            try await b.revert(toRevision: first.revision)
            #expect(b[volume] == 0.8 && b[name] == "Ana")
            await #expect(try a.history().count == 6)
            // A time before every record: the history is whole (nothing compacted), so that is before every save.
            try await a.revert(to: Date(timeIntervalSince1970: 0))
            #expect(a.keys == [])
            #expect(errors.errors.isEmpty, "\(errors.errors)")
        }
    }

    @Test func aRevertOfMoreKeysThanOneTransactionTakesIsRefusedBeforeWriting() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let defaults = try await open(server, errors, saveMode: .manual)
            for index in 0..<200 { defaults.set(index, forKey: "k\(index)") }
            try await defaults.save()
            for dryRun in [true, false] {
                let error = #expect(throws: DefaultsError.self) { try defaults.revert(toRevision: 0, dryRun: dryRun) }
                #expect(error?.code == .historyUnavailable)
                #expect(
                    error?.message.contains("more than one update here takes (127)") == true, "\(error?.message ?? "")")
            }
            #expect(defaults.keys.count == 200)
            // Key by key, it goes.
            await #expect(try defaults.revert(forKey: "k7", toRevision: 0).map(\.key) == ["k7"])
        }
    }

    @Test func theHistorySurvivesARestartOfEtcd() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            a[volume] = 0.8
            a[volume] = 0.9
            let history = try await a.history()
            #expect(history.count == 2)

            await server.stop()
            try await server.restartStopped()

            let b = try await open(server, errors)
            await #expect(try b.history() == history)
            await #expect(try b.undo().map(\.key) == ["volume"])
            #expect(b[volume] == 0.8)
            await #expect(try b.history().count == 3)
        }
    }

    @Test func afterACompactionTheHistoryIsWhatRemainsAndARevertBeforeItIsRefused() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            for value in [0.1, 0.2, 0.3] { a[volume] = value }
            let saves = try await a.history().map(\.revision).reversed().map { $0 }
            #expect(saves.count == 3)

            // etcd compacts the revisions before the second save: its old value is gone, so is its record.
            try await server.etcdctl(["compact", "\(saves[1])"])
            let remaining = try await a.history()
            #expect(remaining.map(\.revision) == [saves[2]])
            #expect(remaining[0].changes == [.init(key: "volume", oldValue: .json(0.2), newValue: .json(0.3))])
            let refused = #expect(throws: DefaultsError.self) { try a.revert(toRevision: saves[0]) }
            #expect(refused?.code == .historyUnavailable)
            #expect(refused?.message.contains("history before revision \(saves[2]) is gone") == true, "\(refused!)")
            #expect(a[volume] == 0.3, "nothing was written")
            await #expect(try a.undo().map(\.key) == ["volume"])
            #expect(a[volume] == 0.2)

            // Compacted past every record: the history says what is gone, and so does an undo.
            let now = try await EtcdClient(endpoints: server.clientURLs).read(Array("myservice/volume".utf8)).revision
            try await server.etcdctl(["compact", "\(now)"])
            let gone = #expect(throws: DefaultsError.self) { try a.history() }
            #expect(gone?.code == .historyUnavailable)
            #expect(gone?.message.contains("history before revision \(now + 1) is gone") == true, "\(gone!)")
            let undo = #expect(throws: DefaultsError.self) { try a.undo() }
            #expect(undo?.message.contains("history before revision") == true, "\(undo!)")
            #expect(a[volume] == 0.2, "nothing was written")

            // The next save starts the history again.
            a[volume] = 0.4
            let fresh = try await a.history()
            #expect(fresh.map(\.changes) == [[.init(key: "volume", oldValue: .json(0.2), newValue: .json(0.4))]])
            #expect(errors.errors.isEmpty, "\(errors.errors)")
        }
    }

    @Test func aSecretKeyIsRecordedByNameOnlyAndItsValueNeverEntersTheRecord() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            a[token] = "hunter2"
            a[token] = "s3cr3t-value"
            a[volume] = 0.7
            a[token] = nil

            let history = try await a.history()
            #expect(
                history.map(\.changes) == [
                    [.init(key: "token", oldValue: .secret, newValue: .absent)],
                    [.init(key: "volume", oldValue: .absent, newValue: .json(0.7))],
                    [.init(key: "token", oldValue: .secret, newValue: .secret)],
                    [.init(key: "token", oldValue: .absent, newValue: .secret)],
                ])
            let described = "\(history)"
            #expect(!described.contains("hunter2") && !described.contains("s3cr3t-value"))
            // Every version of the record key etcd holds names the key, never its value.
            let client = try EtcdClient(endpoints: server.clientURLs)
            let key = try engine(a).historyKey
            let versions = try await onThread {
                try client.read(history.map { EtcdRead(key: key, revision: Int64($0.revision)) })
            }
            #expect(versions.count == 4)
            for version in versions {
                let text = String(decoding: try #require(version).value, as: UTF8.self)
                #expect(text.contains("\"token\"") || text.contains("\"volume\""), "\(text)")
                #expect(!text.contains("hunter2") && !text.contains("s3cr3t-value"), "\(text)")
            }
            // etcdctl's view of the prefix (base64 in JSON) holds no secret either, but the keys' own values.
            let json = try await server.etcdctl(["get", "--prefix", "myservice/", "-w", "json"])
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let values = (decoded["kvs"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String }
                .compactMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
            #expect(values.count == 2 && values.contains("0.7"))
            #expect(!values.contains { $0.contains("hunter2") || $0.contains("s3cr3t") })

            // A secret's value is not kept, so it cannot be put back.
            let refused = #expect(throws: DefaultsError.self) { try a.undo(forKey: "token") }
            #expect(refused?.code == .historyUnavailable)
            #expect(errors.errors.isEmpty, "\(errors.errors)")
        }
    }

    @Test func theClientReadsKeysAtPastRevisionsUntilEtcdCompactsThem() async throws {
        try await EtcdServer.with { server in
            let client = try EtcdClient(endpoints: server.clientURLs)
            let key = Array("myservice/volume".utf8)
            let first = try await client.put(key, Array("0.1".utf8))
            let second = try await client.put(key, Array("0.2".utf8))
            let removed = try await client.delete(key).revision
            let read = try await onThread {
                try client.read([
                    EtcdRead(key: key, revision: first - 1), EtcdRead(key: key, revision: first),
                    EtcdRead(key: key, revision: second), EtcdRead(key: key, revision: second, keysOnly: true),
                    EtcdRead(key: key, revision: removed),
                ])
            }
            #expect(read.map { $0.map { String(decoding: $0.value, as: UTF8.self) } } == [nil, "0.1", "0.2", "", nil])
            #expect(read[3]?.modRevision == second, "a read of the key alone says it was there, and when it changed")

            try await server.etcdctl(["compact", "\(second)"])
            let refused = await #expect(throws: EtcdError.self) {
                try await onThread { try client.read([EtcdRead(key: key, revision: first)]) }
            }
            #expect(refused?.message.contains("required revision has been compacted") == true, "\(refused!)")
            #expect(try await onThread { try client.read([EtcdRead(key: key, revision: second)]) }.count == 1)
        }
    }

    @Test func aUserWhoMayWriteSomeKeysOnlyIsToldOfTheRecordAndSavesWithTheHistoryOff() async throws {
        try await EtcdServer.with { server in
            for command in [
                ["user", "add", "root:pass"], ["user", "add", "app:app-pass"], ["role", "add", "app"],
                ["role", "grant-permission", "app", "--prefix=true", "read", "myservice/"],
                ["role", "grant-permission", "app", "readwrite", "myservice/volume"],
                ["user", "grant-role", "app", "app"],
                ["auth", "enable"],
            ] {
                try await server.etcdctl(command)
            }
            let urls = server.clientURLs.map { URL(string: $0)! }
            // Its refused change stays unsaved, and is tried again (and refused) when the store goes: reported here.
            let reports = ErrorLog()
            let recording = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .manual, username: "app", password: "app-pass",
                onError: reports.handler)
            recording[volume] = 0.8
            let refused = #expect(throws: DefaultsError.self) { try recording.save() }
            #expect(refused?.code == .writeFailed)
            #expect(refused?.message.contains("Options(history: .off)") == true, "\(refused!)")

            let quiet = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .manual, username: "app", password: "app-pass",
                options: Defaults.Options(history: .off))
            quiet[volume] = 0.9
            try await quiet.save()
            let stored = try await server.etcdctl(
                ["--user", "root:pass", "get", "--print-value-only", "myservice/volume"])
            #expect(stored == "0.9\n")
        }
    }

    @Test func theHistoryReadsAsManySavesAndBytesAsTheOptionsSay() async throws {
        try await EtcdServer.with { server in
            let urls = server.clientURLs.map { URL(string: $0)! }
            func open(_ limit: Defaults.HistoryLimit) async throws -> Defaults {
                try await Defaults(
                    etcd: urls, prefix: "myservice/", saveMode: .immediate, options: Defaults.Options(history: limit))
            }
            let a = try await open(Defaults.HistoryLimit(maximumSaves: 2))
            for value in [0.1, 0.2, 0.3] { a[volume] = value }
            let kept = try await a.history()
            #expect(
                kept.map(\.changes) == [
                    [.init(key: "volume", oldValue: .json(0.2), newValue: .json(0.3))],
                    [.init(key: "volume", oldValue: .json(0.1), newValue: .json(0.2))],
                ])
            let refused = #expect(throws: DefaultsError.self) { try a.revert(toRevision: kept[1].revision - 2) }
            #expect(refused?.message.contains("history before revision \(kept[1].revision) is gone") == true)
            // etcd keeps every save: a store with a larger bound reads them all.
            #expect(try await open(.default).history().count == 3)
            // A bound of bytes smaller than one record keeps the newest alone.
            #expect(try await open(Defaults.HistoryLimit(maximumBytes: 1)).history() == [kept[0]])
        }
    }

    @Test func historyOffRecordsNothing() async throws {
        try await EtcdServer.with { server in
            let a = try await Defaults(
                etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "myservice/", saveMode: .immediate,
                options: Defaults.Options(history: .off))
            a[volume] = 0.8
            await #expect(try a.history().isEmpty)
            #expect(try await EtcdClient(endpoints: server.clientURLs).get(engine(a).historyKey) == nil)
        }
    }
}
