import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation
import Testing

private let volume = Defaults.Key<Double>("volume", default: 0.5, constraints: [.range(0...1)])
private let theme = Defaults.Key<String>("theme", default: "light", constraints: [.oneOf(["light", "dark"])])
private let retries = Defaults.Key<Int>("retries", default: 3, constraints: [.atLeast(0)])

/// Keys with rules on a store kept in etcd: what a set refuses is never put, and what another writer put that
/// breaks a rule reads as the default, reported once, and stays as it is.
@Suite("Checked values on etcd", .needsEtcd)
struct EtcdConstraintTests {
    @Test func aRefusedSetPutsNothingAndABadValueEtcdctlPutReadsAsTheDefaultOnceReportedAndKept() async throws {
        try await EtcdServer.with { server in
            let errors = ErrorLog()
            let defaults = try await Defaults(
                etcd: server.clientURLs.map { URL(string: $0)! }, prefix: "myservice/", saveMode: .immediate,
                onError: errors.handler)
            let refused = #expect(throws: DefaultsError.self) { try defaults.set(1.5, for: volume) }
            #expect(refused?.code == .invalidValue && refused?.key == "volume")
            try await defaults.save()
            #expect(try await server.etcdctl(["get", "--prefix", "--keys-only", "myservice/"]) == "")

            // Another writer puts values that break the rules; the store sees them through its watch.
            _ = try await server.etcdctl(["put", "myservice/volume", "4"])
            _ = try await server.etcdctl(["put", "myservice/theme", "\"neon\""])
            #expect(
                try await eventually {
                    defaults.hasStoredValue(forKey: "volume") && defaults.hasStoredValue(forKey: "theme")
                })
            #expect(defaults[volume] == 0.5)
            #expect(defaults[volume] == 0.5)
            #expect(defaults[theme] == "light")
            #expect(errors.errors.map(\.key) == ["volume", "theme"], "each reported once: \(errors.errors)")
            #expect(errors.errors.allSatisfy { $0.code == .invalidValue })
            #expect(errors.errors.first?.message.contains("between 0.0 and 1.0") == true)

            // A save of another key leaves them as they are.
            try defaults.set(4, for: retries)
            try await defaults.save()
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "4\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/theme"]) == "\"neon\"\n")
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/retries"]) == "4\n")
        }
    }
}
