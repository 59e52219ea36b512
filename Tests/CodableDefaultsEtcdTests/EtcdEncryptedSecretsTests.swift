import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// A store on etcd given an encryption key keeps its secrets encrypted in etcd (as etcdctl reads the whole key space:
/// values and history) and in its local copy, also for a change kept while no member answers; rotation changes the
/// key in one transaction.
@Suite("Defaults on etcd: secret values encrypted at rest", .needsEtcd)
struct EtcdEncryptedSecretsTests {
    let secret = "hunter2-on-etcd"
    static let token = Defaults.Key<String>("token", default: "none", secret: true)
    static let volume = Defaults.Key<Double>("volume", default: 0)

    /// A key file only its owner can read, holding `hex`.
    func keyFile(_ directory: TemporaryDirectory, _ name: String, _ hex: String) throws -> URL {
        let url = directory.file(name)
        try writeKeyFile(url, hex: hex)
        return url
    }

    @Test func noEtcdValueNorLocalCopyHoldsASecretsText() async throws {
        try await EtcdServer.with { server in
            let directory = try TemporaryDirectory()
            let urls = server.clientURLs.map { URL(string: $0)! }
            let key = try keyFile(directory, "a.key", String(repeating: "5e", count: 32))
            let other = try keyFile(directory, "b.key", String(repeating: "6f", count: 32))
            let copy = directory.file("copy.json")
            let options = Defaults.Options(encryptionKey: .file(key))
            let reports = Recorder<DefaultsError>()
            let defaults = try await Defaults(
                etcd: urls, prefix: "myservice/", saveMode: .immediate, options: options, localCopy: copy
            ) { reports.append($0) }
            try defaults.set(secret, for: Self.token)
            try defaults.set(0.5, for: Self.volume)
            let everything = try await server.etcdctl(["get", "", "--prefix"])
            #expect(everything.contains("myservice/token") && !everything.contains(secret))
            let value = try await server.etcdctl(["get", "--print-value-only", "myservice/token"])
            #expect(value.hasPrefix("\"cdenc:1:"), "\(value)")

            // A change kept in the local copy while no member answers rests encrypted there, and lands so.
            for member in server.members { try await server.kill(member) }
            try defaults.set(secret + "-offline", for: Self.token)
            #expect(defaults.etcd?.unsentChangeCount == 1)
            #expect(!String(decoding: try Data(contentsOf: copy), as: UTF8.self).contains(secret))
            for member in server.members { try await server.restart(member) }
            #expect(try await eventually { defaults.etcd?.unsentChangeCount == 0 })
            let after = try await server.etcdctl(["get", "", "--prefix"])
            #expect(!after.contains(secret))

            // Another store reads it with the key; without it, a loud error and the value left as it is.
            let reader = try await Defaults(etcd: urls, prefix: "myservice/", options: options) { reports.append($0) }
            #expect(try reader.value(for: Self.token) == secret + "-offline")
            let keyless = try await Defaults(etcd: urls, prefix: "myservice/") { reports.append($0) }
            #expect(throws: DefaultsError.self) { try keyless.value(for: Self.token) }
            try keyless.set(0.25, for: Self.volume)
            try await keyless.save()
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/token"]).hasPrefix("\"cdenc:1:"))

            // Rotation: one transaction; the new key reads, the old one no longer does.
            let before = try await server.etcdctl(["get", "--print-value-only", "myservice/token"])
            #expect(try reader.reencryptSecrets(with: .file(other)) == ["token"])
            let rotated = try await server.etcdctl(["get", "--print-value-only", "myservice/token"])
            #expect(rotated != before && rotated.hasPrefix("\"cdenc:1:"))
            let withNew = try await Defaults(
                etcd: urls, prefix: "myservice/", options: Defaults.Options(encryptionKey: .file(other))
            ) { reports.append($0) }
            #expect(try withNew.value(for: Self.token) == secret + "-offline")
            #expect(!reports.values.contains { $0.description.contains(secret) })
        }
    }
}
