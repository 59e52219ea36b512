import CodableDefaults
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the client's `URLSession`: collects each call's answer, and cancels a call whose answer
/// grows past the limit instead of holding it all in memory.
///
/// The session calls it on its own serial delegate queue; what it keeps per call is `Locked`, so ``start(_:then:)``
/// may be called from any thread.
package final class BoundedAnswers: NSObject, URLSessionDataDelegate, Sendable {
    /// A call's answer: the body and the HTTP status; or why it failed.
    package typealias Outcome = Result<(body: Data, status: Int), any Error>

    /// An answer larger than the limit; the call was cancelled.
    package struct TooLarge: Error {
        package var limit: Int
    }

    /// A server whose certificate the TLS files refused (Apple platforms): the call was cancelled in the handshake.
    package struct Untrusted: Error {
        /// Why, naming the authorities' file or the trust store.
        package var reason: String
    }

    /// What arrived for one call so far, and whom to tell at its end.
    private struct Call {
        var body = Data()
        var status = 0
        var tooLarge = false
        var untrusted: String?
        let done: @Sendable (Outcome) -> Void
    }

    /// The most bytes one answer's body may take.
    package let limit: Int
    /// The TLS files the handshakes are answered with (Apple platforms; elsewhere URLSession takes none).
    package let tls: EtcdTLS?
    private let calls = Locked<[Int: Call]>([:])

    /// A delegate that refuses answers over `limit` bytes, and on Apple platforms answers TLS challenges with `tls`.
    package init(limit: Int, tls: EtcdTLS? = nil) {
        self.limit = limit
        self.tls = tls
    }

    /// Starts `task`; `done` gets its outcome once, on the session's delegate queue.
    package func start(_ task: URLSessionDataTask, then done: @escaping @Sendable (Outcome) -> Void) {
        calls.withLock { $0[task.taskIdentifier] = Call(done: done) }
        task.resume()
    }

    package func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let tooLarge = response.expectedContentLength > Int64(limit)
        calls.withLock { calls in
            calls[dataTask.taskIdentifier]?.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            calls[dataTask.taskIdentifier]?.tooLarge = tooLarge
        }
        completionHandler(tooLarge ? .cancel : .allow)
    }

    /// Refuses every redirect: the 3xx answer itself ends the request, as an error naming the endpoint (a token
    /// or password goes only to the configured endpoints, never where an answer points).
    package func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    #if canImport(Security)
        /// Answers the handshake's challenges with the TLS files (``AppleTLS``): URLSession calls the task's
        /// method for the session-wide ones (server trust, client certificate) when the session's is missing.
        package func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let answer = AppleTLS.answer(challenge, tls: tls)
            if let refusal = answer.refusal {
                calls.withLock { $0[task.taskIdentifier]?.untrusted = refusal }
            }
            completionHandler(answer.disposition, answer.credential)
        }
    #endif

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let tooLarge = calls.withLock { calls -> Bool in
            guard var call = calls[dataTask.taskIdentifier] else { return false }
            call.tooLarge = call.tooLarge || call.body.count + data.count > limit
            if !call.tooLarge { call.body.append(data) }
            calls[dataTask.taskIdentifier] = call
            return call.tooLarge
        }
        if tooLarge { dataTask.cancel() }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let call = calls.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let reason = call.untrusted {
            call.done(.failure(Untrusted(reason: reason)))
        } else if call.tooLarge {
            call.done(.failure(TooLarge(limit: limit)))
        } else if let error {
            call.done(.failure(error))
        } else {
            call.done(.success((call.body, call.status)))
        }
    }
}
