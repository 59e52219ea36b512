import CodableDefaults
import CodableDefaultsEtcd
import Dispatch
import Foundation

extension Tool {
    /// Opens the store kept in etcd at `endpoints` under `prefix`, with the `.manual` save mode.
    ///
    /// The library's initializer is `async`; the tool waits for it on its own thread, the main thread, which is
    /// not one of Swift's cooperative pool, so the wait takes no thread the initializer's task needs.
    ///
    /// - Throws: ``DefaultsError`` (`invalidArgument` for an endpoint that is not a URL; what the initializer
    ///   throws when etcd cannot be read).
    func openEtcd(_ endpoints: [String], prefix: String) throws(DefaultsError) -> Defaults {
        var urls: [URL] = []
        for endpoint in endpoints {
            guard let url = URL(string: endpoint) else {
                throw DefaultsError(.invalidArgument, "--etcd: \(shellQuoted(endpoint)) is not a URL")
            }
            urls.append(url)
        }
        let outcome = OpenOutcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(DefaultsError) {
                outcome.set(.success(try await Defaults(etcd: urls, prefix: prefix, saveMode: .manual)))
            } catch {
                outcome.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        let defaults = try outcome.get()
        etcdLocations[ObjectIdentifier(defaults)] = .etcd(endpoints: endpoints, prefix: prefix)
        return defaults
    }
}

/// The outcome of opening a store on etcd, handed from the opening task to the waiting thread.
private final class OpenOutcome: Sendable {
    private let lock = NSLock()
    private nonisolated(unsafe) var result: Result<Defaults, DefaultsError>?

    /// Records the outcome (before the task signals the waiting thread).
    func set(_ outcome: Result<Defaults, DefaultsError>) {
        lock.withLock { result = outcome }
    }

    /// The outcome (after the task signalled).
    func get() throws(DefaultsError) -> Defaults {
        let outcome = lock.withLock { result }
        guard let outcome else { throw DefaultsError(.invalidArgument, "the etcd store did not open") }
        return try outcome.get()
    }
}
