import CodableDefaults
import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client of an etcd 3.4+ cluster, speaking its JSON gateway (`/v3/kv/*`, `/v3/watch`, `/v3/auth/*`) over
/// HTTP or HTTPS.
///
/// The client is `Sendable`: call it from any thread or task, concurrently. Every call comes in two forms: one that
/// blocks the calling thread until the answer (for the store's synchronous ``CodableDefaults/Storage`` methods) and an
/// `async` one that waits without blocking its task's thread. A call goes to one endpoint at a time: first the one that
/// answered last, then, when that one does not answer (connection refused, timed out, host not found, connection lost,
/// or etcd says it is unavailable, gRPC code 14, or gave up on the request under load, gRPC codes 1 and 4), the next
/// ones in the order given. The endpoint that answered is remembered for the next call. A call that fails over after
/// its request was sent may be applied twice (a put writes the same value again; a transaction's compares then fail on
/// its own first write, so the caller re-reads).
///
/// With a user name and password, the client authenticates (`/v3/auth/authenticate`) before its first call and
/// sends the token in the `Authorization` header of every call; when etcd says the token is invalid (it
/// expired, or the member restarted), the client authenticates again once and repeats the call.
///
/// `https://` endpoints are checked against the system's trust store, or the authorities of ``tls`` (``EtcdTLS``, which
/// also gives the client certificate a cluster may require; not with musl). On Apple platforms every call and the
/// watch go through `URLSession`, which answers the handshake with ``tls`` (`AppleTLS`; App Transport Security applies
/// to it alike; an `http://` endpoint needs an exception in the app's `Info.plist`). On Linux with glibc the client does not use `URLSession`:
/// swift-corelibs-foundation's stops the process when an answer ends with an HTTP trailer (swift-corelibs-foundation
/// issue 5285: a `fatalError` in every release up to Swift 6.3.x; after that, an error that loses the answer). Instead,
/// `http://` endpoints' calls and watches are spoken in HTTP/1.0 over a socket (``PlainHTTP``, whose calls keep their
/// connections alive between them in ``PlainConnectionPool``, and ``PlainWatchConnection``: an HTTP/1.0 answer has no
/// trailer, and a socket read by a thread of its own waiting in `poll` costs nothing while quiet), and `https://`
/// endpoints' calls and watches go through libcurl, the library `URLSession` speaks through there, called directly
/// (``CurlHTTP``, ``CurlWatch``), which takes a trailer as the end of the answer it is, and ends them before the
/// process's exit-time cleanup (``CurlTransfers``). Trailers are real: etcd 3.4's gateway sends one with every error
/// answer over plain HTTP (over TLS it sends that metadata in headers), later gateways (grpc-gateway 1.16 and 2) send
/// them to a request that asks with `TE: trailers`, and a proxy in front of etcd may add one; the tests check errors
/// over HTTPS against etcd 3.4 and against a server whose every answer ends in a trailer. Where libcurl's functions
/// cannot be found in the process, an `https://` endpoint is refused when the client is made
/// (``EtcdError/Code/invalidEndpoint``, saying why). Elsewhere on Linux (musl, the static Linux SDK, where nothing can
/// be looked up at run time) `https://` calls and every watch still go through `URLSession`.
///
/// - Throws: Every call throws ``EtcdError`` (naming the endpoint and quoting etcd); a watch also ends with
///   `CancellationError` when its task is cancelled. A cancelled task's other calls run to their end (bounded
///   by the request timeout) and return their outcome: a committed write is never reported as cancelled.
package final class EtcdClient: Sendable {
    /// The endpoints, in the order given: `scheme://host:port` with no path.
    package let endpoints: [URL]
    /// The TLS files of the `https://` endpoints (``EtcdTLS``), or `nil` for libcurl's defaults.
    package let tls: EtcdTLS?
    #if canImport(Glibc)
        /// The libcurl handles the `https://` calls keep between them, with their connections.
        let curlHandles = CurlHandlePool()
    #endif
    #if !canImport(Darwin)
        /// The connections the `http://` calls keep alive between them.
        let plainConnections = PlainConnectionPool()
    #endif
    /// How long connecting to one endpoint may take before the next endpoint is tried (within ``requestTimeout``;
    /// etcdctl's `--dial-timeout`).
    package let connectTimeout: TimeInterval
    /// How long one request to one endpoint may go without an answer before the next endpoint is tried.
    package let requestTimeout: TimeInterval
    /// How long a watch's connection may stay silent before it is dropped as dead (longer than etcd's
    /// progress-notification interval, 10 minutes by default).
    package let watchIdleTimeout: TimeInterval
    /// The most bytes an answer may take (its body); a larger one is refused with ``EtcdError/Code/badResponse``.
    package let maximumAnswerSize: Int
    private let credentials: Credentials?
    private let session: URLSession
    private let answers: BoundedAnswers
    private let state = Locked(State())

    /// A user name and password of etcd's authentication.
    private struct Credentials: Sendable {
        var user: String
        var password: String
    }

    /// What the client learned from earlier calls.
    private struct State {
        /// The index in `endpoints` of the endpoint that answered last.
        var preferred = 0
        /// The token of the last authentication, when there is one.
        var token: String?
    }

    /// Makes a client of the cluster at `endpoints`. It connects to nothing until its first call.
    ///
    /// - Parameters:
    ///   - endpoints: One or more client URLs of the cluster's members, `http://host:port` or
    ///     `https://host:port` (a path, if any, is ignored).
    ///   - user: The user name to authenticate as, or `nil` when the cluster has no authentication.
    ///   - password: The user's password (required with `user`).
    ///   - tls: The TLS files of the `https://` endpoints (``EtcdTLS``), for calls and watches: through libcurl on
    ///     Linux with glibc, URLSession on Apple platforms; refused with musl.
    ///   - connectTimeout: Seconds connecting to one endpoint may take before the client tries the next endpoint
    ///     (bounded by `requestTimeout`); on Apple platforms the request timeout bounds it.
    ///   - requestTimeout: Seconds a request to one endpoint may wait for its answer before the client tries the
    ///     next endpoint.
    ///   - watchIdleTimeout: Seconds a watch's connection may stay without a message before the watch ends as
    ///     disconnected (keep it above etcd's progress-notification interval, 10 minutes by default).
    ///   - maximumAnswerSize: The most bytes one answer, or one message of a watch, may take: the client never
    ///     holds more for one call, whatever a server sends.
    /// - Throws: ``EtcdError`` with ``EtcdError/Code/invalidEndpoint`` when `endpoints` is empty or one is not an
    ///   `http(s)://` URL with a host and, if it names one, a port in 1...65535; or, on Linux with glibc, when one
    ///   is `https://` and libcurl's functions cannot be found in the process; when `tls` names a file that cannot
    ///   be read or is not PEM, a certificate without its key or a key without its certificate; on Apple platforms,
    ///   when `tls` names PEM files of a client certificate and key (`EtcdTLS.clientIdentity` takes their place);
    ///   with musl, when `tls` is given.
    package init(
        endpoints: [String], user: String? = nil, password: String? = nil, tls: EtcdTLS? = nil,
        connectTimeout: TimeInterval = 2, requestTimeout: TimeInterval = 5, watchIdleTimeout: TimeInterval = 900,
        maximumAnswerSize: Int = 256 << 20
    ) throws(EtcdError) {
        guard !endpoints.isEmpty else { throw EtcdError(.invalidEndpoint, message: "no endpoint given") }
        if let tls {
            try tls.check()
            #if !canImport(Glibc) && !canImport(Security)
                throw EtcdError(
                    .invalidEndpoint,
                    message: "TLS files (--cacert, --cert, --key) are taken on Linux with glibc and Apple platforms")
            #endif
        }
        var urls: [URL] = []
        for text in endpoints {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty
            else {
                throw EtcdError(
                    .invalidEndpoint, endpoint: text, message: "expected http://host:port or https://host:port")
            }
            // A port out of range must never reach a socket, which would take it modulo 65536 (and send the
            // credentials to another port).
            if let port = url.port, !(1...65535).contains(port) {
                throw EtcdError(.invalidEndpoint, endpoint: text, message: "the port \(port) is not in 1...65535")
            }
            var components = URLComponents()
            components.scheme = scheme
            components.host = host
            components.port = url.port
            guard let base = components.url else {
                throw EtcdError(.invalidEndpoint, endpoint: text, message: "cannot make a URL of its host and port")
            }
            #if canImport(Glibc)
                // Refused now, with the reason, rather than at every call (see ``CurlHTTP``).
                if scheme == "https", let reason = CurlHTTP.unavailableReason {
                    throw EtcdError(.invalidEndpoint, endpoint: text, message: reason)
                }
            #endif
            urls.append(base)
        }
        self.endpoints = urls
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.watchIdleTimeout = watchIdleTimeout
        self.credentials = user.map { Credentials(user: $0, password: password ?? "") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout
        // The request timeout is an idle one (data arriving restarts it): the resource timeout bounds a call as a
        // whole, as the socket path's deadline does.
        configuration.timeoutIntervalForResource = requestTimeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        self.maximumAnswerSize = maximumAnswerSize
        answers = BoundedAnswers(limit: maximumAnswerSize, tls: tls)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: answers, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
        #if canImport(Glibc)
            CurlHTTP.drain(curlHandles)
        #endif
        #if !canImport(Darwin)
            plainConnections.drain()
        #endif
    }

    #if canImport(Glibc)
        /// How many connections the `https://` calls opened (each of the others reused one a call before left open),
        /// and how many wait idle for the next call.
        package var httpsConnections: (opened: Int, idle: Int) {
            (curlHandles.connectionsOpened, curlHandles.idleCount)
        }
    #endif
    #if !canImport(Darwin)
        /// How many connections the `http://` calls opened (each of the others reused one a call before left open),
        /// and how many wait idle for the next call.
        package var httpConnections: (opened: Int, idle: Int) {
            (plainConnections.connectionsOpened, plainConnections.idleCount)
        }
    #endif

    /// The endpoint the next call tries first: the one that answered last.
    package var preferredEndpoint: URL { endpoints[state.withLock { $0.preferred }] }

    /// Makes `endpoint` the one the next call tries first.
    func remember(_ endpoint: URL) {
        guard let index = endpoints.firstIndex(of: endpoint) else { return }
        state.withLock { $0.preferred = index }
    }

    // MARK: - Calls

    /// Posts `body` to `path` on the endpoints in failover order and decodes the answer of the first that answers.
    ///
    /// Blocks the calling thread until the answer (see ``post(_:_:_:token:as:)``).
    func call<Answer: WireDecodable>(_ path: String, _ body: some WireEncodable, as _: Answer.Type) throws -> Answer {
        let data = Wire.encode(body)
        return try withFailover { endpoint in
            try self.authenticatedPost(endpoint, path, data, as: Answer.self)
        }
    }

    /// Runs `attempt` on each endpoint in failover order until one answers, remembers that one, and returns its
    /// result. An ``EtcdError`` saying the endpoint did not answer moves on to the next; any other error is thrown.
    ///
    /// - Throws: ``EtcdError/Code/unreachable`` listing every endpoint's failure when none answered.
    func withFailover<Result>(_ attempt: (URL) throws -> Result) throws -> Result {
        var failures: [EtcdError.EndpointFailure] = []
        for index in failoverOrder() {
            do {
                return answered(index, try attempt(endpoints[index]))
            } catch let error as EtcdError where error.isEndpointDown {
                failures.append(.init(endpoint: endpoints[index].absoluteString, reason: error.message))
            }
        }
        throw Self.noneAnswered(failures)
    }

    /// ``withFailover(_:)`` for an attempt that is `async` (a watch).
    func withFailover<Result>(_ attempt: (URL) async throws -> Result) async throws -> Result {
        var failures: [EtcdError.EndpointFailure] = []
        for index in failoverOrder() {
            do {
                return answered(index, try await attempt(endpoints[index]))
            } catch let error as EtcdError where error.isEndpointDown {
                failures.append(.init(endpoint: endpoints[index].absoluteString, reason: error.message))
            }
        }
        throw Self.noneAnswered(failures)
    }

    /// The indexes of `endpoints` in the order a call tries them: the one that answered last first.
    private func failoverOrder() -> [Int] {
        let first = state.withLock { $0.preferred }
        return (0..<endpoints.count).map { (first + $0) % endpoints.count }
    }

    /// Remembers the endpoint at `index` as the one that answered; returns `result`.
    private func answered<Result>(_ index: Int, _ result: Result) -> Result {
        state.withLock { $0.preferred = index }
        return result
    }

    /// The error of a call that no endpoint answered.
    private static func noneAnswered(_ failures: [EtcdError.EndpointFailure]) -> EtcdError {
        EtcdError(.unreachable, message: "tried \(failures.count) endpoints", failures: failures)
    }

    /// Posts to one endpoint with the current token (authenticating first when there is none), and once more
    /// with a new token when etcd says the token is invalid.
    private func authenticatedPost<Answer: WireDecodable>(
        _ endpoint: URL, _ path: String, _ body: Data, as _: Answer.Type
    ) throws -> Answer {
        let token = try currentToken(at: endpoint)
        do {
            return try post(endpoint, path, body, token: token, as: Answer.self)
        } catch let error as EtcdError where token != nil && error.isInvalidToken {
            let renewed = try authenticate(at: endpoint)
            return try post(endpoint, path, body, token: renewed, as: Answer.self)
        }
    }

    /// The token to send: `nil` without credentials; the one in hand; or a new one from `endpoint`.
    func currentToken(at endpoint: URL) throws -> String? {
        guard credentials != nil else { return nil }
        if let token = state.withLock({ $0.token }) { return token }
        return try authenticate(at: endpoint)
    }

    /// ``currentToken(at:)``, waited for without blocking the calling task's thread (see ``Offload``).
    func currentToken(at endpoint: URL) async throws -> String? {
        try await Offload.run { try self.currentToken(at: endpoint) }
    }

    /// Authenticates at `endpoint`, keeps the token for later calls and returns it.
    ///
    /// - Throws: ``EtcdError/Code/authenticationFailed`` with etcd's message when etcd refuses (a wrong password,
    ///   an unknown user, authentication not enabled); ``EtcdError`` naming the endpoint when it does not answer.
    @discardableResult
    func authenticate(at endpoint: URL) throws -> String? {
        guard let credentials else { return nil }
        let body = Wire.encode(Wire.AuthenticateRequest(name: credentials.user, password: credentials.password))
        let answer: Wire.AuthenticateResponse
        do {
            answer = try post(endpoint, "/v3/auth/authenticate", body, token: nil, as: Wire.AuthenticateResponse.self)
        } catch var error as EtcdError where error.code == .server {
            error.code = .authenticationFailed
            throw error
        }
        guard let token = answer.token, !token.isEmpty else {
            throw EtcdError(
                .badResponse, endpoint: endpoint.absoluteString, message: "/v3/auth/authenticate gave no token")
        }
        state.withLock { $0.token = token }
        return token
    }

    /// ``authenticate(at:)``, waited for without blocking the calling task's thread (see ``Offload``).
    @discardableResult
    func authenticate(at endpoint: URL) async throws -> String? {
        try await Offload.run { try self.authenticate(at: endpoint) }
    }

    /// One POST to one endpoint: the answer decoded, or etcd's error as an ``EtcdError``.
    ///
    /// Blocks the calling thread until the answer or `requestTimeout`, and needs no other thread that a caller might
    /// hold: so the store's synchronous calls are safe from any thread, Swift's cooperative pool included. On Linux
    /// `http://` endpoints are spoken to in HTTP/1.0 over a socket kept alive between calls, on the calling thread, and
    /// `https://` ones with libcurl on the calling thread (``PlainHTTP`` and ``CurlHTTP`` say why not URLSession). On
    /// Apple platforms every endpoint goes through URLSession, whose answer arrives on the session's own delegate
    /// queue: so there every call and the watch take one path, which App Transport Security governs (an `http://`
    /// endpoint needs an exception in the app's `Info.plist`), and which watchOS allows (it refuses plain sockets to
    /// most apps).
    private func post<Answer: WireDecodable>(
        _ endpoint: URL, _ path: String, _ body: Data, token: String?, as _: Answer.Type
    ) throws -> Answer {
        let (data, status) = try exchange(endpoint, path, body, token: token)
        guard status == 200 else { throw EtcdError.answer(data, status: status, endpoint: endpoint, path: path) }
        do {
            return try Wire.decoder().decode(Answer.self, from: data)
        } catch {
            throw EtcdError.undecodable(data, path: path, endpoint: endpoint, error: error)
        }
    }

    /// Sends one POST to `endpoint` and waits for its answer: the body and the HTTP status.
    private func exchange(_ endpoint: URL, _ path: String, _ body: Data, token: String?) throws -> (Data, Int) {
        #if canImport(Glibc)
            if endpoint.scheme == "https" {
                var headers = [("Content-Type", "application/json")]
                if let token { headers.append(("Authorization", token)) }
                let url = endpoint.appendingPathComponent(String(path.dropFirst())).absoluteString
                let answer = try CurlHTTP.post(
                    url: url, body: body, headers: headers, tls: tls, pool: curlHandles, connectTimeout: connectTimeout,
                    timeout: requestTimeout,
                    maximumAnswerSize: maximumAnswerSize, endpoint: endpoint.absoluteString)
                return (answer.body, answer.status)
            }
        #endif
        #if !canImport(Darwin)
            if endpoint.scheme == "http", let host = endpoint.host {
                var headers = [("Content-Type", "application/json")]
                if let token { headers.append(("Authorization", token)) }
                let answer = try PlainHTTP.post(
                    host: host, port: endpoint.port ?? 80, path: path, body: body, headers: headers,
                    connectTimeout: connectTimeout, timeout: requestTimeout, maximumAnswerSize: maximumAnswerSize,
                    endpoint: endpoint.absoluteString, pool: plainConnections)
                return (answer.body, answer.status)
            }
        #endif
        let request = makeRequest(endpoint, path, body, token: token, timeout: requestTimeout)
        let outcome = Locked<BoundedAnswers.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        // The session calls back on its own delegate queue and always calls back: with the answer, or with an
        // error once the request's timeout has passed.
        answers.start(session.dataTask(with: request)) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        // The delegate set the outcome before signalling.
        guard let result = outcome.withLock({ $0 }) else {
            throw EtcdError(.badResponse, endpoint: endpoint.absoluteString, message: "\(path): no answer recorded")
        }
        do {
            let answer = try result.get()
            return (answer.body, answer.status)
        } catch let error as BoundedAnswers.Untrusted {
            throw EtcdError(.unreachable, endpoint: endpoint.absoluteString, message: error.reason)
        } catch let error as BoundedAnswers.TooLarge {
            throw EtcdError(
                .badResponse, endpoint: endpoint.absoluteString,
                message: "\(path): the answer is over \(error.limit) bytes, more than etcd sends")
        } catch {
            throw EtcdError.connection(error, endpoint: endpoint)
        }
    }

    /// A POST of `body` (JSON) to `path` of `endpoint`, with the token if any.
    func makeRequest(_ endpoint: URL, _ path: String, _ body: Data, token: String?, timeout: TimeInterval) -> URLRequest
    {
        var request = URLRequest(url: endpoint.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = "POST"
        request.httpBody = body
        request.timeoutInterval = timeout
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue(token, forHTTPHeaderField: "Authorization") }
        return request
    }
}
