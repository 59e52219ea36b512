import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// The value etcd holds at `key`, as `etcdctl get --print-value-only` prints it.
private func stored(_ key: String, _ server: EtcdServer) async throws -> String {
    try await server.etcdctl(["get", "--print-value-only", key])
}

@Suite("Defaults on etcd with a local copy: edge cases of kept changes", .needsEtcd)
struct EtcdLocalCopyEdgeTests {
    /// Only a store on etcd has an etcd side; one on etcd without a local copy is never stale and keeps nothing.
    @Test func onlyAStoreOnEtcdHasAnEtcdConnection() async throws {
        let directory = try TemporaryDirectory()
        #expect(try Defaults(url: directory.file("settings.json"), saveMode: .manual).etcd == nil)
        #expect(Defaults.inMemory().etcd == nil)
        try await EtcdServer.with { server in
            let defaults = try await Defaults(etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "p/")
            let connection = try #require(defaults.etcd)
            #expect(!connection.isStale && connection.unsentChangeCount == 0)
        }
    }

    @Test func aChangeKeptOfAKeyRemovedBeforeTheOutageLandsWithoutAConflict() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let urls = server.clientURLs.map { URL(string: $0)! }
            let reports = Recorder<DefaultsError>()
            let defaults = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .immediate, localCopy: directory.file("copy.json")
            ) { reports.append($0) }
            let theme = Defaults.Key<String?>("theme")
            let volume = Defaults.Key<Double>("volume", default: 0)
            // theme: set and removed by this store; volume: set and removed by another writer, seen by the watch.
            defaults[theme] = "light"
            defaults[theme] = nil
            _ = try await server.etcdctl(["put", "myservice/volume", "0.1"])
            #expect(try await eventually { defaults[volume] == 0.1 })
            _ = try await server.etcdctl(["del", "myservice/volume"])
            #expect(try await eventually { defaults[volume] == 0 })
            for member in server.members { try await server.kill(member) }
            defaults[theme] = "dark"
            defaults[volume] = 0.5
            #expect(defaults.etcd?.unsentChangeCount == 2)
            for member in server.members { try await server.restart(member) }
            #expect(try await eventually { defaults.etcd?.unsentChangeCount == 0 })
            #expect(try await stored("myservice/theme", server) == "\"dark\"\n")
            #expect(try await stored("myservice/volume", server) == "0.5\n")
            #expect(!reports.values.contains { $0.code == .conflict }, "\(reports.values)")
            #expect(defaults[theme] == "dark" && defaults[volume] == 0.5)
        }
    }

    @Test func keptChangesLargerThanOneTransactionAllLand() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let urls = server.clientURLs.map { URL(string: $0)! }
            let reports = Recorder<DefaultsError>()
            let defaults = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .manual, localCopy: directory.file("copy.json")
            ) { reports.append($0) }
            for member in server.members { try await server.kill(member) }
            // 24 values of 100 KB: more than etcd takes in one request (1.5 MiB), as a save online would split them.
            let text = String(repeating: "x", count: 100_000)
            for index in 0..<24 { defaults.set(JSONValue.string("\(index)\(text)"), forKey: "big\(index)") }
            try await defaults.save()
            #expect(defaults.etcd?.unsentChangeCount == 24)
            for member in server.members { try await server.restart(member) }
            #expect(try await eventually { defaults.etcd?.unsentChangeCount == 0 }, "\(reports.values)")
            let keys = try await server.etcdctl(["get", "myservice/big", "--prefix", "--keys-only"])
            #expect(keys.split(separator: "\n").count == 24, "\(keys)")
        }
    }

    @Test func aKeptChangeEtcdRefusesHoldsBackNoOtherKeptChange() async throws {
        try await EtcdServer.with(arguments: ["--max-request-bytes", "20000"]) { server in
            let directory = try TemporaryDirectory()
            let urls = server.clientURLs.map { URL(string: $0)! }
            let reports = Recorder<DefaultsError>()
            let defaults = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .manual, localCopy: directory.file("copy.json")
            ) { reports.append($0) }
            for member in server.members { try await server.kill(member) }
            defaults.set(JSONValue.string(String(repeating: "x", count: 50_000)), forKey: "huge")
            defaults.set(JSONValue.number(1), forKey: "small")
            try await defaults.save()
            #expect(defaults.etcd?.unsentChangeCount == 2)
            for member in server.members { try await server.restart(member) }
            // The small change lands; the one etcd refuses stays kept, and is reported.
            #expect(try await eventually { defaults.etcd?.unsentChangeCount == 1 }, "\(reports.values)")
            #expect(try await stored("myservice/small", server) == "1\n")
            #expect(try await eventually { reports.values.contains { $0.message.contains("\"huge\"") } })
        }
    }

    @Test func theCopyIsNeverWrittenLargerThanItCanBeReadBack() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json")
            let urls = server.clientURLs.map { URL(string: $0)! }
            let options = Defaults.Options(maximumFileSize: 4096)
            do {
                let reports = Recorder<DefaultsError>()
                let defaults = try await Defaults(
                    etcd: urls, prefix: "myservice/", saveMode: .immediate, options: options, localCopy: copy
                ) { reports.append($0) }
                defaults.set(JSONValue.string(String(repeating: "x", count: 5000)), forKey: "large")
                try await defaults.save()
                #expect(
                    try await eventually { reports.values.contains { $0.path == copy.path } },
                    "the copy's write failure is reported: \(reports.values)")
            }
            // The first store's copy is free once its storage is gone, which its cancelled watch and retry tasks,
            // still ending, may delay past the store's own end: wait for the lock to be released.
            #expect(try await eventually { lockIsFree(directory.file(".copy.json.lock").path) })
            // The store opens again (etcd answers): the copy it left reads; the one it would write now is reported.
            let reports = Recorder<DefaultsError>()
            let again = try await Defaults(etcd: urls, prefix: "myservice/", options: options, localCopy: copy) {
                reports.append($0)
            }
            #expect(again.object(forKey: "large") != nil)
            #expect(reports.values.contains { $0.code == .fileTooLarge && $0.path == copy.path }, "\(reports.values)")
        }
    }

    @Test func aChangeTheCopyCannotKeepFailsItsSaveAndStaysUnsaved() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("copy.json")
            let urls = server.clientURLs.map { URL(string: $0)! }
            let reports = Recorder<DefaultsError>()
            let defaults = try await Defaults(etcd: urls, prefix: "myservice/", saveMode: .manual, localCopy: copy) {
                reports.append($0)
            }
            // The copy's path becomes a directory: the copy cannot be written there.
            try FileManager.default.removeItem(at: copy)
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
            for member in server.members { try await server.kill(member) }
            defaults.set(JSONValue.number(7), forKey: "volume")
            let error = #expect(throws: DefaultsError.self) { try defaults.save() }
            #expect(error?.message.contains("stay unsaved") == true, "\(String(describing: error))")
            #expect(defaults.etcd?.unsentChangeCount == 0)
            // Unsaved, so saved when a member answers.
            for member in server.members { try await server.restart(member) }
            try await defaults.save()
            #expect(try await stored("myservice/volume", server) == "7\n")
        }
    }

    @Test func theCopyHoldsASecretKeysValueInAFileOnlyItsOwnerReads() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let copy = directory.file("service/copy.json")
            let urls = server.clientURLs.map { URL(string: $0)! }
            let defaults = try await Defaults(etcd: urls, prefix: "myservice/", saveMode: .immediate, localCopy: copy)
            defaults[Defaults.Key<String>("token", default: "", secret: true)] = "s3cret"
            // The copy is the store's data, secret values included (as a store file holds them): 0600, in a
            // directory of mode 0700 when the store makes it.
            let file = try FileManager.default.attributesOfItem(atPath: copy.path)
            let folder = try FileManager.default.attributesOfItem(atPath: copy.deletingLastPathComponent().path)
            #expect((file[.posixPermissions] as? Int) == 0o600)
            #expect((folder[.posixPermissions] as? Int) == 0o700)
            #expect(try String(contentsOf: copy, encoding: .utf8).contains("s3cret"))
        }
    }

    /// A copy path that is a symbolic link (here to a file not made yet) is resolved as a store file's is: the link
    /// stays a link, the file it names holds the copy, and the lock protects that file, whichever of its names a second store uses.
    @Test func aCopyPathThatIsALinkWritesItsTargetAndLocksIt() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let target = directory.file("real/copy.json")
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            let link = directory.file("link.json")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
            let urls = server.clientURLs.map { URL(string: $0)! }
            let defaults = try await Defaults(etcd: urls, prefix: "myservice/", saveMode: .immediate, localCopy: link)
            defaults.set(JSONValue.number(7), forKey: "volume")
            try await defaults.save()
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
            #expect(try String(contentsOf: target, encoding: .utf8).contains("volume"), "the target holds the copy")
            let second = await #expect(throws: DefaultsError.self) {
                _ = try await Defaults(etcd: urls, prefix: "myservice/", localCopy: target)
            }
            #expect(second?.code == .lockTimeout, "\(String(describing: second))")
            _ = defaults
        }
    }
}

/// Whether no one holds the `flock` lock of the lock file at `path` (a descriptor of this process's own counts as
/// another holder: `flock` locks belong to open files, not processes).
private func lockIsFree(_ path: String) -> Bool {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
    flock(descriptor, LOCK_UN)
    return true
}
