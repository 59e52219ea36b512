import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One streaming POST to `/v3/watch` of one endpoint, whatever carries it (``WatchConnection``,
/// ``PlainWatchConnection``, ``CurlWatch``).
protocol WatchTransport: Sendable {
    /// The gateway's messages, in order: the stream ends when the server ends the answer, and throws
    /// ``EtcdError`` when the connection fails, the answer is not HTTP 200 or a line is not the gateway's JSON.
    var messages: AsyncThrowingStream<Wire.WatchMessage, any Error> { get }
    /// Ends the request, from any thread; `messages` then ends with an error.
    func cancel()
}

/// One streaming POST to `/v3/watch` of one endpoint with `URLSession`: the gateway's messages (one JSON object a
/// line) as they arrive, decoded (see ``WatchReader``). On Linux an `http://` endpoint's watch uses
/// ``PlainWatchConnection`` instead, and with glibc an `https://` one ``CurlWatch``.
///
/// `messages` ends when the server ends the answer, and throws ``EtcdError`` when the connection fails
/// (``EtcdError/Code/unreachable``), the answer is not HTTP 200 (etcd's error) or a line is not the gateway's
/// JSON (``EtcdError/Code/badResponse``). ``cancel()`` ends it from any thread.
///
/// Its mutable state is touched only on its session's serial delegate queue (and in `init`, before the task
/// starts); `cancel` only calls the task's thread-safe `cancel`. Hence `@unchecked Sendable`.
final class WatchConnection: NSObject, URLSessionDataDelegate, WatchTransport, @unchecked Sendable {
    /// The messages of the watch, in order.
    let messages: AsyncThrowingStream<Wire.WatchMessage, any Error>
    private let reader: WatchReader
    private let endpoint: URL
    private let tls: EtcdTLS?
    private var task: URLSessionDataTask?
    /// Why the TLS files refused the server, if they did (Apple platforms).
    private var untrusted: String?

    /// Starts the request, answering TLS challenges with `tls` on Apple platforms. A message (or an error answer)
    /// over `maximumMessageSize` bytes ends the watch with ``EtcdError/Code/badResponse`` instead of growing
    /// without bound.
    init(
        request: URLRequest, endpoint: URL, tls: EtcdTLS?, configuration: URLSessionConfiguration,
        maximumMessageSize: Int
    ) {
        let (messages, continuation) = AsyncThrowingStream.makeStream(of: Wire.WatchMessage.self)
        self.messages = messages
        reader = WatchReader(endpoint: endpoint, maximumMessageSize: maximumMessageSize, continuation: continuation)
        self.endpoint = endpoint
        self.tls = tls
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        // The session keeps its delegate (self) until it is invalidated, when the task completes.
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        let task = session.dataTask(with: request)
        self.task = task
        task.resume()
    }

    /// Ends the request; `messages` then ends with an error.
    func cancel() { task?.cancel() }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        reader.status = (response as? HTTPURLResponse)?.statusCode ?? 0
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if !reader.received(data) { dataTask.cancel() }
    }

    /// Refuses every redirect: the 3xx answer itself ends the request, as an error naming the endpoint (a token
    /// or password goes only to the configured endpoints, never where an answer points).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    #if canImport(Security)
        /// Answers the handshake's challenges with the TLS files (``AppleTLS``), as ``BoundedAnswers`` does.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let answer = AppleTLS.answer(challenge, tls: tls)
            if let refusal = answer.refusal { untrusted = refusal }
            completionHandler(answer.disposition, answer.credential)
        }
    #endif

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        session.finishTasksAndInvalidate()
        if let untrusted {
            reader.completed(EtcdError(.unreachable, endpoint: endpoint.absoluteString, message: untrusted))
        } else {
            reader.completed(error.map { EtcdError.connection($0, endpoint: endpoint) })
        }
    }
}

/// The answer of a `/v3/watch` request, turned into the gateway's messages (one JSON object a line) on a stream,
/// whatever carries the bytes (``WatchConnection``, ``CurlWatch``).
///
/// Not thread-safe: its owner calls it from one thread at a time, in the order the answer arrives.
final class WatchReader {
    /// The HTTP status of the answer, set by the owner before the first ``received(_:)``.
    var status = 0
    private let continuation: AsyncThrowingStream<Wire.WatchMessage, any Error>.Continuation
    private let endpoint: URL
    private let maximumMessageSize: Int
    private let decoder = Wire.decoder()
    private var pending = Data()
    private var hasEnded = false

    /// A reader that yields to `continuation`; a message (or an error answer) over `maximumMessageSize` bytes
    /// ends it with ``EtcdError/Code/badResponse``.
    init(
        endpoint: URL, maximumMessageSize: Int,
        continuation: AsyncThrowingStream<Wire.WatchMessage, any Error>.Continuation
    ) {
        self.endpoint = endpoint
        self.maximumMessageSize = maximumMessageSize
        self.continuation = continuation
    }

    /// Takes the next bytes of the answer. `false` when the stream has ended with an error (a message too large
    /// or not the gateway's JSON): the owner then stops the transfer.
    func received(_ data: Data) -> Bool {
        guard !hasEnded else { return false }
        pending.append(data)
        if status == 200 {  // An error body is read whole, at the end.
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending.removeSubrange(pending.startIndex...newline)
                deliver(line)
                if hasEnded { return false }
            }
        }
        // A message waits for its line break, an error body for the end: either is bounded.
        if pending.count > maximumMessageSize {
            let what = status == 200 ? "a message" : "the error answer"
            end(
                throwing: EtcdError(
                    .badResponse, endpoint: endpoint.absoluteString,
                    message: "/v3/watch: \(what) is over \(maximumMessageSize) bytes, more than etcd sends"))
            return false
        }
        return true
    }

    /// Ends the stream: with `failure` (the connection's), etcd's error answer, or the last line.
    func completed(_ failure: EtcdError?) {
        guard !hasEnded else { return }
        if let failure {
            end(throwing: failure)
        } else if status != 200 {
            end(throwing: EtcdError.answer(pending, status: status, endpoint: endpoint, path: "/v3/watch"))
        } else {
            deliver(pending)
            hasEnded = true
            continuation.finish()
        }
    }

    private func end(throwing error: EtcdError) {
        hasEnded = true
        pending = Data()
        continuation.finish(throwing: error)
    }

    /// Decodes one line and hands it on; a line that is not the gateway's JSON ends the stream with an error.
    private func deliver(_ line: Data) {
        guard !hasEnded, line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x0A && $0 != 0x09 }) else { return }
        do {
            continuation.yield(try decoder.decode(Wire.WatchMessage.self, from: line))
        } catch {
            end(throwing: EtcdError.undecodable(Data(line), path: "/v3/watch", endpoint: endpoint, error: error))
        }
    }
}
