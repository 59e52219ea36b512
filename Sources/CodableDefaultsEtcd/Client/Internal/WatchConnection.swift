import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One streaming POST to `/v3/watch` of one endpoint: the gateway's messages (one JSON object a line) as they
/// arrive, decoded.
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
    private let continuation: AsyncThrowingStream<Wire.WatchMessage, any Error>.Continuation
    private let endpoint: URL
    private let maximumMessageSize: Int
    private let decoder = Wire.decoder()
    private var task: URLSessionDataTask?
    private var status = 0
    private var pending = Data()

    /// Starts the request. A message (or an error answer) over `maximumMessageSize` bytes ends the watch with
    /// ``EtcdError/Code/badResponse`` instead of growing without bound.
    init(request: URLRequest, endpoint: URL, configuration: URLSessionConfiguration, maximumMessageSize: Int) {
        (messages, continuation) = AsyncThrowingStream.makeStream(of: Wire.WatchMessage.self)
        self.endpoint = endpoint
        self.maximumMessageSize = maximumMessageSize
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
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        pending.append(data)
        if status == 200 {  // An error body is read whole, at the end.
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending.removeSubrange(pending.startIndex...newline)
                deliver(line)
            }
        }
        // A message waits for its line break, an error body for the end: either is bounded.
        if pending.count > maximumMessageSize {
            let what = status == 200 ? "a message" : "the error answer"
            continuation.finish(
                throwing: EtcdError(
                    .badResponse, endpoint: endpoint.absoluteString,
                    message: "/v3/watch: \(what) is over \(maximumMessageSize) bytes, more than etcd sends"))
            pending = Data()
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        session.finishTasksAndInvalidate()
        if let error {
            continuation.finish(throwing: EtcdError.connection(error, endpoint: endpoint))
        } else if status != 200 {
            continuation.finish(
                throwing: EtcdError.answer(pending, status: status, endpoint: endpoint, path: "/v3/watch"))
        } else {
            deliver(pending)
            continuation.finish()
        }
    }

    /// Decodes one line and hands it on; a line that is not the gateway's JSON ends the stream with an error.
    private func deliver(_ line: Data) {
        guard line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x0A && $0 != 0x09 }) else { return }
        do {
            continuation.yield(try decoder.decode(Wire.WatchMessage.self, from: line))
        } catch {
            continuation.finish(
                throwing: EtcdError.undecodable(Data(line), path: "/v3/watch", endpoint: endpoint, error: error))
            task?.cancel()
        }
    }
}

/// A watch's connection to one endpoint, however it is made: its messages, and a way to end it.
protocol WatchTransport: Sendable {
    /// The messages of the watch, in order; it throws ``EtcdError`` when the connection fails.
    var messages: AsyncThrowingStream<Wire.WatchMessage, any Error> { get }
    /// Ends the connection from any thread; `messages` then ends with an error.
    func cancel()
}
