import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One change of one key, seen by a watch.
package struct EtcdEvent: Sendable, Hashable {
    /// What kind of change.
    package enum Kind: Sendable, Hashable {
        /// The key was set (created or changed).
        case put
        /// The key was removed.
        case delete
    }

    /// What kind of change.
    package var kind: Kind
    /// The key changed.
    package var key: [UInt8]
    /// The new value (empty for a delete).
    package var value: [UInt8]
    /// The revision of the change.
    package var modRevision: Int64

    /// Makes an event.
    package init(kind: Kind, key: [UInt8], value: [UInt8], modRevision: Int64) {
        self.kind = kind
        self.key = key
        self.value = value
        self.modRevision = modRevision
    }
}

/// The events of one message of a watch: every change of one or more whole revisions (the changes of one
/// transaction come together), in revision order; or none, for etcd's progress notification.
package struct EtcdWatchResponse: Sendable, Equatable {
    /// The changes, in revision order (empty in a progress notification).
    package var events: [EtcdEvent]
    /// The cluster's revision when etcd sent them (its header's). A message without events (a progress
    /// notification) says the watch has delivered every change of the prefix up to this revision. A message with
    /// events says so only up to its last event's revision: a watch catching up gets its events in batches of
    /// whole revisions, each message with the cluster's current revision.
    package var revision: Int64
}

extension EtcdClient {
    /// The changes of every key that starts with `prefix`, from revision `startRevision` on (`0`: from the next
    /// change on), as they happen.
    ///
    /// The watch connects to the endpoints in failover order (the first that accepts the watch is remembered).
    /// It sees every change of the prefix from `startRevision`, in revision order, each once. It never ends by
    /// itself: it throws when it cannot go on, and the caller decides what next:
    /// - ``EtcdError/Code/compacted`` when `startRevision` is older than etcd keeps (`etcdctl compact`): reload
    ///   with `range(prefix:limit:)` and watch again from that range's `revision + 1`;
    /// - ``EtcdError/Code/watchDisconnected`` when its connection ended (the member stopped): watch again from
    ///   the last revision seen + 1 (another endpoint is tried if that one is down), and no change is missed;
    /// - ``EtcdError/Code/unreachable`` when no endpoint accepted it; ``EtcdError/Code/watchCanceled`` or
    ///   ``EtcdError/Code/server`` with etcd's reason; ``EtcdError/Code/authenticationFailed``.
    ///
    /// An invalid token is renewed once, as for the other calls. etcd is asked for progress notifications
    /// (responses without events, every 10 minutes by default) so that a silent connection is a dead one: after
    /// ``watchIdleTimeout`` without a message, the watch ends with ``EtcdError/Code/watchDisconnected``. Ending
    /// the iteration (or cancelling its task) closes the connection.
    ///
    /// - Parameters:
    ///   - prefix: The keys to watch (every key when empty).
    ///   - startRevision: The first revision to report; `0` for "changes after now".
    /// - Returns: The changes, a message at a time. It is `Sendable`; iterate it from one task.
    package func watch(prefix: [UInt8], startRevision: Int64) -> AsyncThrowingStream<EtcdWatchResponse, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: EtcdWatchResponse.self)
        let task = Task {
            do {
                try await self.runWatch(prefix: prefix, startRevision: startRevision, continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Runs the watch on the first endpoint that accepts it, until it fails.
    private func runWatch(
        prefix: [UInt8], startRevision: Int64, _ output: AsyncThrowingStream<EtcdWatchResponse, any Error>.Continuation
    ) async throws {
        let request = Wire.WatchRequest(
            createRequest: Wire.WatchCreateRequest(
                key: Self.rangeStart(prefix), rangeEnd: WireBytes(Self.rangeEnd(of: prefix)),
                startRevision: WireInt64(startRevision)))
        let body = Wire.encode(request)
        try await withFailover { endpoint in
            try await self.watch(at: endpoint, body, output, renewToken: true)
        }
    }

    /// Runs the watch on `endpoint`. Before etcd accepted it, a failure to connect says the endpoint is down (the
    /// next is tried); after, the end of the connection is ``EtcdError/Code/watchDisconnected``.
    private func watch(
        at endpoint: URL, _ body: Data, _ output: AsyncThrowingStream<EtcdWatchResponse, any Error>.Continuation,
        renewToken: Bool
    ) async throws {
        let token = try await currentToken(at: endpoint)
        let connection = openWatch(endpoint, body, token: token)
        var accepted = false
        do {
            try await withTaskCancellationHandler {
                for try await message in connection.messages {
                    if let error = message.error {
                        throw EtcdError(
                            .server, endpoint: endpoint.absoluteString,
                            message: "/v3/watch: \(error.message ?? error.error ?? "an error with no message")",
                            grpcCode: error.code)
                    }
                    guard let result = message.result else { continue }
                    if result.canceled == true {
                        throw Self.cancellation(result, endpoint: endpoint)
                    }
                    if result.created == true {
                        accepted = true
                        remember(endpoint)
                        continue
                    }
                    // Events, or a progress notification (no events: only the revision moved on).
                    let events = (result.events ?? []).map(EtcdEvent.init(wire:))
                    output.yield(EtcdWatchResponse(events: events, revision: result.header?.revision?.value ?? 0))
                }
                throw EtcdError(
                    .watchDisconnected, endpoint: endpoint.absoluteString, message: "the server ended the stream")
            } onCancel: {
                connection.cancel()
            }
        } catch let error as EtcdError where error.isInvalidToken && token != nil && renewToken {
            try await authenticate(at: endpoint)
            try await watch(at: endpoint, body, output, renewToken: false)
        } catch let error as EtcdError where accepted && error.code == .unreachable {
            if Task.isCancelled { throw CancellationError() }
            throw EtcdError(.watchDisconnected, endpoint: endpoint.absoluteString, message: error.message)
        } catch let error as EtcdError where error.code == .unreachable && Task.isCancelled {
            throw CancellationError()
        }
    }

    /// Starts the `/v3/watch` request to `endpoint`. On Linux, an `http://` endpoint's watch is HTTP/1.0 over a
    /// socket (``PlainWatchConnection`` says why), and on Linux with glibc an `https://` one goes through libcurl
    /// (``CurlWatch``), as the calls do, with the same TLS files; any other through URLSession (``WatchConnection``).
    private func openWatch(_ endpoint: URL, _ body: Data, token: String?) -> any WatchTransport {
        #if !canImport(Darwin)
            if endpoint.scheme == "http", let host = endpoint.host {
                return PlainWatchConnection(
                    endpoint: endpoint, host: host, port: endpoint.port ?? 80, body: body, token: token,
                    connectTimeout: connectTimeout, requestTimeout: requestTimeout, idleTimeout: watchIdleTimeout,
                    maximumMessageSize: maximumAnswerSize
                )
            }
        #endif
        #if canImport(Glibc)
            if CurlHTTP.unavailableReason == nil {
                var headers = [("Content-Type", "application/json")]
                if let token { headers.append(("Authorization", token)) }
                return CurlWatch(
                    url: endpoint.appendingPathComponent("v3/watch").absoluteString, body: body, headers: headers,
                    tls: tls, connectTimeout: min(connectTimeout, requestTimeout), idleTimeout: watchIdleTimeout,
                    maximumMessageSize: maximumAnswerSize, endpoint: endpoint)
            }
        #endif
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = watchIdleTimeout
        configuration.timeoutIntervalForResource = .infinity
        configuration.urlCache = nil
        let request = makeRequest(endpoint, "/v3/watch", body, token: token, timeout: watchIdleTimeout)
        return WatchConnection(
            request: request, endpoint: endpoint, tls: tls, configuration: configuration,
            maximumMessageSize: maximumAnswerSize)
    }

    /// The error of a watch etcd canceled: compaction, or its reason.
    private static func cancellation(_ result: Wire.WatchResult, endpoint: URL) -> EtcdError {
        if let compacted = result.compactRevision?.value, compacted > 0 {
            return EtcdError(
                .compacted, endpoint: endpoint.absoluteString, message: "etcd canceled the watch",
                compactRevision: compacted)
        }
        let reason = result.cancelReason ?? "no reason given"
        return EtcdError(
            .watchCanceled, endpoint: endpoint.absoluteString, message: reason,
            grpcCode: reason.contains("Unauthenticated") ? EtcdError.grpcUnauthenticated : nil)
    }
}

extension EtcdEvent {
    /// The event of the gateway's JSON (a PUT has no "type": it is the default).
    init(wire: Wire.Event) {
        let keyValue = wire.kv.map(EtcdKeyValue.init(wire:))
        self.init(
            kind: wire.type == "DELETE" ? .delete : .put, key: keyValue?.key ?? [], value: keyValue?.value ?? [],
            modRevision: keyValue?.modRevision ?? 0)
    }
}
