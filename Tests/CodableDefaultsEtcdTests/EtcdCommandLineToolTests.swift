import Foundation
import Testing

@testable import CodableDefaultsTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `codable-defaults` with `arguments` to its end; returns its exit status and output lines.
private func tool(_ arguments: [String]) async throws -> (
    status: CodableDefaultsTestSupport.ExitStatus, output: [String]
) {
    let path = try #require(builtTool?.path, "build the tool first: swift build --product codable-defaults")
    return try await onThread { try runCommand([path] + arguments) }
}

@Suite("codable-defaults --etcd: the tool on a store in a real etcd")
struct EtcdCommandLineToolTests {
    @Test func writeReadKeysAndWatchWorkOnAPrefix() async throws {
        try await EtcdServer.with { server in
            let store = ["--etcd", server.clientURLs.joined(separator: ","), "--prefix", "myservice/"]
            #expect(try await tool(["write"] + store + ["volume", "0.8"]).status == .exited(0))
            #expect(try await tool(["write"] + store + ["name", "--string", "A"]).status == .exited(0))
            #expect(try await server.etcdctl(["get", "--print-value-only", "myservice/volume"]) == "0.8\n")
            #expect(try await tool(["read"] + store + ["volume"]) == (.exited(0), ["0.8"]))
            #expect(
                try await tool(["read"] + store) == (.exited(0), ["{", "  \"name\": \"A\",", "  \"volume\": 0.8", "}"]))
            #expect(try await tool(["keys"] + store) == (.exited(0), ["name", "volume"]))
            #expect(try await tool(["read"] + store + ["missing"]).status == .exited(3))

            let path = try #require(builtTool?.path)
            let lines = try await onThread { () throws -> [String] in
                let watch = try ChildProcess(path, ["watch"] + store + ["volume", "--initial"])
                var lines = [try watch.readLine(timeout: 30) ?? "end"]
                // The watch started from the revision it read: a change made now is not missed.
                let client = try ChildProcess(path, ["write"] + store + ["volume", "0.25"])
                lines.append("\(try client.wait(timeout: 30))")
                lines.append(try watch.readLine(timeout: 30) ?? "end")
                watch.kill(SIGTERM)
                lines.append("\(try watch.wait(timeout: 30))")
                return lines
            }
            #expect(lines == ["volume\t0.8", "exit status 0", "volume\t0.25", "exit status 0"])
        }
    }

    @Test func aPrefixWithoutEtcdOrEtcdWithoutAPrefixIsAUsageError() async throws {
        #expect(try await tool(["read", "--prefix", "p/", "volume"]).status == .exited(2))
        #expect(try await tool(["read", "--etcd", "http://127.0.0.1:1", "volume"]).status == .exited(2))
        #expect(
            try await tool(["read", "--etcd", "http://127.0.0.1:1", "--suite", "s", "--prefix", "p/"]).status
                == .exited(2))
    }
}
