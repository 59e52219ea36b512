import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

/// Opens a `Defaults` on `server` under `prefix`.
private func open(_ server: EtcdServer, prefix: String, onError: (@Sendable (DefaultsError) -> Void)? = nil)
    async throws -> Defaults
{
    try await Defaults(
        etcd: server.clientURLs.map { URL(string: $0)! }, prefix: prefix, saveMode: .immediate, onError: onError)
}

/// An etcd key whose text is not JSON (another tool wrote it) is a value the store cannot read: never written
/// over by an atomic update, and never quoted in an error when its key is secret.
@Suite("Defaults on etcd: values whose text is not JSON", .needsEtcd)
struct EtcdUnreadableValueTests {
    @Test func modifyRefusesAValueThatIsNotJSONAndKeepsIt() async throws {
        try await EtcdServer.with { server in
            try await server.etcdctl(["put", "p/count", "loud"])
            try await server.etcdctl(["put", "p/list", "a.txt,b.txt"])
            let defaults = try await open(server, prefix: "p/")

            var ran = false
            let typed = #expect(throws: DefaultsError.self) {
                try defaults.modify(Defaults.Key<Int>("count", default: 0)) { count in
                    ran = true
                    count += 1
                }
            }
            #expect(typed?.code == .decodingFailed)
            #expect(typed?.key == "count")
            #expect(typed?.message.contains("p/count") == true, "\(String(describing: typed))")

            let untyped = #expect(throws: DefaultsError.self) {
                try defaults.modify(forKey: "list") { value in
                    ran = true
                    value = ["c.txt"]
                }
            }
            #expect(untyped?.code == .decodingFailed)
            #expect(!ran, "the closure must not run on a value it would write over")
            #expect(try await server.etcdctl(["get", "--print-value-only", "p/count"]) == "loud\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "p/list"]) == "a.txt,b.txt\n")

            // A set writes over it, as documented; then modify works on the value.
            defaults[Defaults.Key<Int>("count", default: 0)] = 4
            try await defaults.modify(Defaults.Key<Int>("count", default: 0)) { $0 += 1 }
            #expect(try await server.etcdctl(["get", "--print-value-only", "p/count"]) == "5\n")
        }
    }

    /// The parser stops at a character of the value and would quote it; for a secret key no part of the value
    /// appears in any error (reported, thrown by a read, thrown by modify), only where it stopped.
    @Test func anErrorAboutASecretValueQuotesNoPartOfIt() async throws {
        try await EtcdServer.with { server in
            let token = Defaults.Key<String?>("token", secret: true)
            let plain = Defaults.Key<String?>("plain")
            for (text, column) in [("Zk8-hunter2", 1), ("12345xyz", 6)] {
                let prefix = "s\(column)/"
                try await server.etcdctl(["put", prefix + "token", text])
                try await server.etcdctl(["put", prefix + "plain", text])
                let errors = ErrorLog()
                let defaults = try await open(server, prefix: prefix, onError: errors.handler)
                #expect(defaults[token] == nil)
                let read = #expect(throws: DefaultsError.self) { try defaults.value(for: token) }
                let modified = #expect(throws: DefaultsError.self) { try defaults.modify(token) { $0 = "new" } }
                var texts = errors.errors.filter { $0.key == "token" }.map { "\($0)" }
                texts += [read, modified].compactMap { $0 }.flatMap { ["\($0)", $0.message] }
                #expect(texts.count >= 5, "the report, and the description and message of two errors")
                let stopped = text[text.index(text.startIndex, offsetBy: column - 1)]
                for message in texts {
                    #expect(
                        !message.contains("'\(stopped)'") && !message.contains(String(text.prefix(3))), "\(message)")
                    #expect(message.contains("column \(column)"), "\(message)")
                }
                // A key that is not secret keeps the parser's words.
                let other = #expect(throws: DefaultsError.self) { try defaults.value(for: plain) }
                #expect(other?.message.contains("'\(stopped)'") == true, "\(String(describing: other))")
            }
        }
    }
}
