import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process that re-encrypts a store's secrets under one key and then the other, killed with SIGKILL at random
/// moments, never leaves a value that neither key opens: every secret reads back, whole, with one of the two keys.
@Suite struct RekeyCrashTests {
    /// How many times the process is killed (`CODABLE_DEFAULTS_REKEY_KILLS`, default 40).
    static let kills = ProcessInfo.processInfo.environment["CODABLE_DEFAULTS_REKEY_KILLS"].flatMap { Int($0) } ?? 40

    @Test func rotationKilledAtRandomPointsLeavesEveryValueReadableWithOneOfTheKeys() async throws {
        let fixture = try Fixture.locate("codable-defaults-fixture")
        let dir = try TemporaryDirectory()
        let url = dir.file()
        var keyFiles: [URL] = []
        for (index, hex) in [String(repeating: "1a", count: 32), String(repeating: "2b", count: 32)].enumerated() {
            let file = dir.file("key\(index)")
            try writeKeyFile(file, hex: hex)
            keyFiles.append(file)
        }
        let secrets = (0..<10).map { Defaults.Key<String>("s\($0)", default: "", secret: true) }
        var current = 0  // the key that opens the file
        var acknowledged = 0
        var switched = 0
        for iteration in 0..<Self.kills {
            let order = [keyFiles[current].path, keyFiles[1 - current].path]
            // The child runs until it is killed (600 s bound its life if the test dies): on a loaded machine this
            // task may wait long for a thread between reading "ready" and the kill, and a child that ended on its
            // own by then would test nothing. (A child left running is killed when its handle goes.)
            let child = try ChildProcess(fixture, ["rekey", url.path] + order + ["--seconds", "600"])
            let first = try await child.readLine(timeout: 20)
            try #require(first == "ready", "iteration \(iteration): \(first ?? "no line")")
            usleep(UInt32.random(in: 0...20_000))
            child.kill(SIGKILL)
            let status = try await child.wait(timeout: 20)
            let lines = try await child.readToEnd(timeout: 20)
            try #require(status == .signaled(SIGKILL), "iteration \(iteration): \(status), output \(lines)")
            #expect(!lines.contains { $0.hasPrefix("error") }, "iteration \(iteration): \(lines)")
            acknowledged += lines.filter { $0.hasPrefix("ack ") }.count

            // Every value opens with one key, the same for all of them: the file was replaced whole.
            var opening: Int?
            for candidate in [current, 1 - current] {
                let copy = dir.file("check-\(iteration)-\(candidate).json")
                try FileManager.default.copyItem(at: url, to: copy)
                let store = try openFresh(copy, options: Defaults.Options(encryptionKey: .file(keyFiles[candidate])))
                store.onError = { _ in }  // a mismatch is asserted where it is thrown
                var read: [String] = []
                for key in secrets {
                    do {
                        read.append(try store.value(for: key))
                    } catch {
                        #expect(error.code == .encryptionKeyMismatch, "iteration \(iteration): \(error)")
                    }
                }
                if read.count == secrets.count {
                    #expect(read == (0..<10).map { "secret-\($0)" }, "iteration \(iteration)")
                    opening = candidate
                    break
                }
                #expect(read.isEmpty, "iteration \(iteration): key \(candidate) opened \(read.count) of 10 values")
            }
            let found = try #require(opening, "iteration \(iteration): neither key opens the values")
            if found != current { switched += 1 }
            current = found
        }
        testLog(
            "rekey crash test: \(Self.kills) kills, \(acknowledged) rotations acknowledged, \(switched) key changes seen"
        )
        #expect(switched > 0, "no kill landed after a rotation: the test did not test rotation")
    }
}
