// The asynchronous forms of the calls that can wait on I/O beyond a save: reloading, reading the history,
// reverting, and `modify`. On a file store they wait for the disk and for other processes' lock; on etcd, for the
// network. Each runs its synchronous form on the store's own serial queue, as `save()`'s asynchronous form does,
// while the calling task is suspended: Swift's cooperative pool keeps its threads for other tasks. Swift chooses
// these forms in `async` code. The rule is in CONTRIBUTING.md ("One rule for sync and async").

import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Defaults {
    /// Runs `work` on the store's queue and returns what it returns, suspending the calling task meanwhile.
    private func onQueue<Value: Sendable>(
        _ work: @escaping @Sendable () throws(DefaultsError) -> Value
    ) async throws(DefaultsError) -> Value {
        let store = store
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Value, DefaultsError>, Never>) in
            store.queue.async {
                do throws(DefaultsError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// ``onQueue(_:)`` for work that throws what a `modify` closure throws.
    func onQueueUntyped<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let store = store
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Value, any Error>, Never>) in
            store.queue.async { continuation.resume(returning: Result { try work() }) }
        }
        return try result.get()
    }

    /// Re-reads the store's data without blocking the calling task's thread: the asynchronous form of
    /// ``reload()``, run on the store's queue.
    ///
    /// - Throws: What ``reload()`` throws.
    public func reload() async throws(DefaultsError) {
        try await onQueue { () throws(DefaultsError) in try self.reload() }
    }

    /// The history of the saves, newest first, without blocking the calling task's thread: the asynchronous form
    /// of ``history()``, run on the store's queue.
    ///
    /// - Throws: What ``history()`` throws.
    public func history() async throws(DefaultsError) -> [HistoryEntry] {
        try await onQueue { () throws(DefaultsError) in try self.history() }
    }

    /// The saves that changed the key `name`, newest first: the asynchronous form of ``history(forKey:)``.
    ///
    /// - Throws: What ``history(forKey:)`` throws.
    public func history(forKey name: String) async throws(DefaultsError) -> [HistoryEntry] {
        try await onQueue { () throws(DefaultsError) in try self.history(forKey: name) }
    }

    /// The saves that changed `key`, newest first: the asynchronous form of ``history(for:)``.
    ///
    /// - Throws: What ``history(for:)`` throws.
    public func history<Value>(for key: Key<Value>) async throws(DefaultsError) -> [HistoryEntry] {
        try await onQueue { () throws(DefaultsError) in try self.history(for: key) }
    }

    /// The asynchronous form of ``revert(toRevision:dryRun:)``, run on the store's queue.
    ///
    /// - Throws: What ``revert(toRevision:dryRun:)`` throws.
    @discardableResult
    public func revert(
        toRevision revision: Int, dryRun: Bool = false
    ) async throws(DefaultsError) -> [HistoryEntry.Change] {
        try await onQueue { () throws(DefaultsError) in try self.revert(toRevision: revision, dryRun: dryRun) }
    }

    /// The asynchronous form of ``revert(forKey:toRevision:dryRun:)``, run on the store's queue.
    ///
    /// - Throws: What ``revert(forKey:toRevision:dryRun:)`` throws.
    @discardableResult
    public func revert(
        forKey name: String, toRevision revision: Int, dryRun: Bool = false
    ) async throws(DefaultsError) -> [HistoryEntry.Change] {
        try await onQueue { () throws(DefaultsError) in
            try self.revert(forKey: name, toRevision: revision, dryRun: dryRun)
        }
    }

    /// The asynchronous form of ``revert(to:dryRun:)``, run on the store's queue.
    ///
    /// - Throws: What ``revert(to:dryRun:)`` throws.
    @discardableResult
    public func revert(to date: Date, dryRun: Bool = false) async throws(DefaultsError) -> [HistoryEntry.Change] {
        try await onQueue { () throws(DefaultsError) in try self.revert(to: date, dryRun: dryRun) }
    }

    /// The asynchronous form of ``revert(forKey:to:dryRun:)``, run on the store's queue.
    ///
    /// - Throws: What ``revert(forKey:to:dryRun:)`` throws.
    @discardableResult
    public func revert(
        forKey name: String, to date: Date, dryRun: Bool = false
    ) async throws(DefaultsError) -> [HistoryEntry.Change] {
        try await onQueue { () throws(DefaultsError) in try self.revert(forKey: name, to: date, dryRun: dryRun) }
    }

    /// The asynchronous form of ``undo(dryRun:)``, run on the store's queue.
    ///
    /// - Throws: What ``undo(dryRun:)`` throws.
    @discardableResult
    public func undo(dryRun: Bool = false) async throws(DefaultsError) -> [HistoryEntry.Change] {
        try await onQueue { () throws(DefaultsError) in try self.undo(dryRun: dryRun) }
    }

    /// The asynchronous form of ``undo(forKey:dryRun:)``, run on the store's queue.
    ///
    /// - Throws: What ``undo(forKey:dryRun:)`` throws.
    @discardableResult
    public func undo(forKey name: String, dryRun: Bool = false) async throws(DefaultsError) -> [HistoryEntry.Change] {
        try await onQueue { () throws(DefaultsError) in try self.undo(forKey: name, dryRun: dryRun) }
    }

    /// One atomic read-modify-write of `key` without blocking the calling task's thread: the asynchronous form of
    /// ``modify(_:_:)``, with the same guarantees. `body` runs on the store's queue (so it is `@Sendable`); it
    /// must not wait for that queue (an `async` save of this store, an observer's delivery).
    ///
    /// - Throws: What ``modify(_:_:)`` throws.
    @discardableResult
    public func modify<Value, Result: Sendable>(
        _ key: Key<Value>, _ body: @escaping @Sendable (inout Value) throws -> Result
    ) async throws -> Result {
        try await onQueueUntyped { try self.modify(key, body) }
    }

    /// The asynchronous form of ``modify(forKey:_:)``; see ``modify(_:_:)-78wz9``.
    ///
    /// - Throws: What ``modify(forKey:_:)`` throws.
    @discardableResult
    public func modify<Result: Sendable>(
        forKey name: String, _ body: @escaping @Sendable (inout JSONValue?) throws -> Result
    ) async throws -> Result {
        try await onQueueUntyped { try self.modify(forKey: name, body) }
    }

    /// The asynchronous form of ``modify(forKeys:_:)``; see ``modify(_:_:)-78wz9``.
    ///
    /// - Throws: What ``modify(forKeys:_:)`` throws.
    @discardableResult
    public func modify<Result: Sendable>(
        forKeys names: [String], _ body: @escaping @Sendable (inout [JSONValue?]) throws -> Result
    ) async throws -> Result {
        try await onQueueUntyped { try self.modify(forKeys: names, body) }
    }
}
