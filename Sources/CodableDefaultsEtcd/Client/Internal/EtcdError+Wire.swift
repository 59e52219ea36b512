import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// How the client turns what URLSession and the gateway gave into an EtcdError, and which errors mean what.

extension EtcdError {
    /// The gRPC code etcd gives when a member cannot serve (no leader, stopping, timed out inside raft).
    static let grpcUnavailable = 14
    /// The gRPC code of an invalid or expired token.
    static let grpcUnauthenticated = 16
    /// The gRPC codes of a request the member gave up on (its gateway's call canceled or out of time, as happens
    /// to a member under heavy load): nothing is wrong with the request, so it is tried again, as for a member
    /// that cannot serve.
    static let grpcGaveUp: Set<Int> = [1, 4]

    /// Whether the endpoint did not answer (or said it cannot serve, or gave up on the request), so that the next
    /// one should be tried.
    var isEndpointDown: Bool {
        switch code {
        case .unreachable: true
        case .server: grpcCode.map { $0 == Self.grpcUnavailable || Self.grpcGaveUp.contains($0) } ?? false
        default: false
        }
    }

    /// Whether etcd refused a read at a revision it has compacted away ("mvcc: required revision has been
    /// compacted", gRPC code 11).
    var isCompactedRevision: Bool {
        code == .server && message.contains("required revision has been compacted")
    }

    /// Whether etcd refused the token (it expired, or the member that made it restarted).
    var isInvalidToken: Bool {
        (code == .server && grpcCode == Self.grpcUnauthenticated) || message.contains("invalid auth token")
    }

    /// The error of a request that got no answer from `endpoint`.
    static func connection(_ error: any Error, endpoint: URL) -> EtcdError {
        EtcdError(.unreachable, endpoint: endpoint.absoluteString, message: describe(connectionError: error))
    }

    /// The error of a non-200 answer: etcd's JSON error when the body is one, else the body's text; for a redirect
    /// (3xx, which etcd never answers), that it is one and is not followed.
    static func answer(_ data: Data, status: Int, endpoint: URL, path: String) -> EtcdError {
        if (300..<400).contains(status) {
            return EtcdError(
                .badResponse, endpoint: endpoint.absoluteString,
                message: "\(path): answered HTTP \(status), a redirect, which is never followed (credentials go only "
                    + "to the configured endpoints)", httpStatus: status)
        }
        do {
            let body = try Wire.decoder().decode(Wire.ErrorBody.self, from: data)
            let message = body.message ?? body.error ?? "HTTP \(status) with no message"
            return EtcdError(
                .server, endpoint: endpoint.absoluteString, message: "\(path): \(message)", grpcCode: body.code,
                httpStatus: status)
        } catch {
            var message = "\(path): \(excerpt(data))"
            // etcd's gateway refuses, with authentication on, a client certificate that names a user: it cannot pass
            // that name on (etcd's CVE-2018-16886 fix).
            if status == 400 && data.range(of: Data("CommonName of client".utf8)) != nil {
                message +=
                    "; with client certificates and authentication both on, etcd takes over HTTP only a "
                    + "client certificate without a CommonName (the user is then the one of the user name and "
                    + "password)"
            }
            return EtcdError(.server, endpoint: endpoint.absoluteString, message: message, httpStatus: status)
        }
    }

    /// The error of an answer that does not decode as the gateway's JSON for `path`.
    static func undecodable(_ data: Data, path: String, endpoint: URL, error: any Error) -> EtcdError {
        EtcdError(
            .badResponse, endpoint: endpoint.absoluteString,
            message: "\(path): \(describe(decodingError: error)) in \(excerpt(data))")
    }

    /// The start of a body, as text, for a message.
    static func excerpt(_ data: Data) -> String {
        let text = String(decoding: data.prefix(300), as: UTF8.self)
        return data.count > 300 ? "\"\(text)…\"" : "\"\(text)\""
    }

    /// A decoding error in a few words: what and where.
    static func describe(decodingError error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let (context, what): (DecodingError.Context, String) =
            switch error {
            case .dataCorrupted(let context): (context, "invalid data")
            case .keyNotFound(let key, let context): (context, "no \"\(key.stringValue)\"")
            case .typeMismatch(let type, let context): (context, "not a \(type)")
            case .valueNotFound(let type, let context): (context, "no \(type)")
            @unknown default: (DecodingError.Context(codingPath: [], debugDescription: "\(error)"), "invalid")
            }
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return "\(what) at \(path.isEmpty ? "the top" : path): \(context.debugDescription)"
    }

    /// A connection error in words: the URLError's meaning and code, or the error itself.
    static func describe(connectionError error: any Error) -> String {
        guard let error = error as? URLError else { return "\(error)" }
        let meaning =
            switch error.code {
            case .cannotConnectToHost: "connection refused"
            case .timedOut: "timed out"
            case .networkConnectionLost: "connection lost"
            case .cannotFindHost, .dnsLookupFailed: "host not found"
            case .notConnectedToInternet: "not connected to a network"
            case .badServerResponse: "the server closed the connection without an answer"
            case .secureConnectionFailed: "TLS handshake failed"
            case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
                .serverCertificateHasUnknownRoot:
                "the server's certificate is not trusted"
            default: "URL loading failed"
            }
        // On Linux the description is libcurl's ("SSL certificate problem: self-signed certificate").
        let said = (error as NSError).userInfo[NSLocalizedDescriptionKey] as? String
        return "\(meaning)\(said.map { ": \($0)" } ?? "") (URLError \(error.code.rawValue))"
    }
}
