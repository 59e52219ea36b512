import CodableDefaults
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A client of an etcd 3.4+ cluster, speaking its JSON gateway (`/v3/kv/*`, `/v3/watch`, `/v3/auth/*`) over
/// HTTP or HTTPS with `URLSession`.
///
/// The client is `Sendable`: call it from any task, concurrently. Every call is `async` and goes to one endpoint
/// at a time: first the one that answered last, then, when that one does not answer (connection refused, timed
/// out, host not found, connection lost, or etcd says it is unavailable, gRPC code 14, or gave up on the request
/// under load, gRPC codes 1 and 4), the next ones in the order given. The endpoint that answered is remembered for the next call. A call that fails over after its
/// request was sent may be applied twice (a put writes the same value again; a transaction's compares then
/// fail on its own first write, so the caller re-reads).
///
/// With a user name and password, the client authenticates (`/v3/auth/authenticate`) before its first call and
/// sends the token in the `Authorization` header of every call; when etcd says the token is invalid (it
/// expired, or the member restarted), the client authenticates again once and repeats the call.
///
/// `https://` endpoints are checked against the system's trust store and spoken to with `URLSession`.
/// `http://` endpoints' calls are spoken in HTTP/1.0 over a socket, and their watches with `URLSession`: on
/// Linux, swift-corelibs-foundation's `URLSession` stops the process on an HTTP trailer (swift-corelibs-foundation
/// issue 5285), etcd 3.4's plain-HTTP gateway sends one with every error answer, and HTTP/1.0 answers have none.
/// Over HTTPS etcd's error answers carry no trailer (etcd 3.4 puts that metadata in headers; later gateways send
/// trailers only to a request that asks for them with `TE: trailers`, which `URLSession` does not send), so an
/// error over HTTPS (a wrong password, a permission denied) is an ``EtcdError`` like any other: the tests check
/// it against etcd 3.4 served over TLS.
///
/// - Throws: Every call throws ``EtcdError`` (naming the endpoint and quoting etcd), or `CancellationError`
///   when its task is cancelled.
package final class EtcdClient: Sendable {
    /// The endpoints, in the order given: `scheme://host:port` with no path.
    package let endpoints: [URL]
    /// How long one request to one endpoint may go without an answer before the next endpoint is tried.
    package let requestTimeout: TimeInterval
    /// How long a watch's connection may stay silent before it is dropped as dead (longer than etcd's
    /// progress-notification interval, 10 minutes by default).
    package let watchIdleTimeout: TimeInterval
    private let credentials: Credentials?
    private let session: URLSession
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
    ///   - requestTimeout: Seconds a request to one endpoint may wait for its answer before the client tries the
    ///     next endpoint.
    ///   - watchIdleTimeout: Seconds a watch's connection may stay without a message before the watch ends as
    ///     disconnected (keep it above etcd's progress-notification interval, 10 minutes by default).
    /// - Throws: ``EtcdError`` with ``EtcdError/Code/invalidEndpoint`` when `endpoints` is empty or one is not an
    ///   `http(s)://` URL with a host.
    package init(
        endpoints: [String], user: String? = nil, password: String? = nil, requestTimeout: TimeInterval = 5,
        watchIdleTimeout: TimeInterval = 900
    ) throws(EtcdError) {
        guard !endpoints.isEmpty else { throw EtcdError(.invalidEndpoint, message: "no endpoint given") }
        var urls: [URL] = []
        for text in endpoints {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty
            else {
                throw EtcdError(
                    .invalidEndpoint, endpoint: text, message: "expected http://host:port or https://host:port")
            }
            var components = URLComponents()
            components.scheme = scheme
            components.host = host
            components.port = url.port
            guard let base = components.url else {
                throw EtcdError(.invalidEndpoint, endpoint: text, message: "cannot make a URL of its host and port")
            }
            urls.append(base)
        }
        self.endpoints = urls
        self.requestTimeout = requestTimeout
        self.watchIdleTimeout = watchIdleTimeout
        self.credentials = user.map { Credentials(user: $0, password: password ?? "") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// The endpoint the next call tries first: the one that answered last.
    package var preferredEndpoint: URL { endpoints[state.withLock { $0.preferred }] }

    /// Makes `endpoint` the one the next call tries first.
    func remember(_ endpoint: URL) {
        guard let index = endpoints.firstIndex(of: endpoint) else { return }
        state.withLock { $0.preferred = index }
    }

    // MARK: - Calls

    /// Posts `body` to `path` on the endpoints in failover order and decodes the answer of the first that answers.
    func call<Answer: Decodable>(_ path: String, _ body: some Encodable, as _: Answer.Type) async throws -> Answer {
        let data = try Wire.encode(body)
        return try await withFailover { endpoint in
            try await self.authenticatedPost(endpoint, path, data, as: Answer.self)
        }
    }

    /// Runs `attempt` on each endpoint in failover order until one answers, remembers that one, and returns its
    /// result. An ``EtcdError`` saying the endpoint did not answer moves on to the next; any other error is thrown.
    ///
    /// - Throws: ``EtcdError/Code/unreachable`` listing every endpoint's failure when none answered.
    func withFailover<Result>(_ attempt: (URL) async throws -> Result) async throws -> Result {
        let first = state.withLock { $0.preferred }
        var failures: [EtcdError.EndpointFailure] = []
        for step in 0..<endpoints.count {
            let index = (first + step) % endpoints.count
            let endpoint = endpoints[index]
            do {
                let result = try await attempt(endpoint)
                state.withLock { $0.preferred = index }
                return result
            } catch let error as EtcdError where error.isEndpointDown {
                failures.append(.init(endpoint: endpoint.absoluteString, reason: error.message))
            }
        }
        throw EtcdError(.unreachable, message: "tried \(endpoints.count) endpoints", failures: failures)
    }

    /// Posts to one endpoint with the current token (authenticating first when there is none), and once more
    /// with a new token when etcd says the token is invalid.
    private func authenticatedPost<Answer: Decodable>(
        _ endpoint: URL, _ path: String, _ body: Data, as _: Answer.Type
    ) async throws -> Answer {
        let token = try await currentToken(at: endpoint)
        do {
            return try await post(endpoint, path, body, token: token, as: Answer.self)
        } catch let error as EtcdError where token != nil && error.isInvalidToken {
            let renewed = try await authenticate(at: endpoint)
            return try await post(endpoint, path, body, token: renewed, as: Answer.self)
        }
    }

    /// The token to send: `nil` without credentials; the one in hand; or a new one from `endpoint`.
    func currentToken(at endpoint: URL) async throws -> String? {
        guard credentials != nil else { return nil }
        if let token = state.withLock({ $0.token }) { return token }
        return try await authenticate(at: endpoint)
    }

    /// Authenticates at `endpoint`, keeps the token for later calls and returns it.
    ///
    /// - Throws: ``EtcdError/Code/authenticationFailed`` with etcd's message when etcd refuses (a wrong password,
    ///   an unknown user, authentication not enabled); ``EtcdError`` naming the endpoint when it does not answer.
    @discardableResult
    func authenticate(at endpoint: URL) async throws -> String? {
        guard let credentials else { return nil }
        let body = try Wire.encode(Wire.AuthenticateRequest(name: credentials.user, password: credentials.password))
        let answer: Wire.AuthenticateResponse
        do {
            answer = try await post(
                endpoint, "/v3/auth/authenticate", body, token: nil, as: Wire.AuthenticateResponse.self)
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

    /// One POST to one endpoint: the answer decoded, or etcd's error as an ``EtcdError``.
    ///
    /// `http://` endpoints are spoken to in HTTP/1.0 over a socket (``PlainHTTP`` says why not URLSession);
    /// `https://` ones with URLSession.
    private func post<Answer: Decodable>(
        _ endpoint: URL, _ path: String, _ body: Data, token: String?, as _: Answer.Type
    ) async throws -> Answer {
        let data: Data
        let status: Int
        if endpoint.scheme == "http", let host = endpoint.host {
            var headers = [("Content-Type", "application/json")]
            if let token { headers.append(("Authorization", token)) }
            let answer = try await PlainHTTP.post(
                host: host, port: endpoint.port ?? 80, path: path, body: body, headers: headers,
                timeout: requestTimeout, endpoint: endpoint.absoluteString)
            (data, status) = (answer.body, answer.status)
        } else {
            let request = makeRequest(endpoint, path, body, token: token, timeout: requestTimeout)
            let response: URLResponse
            do {
                (data, response) = try await session.data(for: request)
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw EtcdError.connection(error, endpoint: endpoint)
            }
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        if Task.isCancelled { throw CancellationError() }
        guard status == 200 else { throw EtcdError.answer(data, status: status, endpoint: endpoint, path: path) }
        do {
            return try Wire.decoder().decode(Answer.self, from: data)
        } catch {
            throw EtcdError.undecodable(data, path: path, endpoint: endpoint, error: error)
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
