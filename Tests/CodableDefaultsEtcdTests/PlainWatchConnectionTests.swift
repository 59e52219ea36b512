import CodableDefaultsEtcd
import Dispatch
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A watch of an `http://` endpoint (on Linux, HTTP/1.0 over a socket read by a thread of its own) against a
/// server that takes the connection and never answers: the idle timeout ends it, and the cancellation of its task
/// closes its connection at once.
@Suite struct PlainWatchConnectionTests {
    /// A server on 127.0.0.1 that accepts one connection, reads what comes until the client closes it, and never
    /// answers.
    private final class SilentServer: @unchecked Sendable {
        let url: String
        /// Signalled when the connection was accepted.
        let accepted = DispatchSemaphore(value: 0)
        /// Signalled when the client closed the connection.
        let closed = DispatchSemaphore(value: 0)
        private let listener: Int32

        init() throws {
            listener = tcpSocket()
            guard listener >= 0, bindLoopback(listener, port: 0) == 0, listen(listener, 8) == 0,
                let port = boundPort(listener)
            else { throw PlainWatchTestError(description: "cannot listen (errno \(errno))") }
            url = "http://127.0.0.1:\(port)"
            Thread.detachNewThread { [listener, accepted, closed] in
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                accepted.signal()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while buffer.withUnsafeMutableBytes({ read(connection, $0.baseAddress!, $0.count) }) > 0 {}
                close(connection)
                closed.signal()
            }
        }

        deinit {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private struct PlainWatchTestError: Error, CustomStringConvertible {
        var description: String
    }

    @Test func aSilentWatchEndsAfterTheIdleTimeout() async throws {
        let server = try SilentServer()
        let client = try EtcdClient(endpoints: [server.url], requestTimeout: 1, watchIdleTimeout: 1)
        let start = ContinuousClock.now
        let error = await #expect(throws: EtcdError.self) {
            for try await _ in client.watch(prefix: Array("p/".utf8), startRevision: 1) {}
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.code == .unreachable, "\(String(describing: error))")
        #expect(error?.description.contains("timed out") == true, "\(String(describing: error))")
        // At least the idle timeout; the upper bound only guards against a hang (a full run on two cores may keep the
        // watch's task from a thread for long).
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(300), "\(elapsed)")
        withExtendedLifetime(server) {}
    }

    @Test func endingAWatchClosesItsConnectionAtOnce() async throws {
        let server = try SilentServer()
        let client = try EtcdClient(endpoints: [server.url], watchIdleTimeout: 600)
        let watch = Task {
            for try await _ in client.watch(prefix: Array("p/".utf8), startRevision: 1) {}
        }
        let accepted = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: server.accepted.wait(timeout: .now() + 120)) }
        }
        #expect(accepted == .success, "the watch connected")
        watch.cancel()
        _ = await watch.result
        let closed = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: server.closed.wait(timeout: .now() + 120)) }
        }
        #expect(closed == .success, "the watch's connection is still open long after its task was cancelled")
    }
}
