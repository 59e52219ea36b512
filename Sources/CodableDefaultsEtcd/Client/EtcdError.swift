/// What went wrong talking to etcd: which endpoint, and what etcd (or the connection) said.
///
/// Every failure of ``EtcdClient`` is one of these; none is swallowed. `description` is a sentence for a
/// log or a user, naming the endpoint and quoting etcd's own message.
package struct EtcdError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure. New codes may be added.
    package enum Code: Sendable, Equatable {
        /// No endpoint answered (connection refused, timed out, host not found, connection lost). `failures`
        /// holds what each endpoint tried said.
        case unreachable
        /// etcd answered with an error: `grpcCode` and `message` are etcd's.
        case server
        /// The user name or password was refused by `/v3/auth/authenticate`.
        case authenticationFailed
        /// A watch asked for a revision that etcd has compacted away; `compactRevision` is the oldest revision
        /// still available. The caller reloads (a range) and watches again from the range's revision + 1.
        case compacted
        /// etcd canceled a watch for another reason than compaction; `message` is etcd's reason.
        case watchCanceled
        /// A watch's connection ended (the member stopped, the network failed). The caller resumes from the last
        /// revision it saw + 1.
        case watchDisconnected
        /// The answer was not what etcd's gateway sends (not JSON, a field missing or of the wrong type).
        case badResponse
        /// An endpoint given to the client is not an `http://` or `https://` URL with a host, or is one this
        /// process cannot speak to (an `https://` endpoint on Linux where libcurl cannot be found), or the TLS files
        /// given for the endpoints cannot be used (``EtcdTLS``).
        case invalidEndpoint
    }

    /// The kind of failure.
    package var code: Code
    /// The endpoint the failure came from (`http://host:port`), or `nil` when it concerns none in particular.
    package var endpoint: String?
    /// What etcd or the connection said, in its own words.
    package var message: String
    /// The gRPC status code etcd gave (`code` in its JSON error; 16 is Unauthenticated), when it gave one.
    package var grpcCode: Int?
    /// The HTTP status of the answer, when there was one.
    package var httpStatus: Int?
    /// For ``Code/compacted``: the oldest revision etcd still has.
    package var compactRevision: Int64?
    /// For ``Code/unreachable``: each endpoint tried and why it did not answer, in the order tried.
    package var failures: [EndpointFailure]

    /// One endpoint that did not answer, and why.
    package struct EndpointFailure: Sendable, Equatable {
        /// The endpoint (`http://host:port`).
        package var endpoint: String
        /// Why it did not answer (the connection's error).
        package var reason: String
    }

    /// Makes an error; every field but `code` and `message` is optional.
    package init(
        _ code: Code, endpoint: String? = nil, message: String, grpcCode: Int? = nil, httpStatus: Int? = nil,
        compactRevision: Int64? = nil, failures: [EndpointFailure] = []
    ) {
        self.code = code
        self.endpoint = endpoint
        self.message = message
        self.grpcCode = grpcCode
        self.httpStatus = httpStatus
        self.compactRevision = compactRevision
        self.failures = failures
    }

    /// A sentence naming the endpoint and quoting etcd.
    package var description: String {
        let at = endpoint.map { " at \($0)" } ?? ""
        switch code {
        case .unreachable:
            let tried = failures.map { "\($0.endpoint): \($0.reason)" }.joined(separator: "; ")
            return "etcd: no endpoint answered (\(tried.isEmpty ? message : tried))"
        case .server:
            let status = [httpStatus.map { "HTTP \($0)" }, grpcCode.map { "gRPC code \($0)" }]
                .compactMap { $0 }.joined(separator: ", ")
            return "etcd\(at) refused the request: \(message)" + (status.isEmpty ? "" : " (\(status))")
        case .authenticationFailed:
            return "etcd\(at) refused the user name or password: \(message)"
        case .compacted:
            let oldest = compactRevision.map { " (the oldest revision kept is \($0))" } ?? ""
            return "etcd\(at): the watch's start revision was compacted\(oldest); reload and watch again: \(message)"
        case .watchCanceled:
            return "etcd\(at) canceled the watch: \(message)"
        case .watchDisconnected:
            return "etcd\(at): the watch's connection ended: \(message)"
        case .badResponse:
            return "etcd\(at) sent an answer that is not etcd's gateway JSON: \(message)"
        case .invalidEndpoint:
            return "etcd endpoint\(endpoint.map { " \"\($0)\"" } ?? "") cannot be used: \(message)"
        }
    }
}
