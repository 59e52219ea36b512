import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Foundation

/// Iterates a watch in a task of its own and keeps what it saw: the events, and the error it ended with.
final class WatchRecorder: Sendable {
    private let state = Locked<(responses: [EtcdWatchResponse], error: (any Error)?, ended: Bool)>(([], nil, false))
    private let task: Task<Void, Never>

    /// Starts iterating `watch`.
    init(_ watch: AsyncThrowingStream<EtcdWatchResponse, any Error>) {
        let state = self.state
        task = Task {
            do {
                for try await response in watch {
                    state.withLock { $0.responses.append(response) }
                }
                state.withLock { $0.ended = true }
            } catch {
                state.withLock {
                    $0.error = error
                    $0.ended = true
                }
            }
        }
    }

    deinit { task.cancel() }

    /// The events so far.
    var events: [EtcdEvent] { state.withLock { $0.responses.flatMap(\.events) } }

    /// The responses so far (with progress notifications, which have no events).
    var responses: [EtcdWatchResponse] { state.withLock { $0.responses } }

    /// Waits until a response satisfies `condition` (or the watch ended), up to `timeout` seconds; returns it.
    func waitForResponse(timeout: Double = 120, where condition: @escaping (EtcdWatchResponse) -> Bool) async throws
        -> EtcdWatchResponse?
    {
        _ = try await eventually(timeout: timeout) {
            state.withLock { $0.responses.contains(where: condition) || $0.ended }
        }
        return responses.first(where: condition)
    }

    /// The error the watch ended with, if it ended with one.
    var error: (any Error)? { state.withLock { $0.error } }

    /// Waits until at least `count` events arrived (or the watch ended), up to `timeout` seconds; returns the
    /// events.
    func waitForEvents(_ count: Int, timeout: Double = 120) async throws -> [EtcdEvent] {
        _ = try await eventually(timeout: timeout) {
            state.withLock { $0.responses.reduce(0) { $0 + $1.events.count } >= count || $0.ended }
        }
        return events
    }

    /// Waits until the watch ended, up to `timeout` seconds; returns its error (`nil` if it did not end with one
    /// or did not end in time).
    func waitForEnd(timeout: Double = 120) async throws -> (any Error)? {
        _ = try await eventually(timeout: timeout) { state.withLock { $0.ended } }
        return error
    }

    /// Ends the watch.
    func cancel() { task.cancel() }
}

/// The UTF-8 bytes of a text.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
