import CodableDefaults
import CodableDefaultsEtcd
import CodableDefaultsTestSupport
import Dispatch
import Foundation
import Observation
import Testing

/// Counts the `onChange` calls of one `withObservationTracking`, and signals each.
private final class TrackedChanges: Sendable {
    private let count = Locked(0)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Tracks what `read` reads; each change of it is counted and signalled.
    init(_ read: () -> Void) {
        withObservationTracking(read) {
            self.count.withLock { $0 += 1 }
            self.semaphore.signal()
        }
    }

    /// How many times `onChange` ran.
    var changes: Int { count.withLock { $0 } }

    /// Waits on a thread of its own for an `onChange` call, up to 30 s. Returns whether it came.
    func wait() async throws -> Bool {
        try await onThread { self.semaphore.wait(timeout: .now() + 30) == .success }
    }
}

/// A service's model: an `@Observable` class whose setting lives in etcd.
@Observable private final class ServiceModel {
    @ObservationIgnored @Persisted var limit: Int

    init(store: Defaults) {
        _limit = Persisted(wrappedValue: 10, key: "limit", store: store)
    }
}

@Suite("Defaults on etcd: Observation", .needsEtcd)
struct EtcdObservationTests {
    @Test func trackedReadsAndAnObservableModelAreToldOfAnotherHandlesChange() async throws {
        try await EtcdServer.with { server in
            let endpoints = server.clientURLs.map { URL(string: $0)! }
            let mine = try await Defaults(etcd: endpoints, prefix: "myservice/", saveMode: .immediate)
            let theirs = try await Defaults(etcd: endpoints, prefix: "myservice/", saveMode: .immediate)
            let model = ServiceModel(store: mine)

            let typed = TrackedChanges { _ = mine[Defaults.Key<Int>("limit", default: 10)] }
            let persisted = TrackedChanges { _ = model.limit }
            let untouched = TrackedChanges { _ = mine.string(forKey: "other") }
            #expect(model.limit == 10)

            theirs.set(25, forKey: "limit")  // Saved in etcd before it returns; mine hears of it through its watch.
            #expect(try await typed.wait())
            #expect(try await persisted.wait())
            #expect(model.limit == 25)
            #expect(mine.integer(forKey: "limit") == 25)
            #expect(typed.changes == 1 && persisted.changes == 1)
            #expect(untouched.changes == 0)

            // A local set through the model is told at once, and reaches the other handle.
            let again = TrackedChanges { _ = model.limit }
            model.limit = 30
            #expect(again.changes == 1)
            let seen = TrackedChanges { _ = theirs.integer(forKey: "limit") }
            if theirs.integer(forKey: "limit") != 30 { #expect(try await seen.wait()) }
            #expect(theirs.integer(forKey: "limit") == 30)
        }
    }
}
