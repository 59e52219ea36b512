import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

private let volume = Defaults.Key<Double>("volume", default: 0.5, constraints: [.range(0...1)])
private let name = Defaults.Key<String?>("name")

/// Opens a `Defaults` on every member of `server` under `myservice/`, its errors to `errors`.
private func open(_ server: EtcdServer, _ errors: ErrorLog) async throws -> Defaults {
    try await Defaults(
        etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "myservice/", saveMode: .immediate,
        onError: errors.handler)
}

@Suite("Defaults on etcd: the schema kept under the prefix", .needsEtcd)
struct EtcdSchemaTests {
    @Test func aPublishedSchemaIsReadByAnotherHandleAndIsNoMember() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let a = try await open(server, errors)
            let b = try await open(server, errors)
            #expect(try a.publishedSchema() == nil)
            #expect(a.schemaLocation.hasPrefix("etcd://") && a.schemaLocation.hasSuffix("/myservice/\\xFFschema"))
            a[volume] = 0.8
            #expect(try await eventually { b[volume] == 0.8 })
            let heard = Locked<[Set<String>]>([])
            let token = b.observeAll { names in heard.withLock { $0.append(names) } }

            try a.publishSchema(for: [volume, name], title: "Service")
            let generated = try Defaults.schema(for: [volume, name], title: "Service")
            let published = try #require(try b.publishedSchema())
            #expect(published.json == generated && published.title == "Service")
            #expect(published.keyNames == ["name", "volume"])
            #expect(published.violations(of: 1.5, forKey: "volume").map(\.keyword) == ["maximum"])

            // No member: not a key of either handle nor of a fresh one, and no observer hears of it. A change
            // saved after it reaches b's watch after it, so b has seen the schema's put by then.
            a[name] = "Ana"
            #expect(try await eventually { b[name] == "Ana" && heard.withLock { $0.contains(["name"]) } })
            #expect(heard.withLock { $0 } == [["name"]])
            let fresh = try await open(server, errors)
            #expect(a.keys == ["name", "volume"] && b.keys == ["name", "volume"] && fresh.keys == ["name", "volume"])
            #expect(fresh.dictionaryRepresentation().keys.sorted() == ["name", "volume"])
            token.cancel()

            // etcdctl sees it under the prefix, at prefix + 0xFF + "schema", the pretty JSON and a line break.
            let json = try await server.etcdctl(["get", "--prefix", "myservice/", "-w", "json"])
            let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            var stored: [[UInt8]: [UInt8]] = [:]
            for pair in decoded["kvs"] as? [[String: Any]] ?? [] {
                let key = try #require(Data(base64Encoded: pair["key"] as? String ?? ""))
                let value = try #require(Data(base64Encoded: pair["value"] as? String ?? ""))
                stored[Array(key)] = Array(value)
            }
            let schemaKey = Array("myservice/".utf8) + [0xFF] + Array("schema".utf8)
            let members = stored.keys.filter { !$0.contains(0xFF) }.map { String(decoding: $0, as: UTF8.self) }
            #expect(members.sorted() == ["myservice/name", "myservice/volume"])
            let expected = try writtenSchema(for: [volume, name], title: "Service")
            #expect(stored[schemaKey] == expected, "byte for byte what writeSchema writes to a file")
            #expect(expected.suffix(2) == Array("}\n".utf8))

            // A second publish replaces it, for every handle.
            try b.publishSchema(for: [volume], title: "Smaller")
            #expect(try a.publishedSchema()?.keyNames == ["volume"])
            #expect(try fresh.publishedSchema()?.title == "Smaller")

            // A value there that is not JSON is reported with the key's place, line and column.
            let endpoints = server.clientURLs
            _ = try await EtcdClient(endpoints: endpoints).put(schemaKey, Array("{\n  \"type\": \n".utf8))
            let invalid = #expect(throws: DefaultsError.self) { try a.publishedSchema() }
            #expect(invalid?.code == .invalidJSON && invalid?.path == a.schemaLocation && invalid?.line == 3)
            #expect(a.keys == ["name", "volume"])
            #expect(errors.errors.isEmpty, "\(errors.errors)")
        }
    }

    /// The bytes `writeSchema` writes to a file for `keys`.
    private func writtenSchema(for keys: [Defaults.AnyKey], title: String) throws -> [UInt8] {
        let directory = try TemporaryDirectory()
        let url = directory.file("settings.schema.json")
        try Defaults.writeSchema(for: keys, title: title, to: url)
        return try bytes(url)
    }
}
