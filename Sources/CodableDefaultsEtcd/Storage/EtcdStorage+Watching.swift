import CodableDefaults
import Dispatch
import Foundation

/// Outside changes: the watch of the prefix, resumed after a disconnect and reloaded after a compaction, and the
/// wait for etcd to answer again after a write found no endpoint.
extension EtcdStorage {
    package func startWatching(on queue: DispatchQueue, _ signal: @escaping @Sendable () -> Void) {
        state.withLock { state in
            guard state.signal == nil else { return }
            state.signal = (signal, queue)
            state.watch = Task { [weak self] in await self?.watchUntilCancelled() }
        }
    }

    package func stopWatching() {
        let tasks = state.withLock { state in
            defer {
                state.signal = nil
                state.watch = nil
                state.retry = nil
            }
            return [state.watch, state.retry]
        }
        for task in tasks { task?.cancel() }
    }

    /// Starts waiting for etcd to answer again (unless that already runs), then calls ``whenWritableAgain(_:)``'s
    /// action.
    func retryWhenReachable() {
        state.withLock { state in
            guard state.retry == nil else { return }
            state.retry = Task { [weak self] in await self?.waitUntilReachable() }
        }
    }

    /// Asks etcd (a read of the prefix's first key) with a backoff until it answers, then calls the action. An
    /// answer that is an error (etcd refuses the read) is an answer too: the save then reports why it fails.
    func waitUntilReachable() async {
        var backoff: Duration = .milliseconds(100)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: backoff)
                _ = try await client.range(prefix: prefix, limit: 1)
                if localCopy != nil { try await catchUp() }
                break
            } catch is CancellationError {
                return
            } catch let error as EtcdError where !error.isEndpointDown {
                break
            } catch {
                backoff = min(backoff * 2, .seconds(5))  // Still no answer: ask again later.
            }
        }
        let action = state.withLock { state in
            defer { state.retry = nil }
            return Task.isCancelled ? nil : state.writableAgain
        }
        action?()
    }

    /// Watches the prefix from the revision after the last one seen, again and again, until cancelled: after a
    /// disconnect at once and then with a backoff (50 ms doubling to 2 s) while no endpoint answers; after a
    /// compaction, reloading first.
    func watchUntilCancelled() async {
        var backoff: Duration = .milliseconds(50)
        while !Task.isCancelled {
            let start = resumeRevision
            var received = false
            do {
                for try await response in client.watch(prefix: prefix, startRevision: max(start, 1)) {
                    backoff = .milliseconds(50)
                    received = true
                    take(response)
                }
            } catch let error as EtcdError where error.code == .compacted {
                do { try await reloadAfterCompaction() } catch { await pause(&backoff) }
            } catch let error as EtcdError where error.code == .watchDisconnected && received {
                continue  // It worked until now: again at once, from where it was.
            } catch {
                await pause(&backoff)  // Ended before any message too (a server that closes at once): not in a loop.
            }
        }
    }

    /// Sleeps for `backoff` (unless cancelled), and doubles it up to 2 s.
    func pause(_ backoff: inout Duration) async {
        do { try await Task.sleep(for: backoff) } catch { return }  // Cancelled: the loop ends.
        backoff = min(backoff * 2, .seconds(2))
    }

    /// Takes in one message of the watch: the changes newer than what the storage knows, for the store. (Package
    /// access for tests that hand it a message as etcd sends them.)
    package func take(_ response: EtcdWatchResponse) {
        let signal: (@Sendable () -> Void, DispatchQueue)? = state.withLock { state in
            var changed = false
            for event in response.events {
                guard let name = name(of: event.key), event.modRevision > state.revisions[name] ?? 0 else { continue }
                state.revisions[name] = event.modRevision
                var value: [UInt8]?
                state.unreadable[name] = nil
                if event.kind == .put {
                    switch StorageValue.compact(event.value, maxDepth: maxDepth) {
                    case .success(let compact): value = compact
                    case .failure(let error):
                        state.unreadable[name] = error
                    }
                }
                if localCopy != nil { state.known[name] = value }
                if state.snapshot != nil {
                    state.snapshot?[name] = value
                } else {
                    state.pending[name] = Seen(value: value, revision: event.modRevision)
                }
                changed = true
            }
            // A message of events is complete up to its last event's revision, no further: catching up, etcd sends
            // the events in batches of whole revisions, each with the cluster's current revision in its header. A
            // message without events (a progress notification, sent to a watch that has caught up) is complete up
            // to its header's revision.
            state.seen = max(state.seen, response.events.last?.modRevision ?? response.revision)
            return changed ? state.signal : nil
        }
        if localCopy != nil { scheduleLocalCopyWrite() }
        if let (signal, queue) = signal { queue.async(execute: signal) }
    }

    /// Reads the whole prefix again after the watch's revision was compacted, and keeps it as the snapshot the
    /// store takes in next. A read older than a write the storage made meanwhile is read again. A read at a revision
    /// older than the storage knows of (a cluster restored from an older state, below the revisions of the local
    /// copy the store opened from) replaces what the storage knows, and the watch starts again from it.
    ///
    /// A range is linearizable: it reflects every write completed before it was sent. So a read older than a
    /// revision the storage knew before sending it (its own last save's, which the local copy keeps, or the
    /// copy's) is a cluster restored from a backup, not a read that missed a write; only a write made while the
    /// read was under way is read again, and that ends.
    func reloadAfterCompaction() async throws {
        while true {
            let knownBefore = state.withLock { state in max(state.seen, state.revisions.values.max() ?? 0) }
            let range = try await client.range(prefix: prefix)
            let (members, unreadable) = members(of: range.keyValues)
            let signal: (@Sendable () -> Void, DispatchQueue)?? = state.withLock { state in
                if range.revision < knownBefore || range.revision < state.seen {
                    // etcd's history is older than the one the storage knew: its revisions no longer apply, and
                    // the watch waits for a revision etcd has not reached.
                    state.revisions = [:]
                    state.seen = range.revision
                    if let watch = state.watch {
                        watch.cancel()
                        state.watch = Task { [weak self] in await self?.watchUntilCancelled() }
                    }
                } else if state.revisions.values.contains(where: { $0 > range.revision }) {
                    return nil
                }
                state.unreadable = unreadable
                for kv in range.keyValues {
                    guard let name = name(of: kv.key) else { continue }
                    state.revisions[name] = max(state.revisions[name] ?? 0, kv.modRevision)
                }
                state.seen = max(state.seen, range.revision)
                state.pending = [:]
                #if CODABLE_DEFAULTS_TESTING
                    state.compactionReloads += 1
                #endif
                var snapshot: [[UInt8]: [UInt8]] = [:]
                for member in members { snapshot[Array(member.name.utf8)] = member.value }
                if localCopy != nil { state.known = snapshot }
                // Changes still kept in the local copy (etcd refused them for now) stay what the store serves.
                for (name, change) in state.offline { snapshot[name] = change.value }
                state.snapshot = snapshot
                return .some(state.signal)
            }
            guard let signal else { continue }
            if localCopy != nil { scheduleLocalCopyWrite() }
            if let (signal, queue) = signal { queue.async(execute: signal) }
            return
        }
    }
}
