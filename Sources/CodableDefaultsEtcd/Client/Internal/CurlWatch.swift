#if canImport(Glibc)
    import CodableDefaults
    import Dispatch
    import Foundation
    import Glibc

    /// One streaming POST to `/v3/watch` of one endpoint with libcurl, on Linux: the gateway's messages (one JSON
    /// object a line) as they arrive, decoded (see ``WatchReader``). ``CurlHTTP`` says why not URLSession: an
    /// answer that ends in an HTTP trailer (a proxy's, say) must end the watch with an error, never the process.
    ///
    /// `messages` ends when the server ends the answer, and throws ``EtcdError`` when the connection fails or
    /// stays silent for `idleTimeout` seconds (``EtcdError/Code/unreachable``), the answer is not HTTP 200
    /// (etcd's error) or a line is not the gateway's JSON (``EtcdError/Code/badResponse``). ``cancel()`` ends it
    /// at once from any thread: it shuts the transfer's sockets down.
    ///
    /// The transfer blocks a thread of its own (a serial dispatch queue's) for as long as the watch runs.
    final class CurlWatch: WatchTransport {
        /// The messages of the watch, in order.
        let messages: AsyncThrowingStream<Wire.WatchMessage, any Error>
        private let sockets = Sockets()

        /// Starts the request: a POST of `body` to `url` with `headers`. A message (or an error answer) over
        /// `maximumMessageSize` bytes ends the watch with ``EtcdError/Code/badResponse`` instead of growing without
        /// bound.
        init(
            url: String, body: Data, headers: [(String, String)], idleTimeout: TimeInterval, maximumMessageSize: Int,
            endpoint: URL
        ) {
            let (messages, continuation) = AsyncThrowingStream.makeStream(of: Wire.WatchMessage.self)
            self.messages = messages
            let sockets = sockets
            // A stream that ends (its consumer gone, or an error) stops the transfer.
            continuation.onTermination = { _ in sockets.cancel() }
            DispatchQueue(label: "CodableDefaultsEtcd.watch").async {
                let reader = WatchReader(
                    endpoint: endpoint, maximumMessageSize: maximumMessageSize, continuation: continuation)
                do throws(EtcdError) {
                    let curl = try CurlHTTP.loaded(endpoint: endpoint.absoluteString)
                    let transfer = Transfer(curl: curl, reader: reader, sockets: sockets, idleTimeout: idleTimeout)
                    let outcome = try withExtendedLifetime(transfer) { () throws(EtcdError) in
                        try CurlHTTP.transfer(
                            curl, url: url, body: body, headers: headers, endpoint: endpoint.absoluteString,
                            write: Transfer.write(), box: Unmanaged.passUnretained(transfer).toOpaque(),
                            configure: transfer.configure)
                    }
                    reader.completed(
                        outcome.failure.map {
                            EtcdError(
                                .unreachable, endpoint: endpoint.absoluteString,
                                message: transfer.timedOut ? "timed out (no message for \(idleTimeout) s)" : $0)
                        })
                } catch {
                    reader.completed(error)
                }
            }
        }

        /// Ends the request; `messages` then ends with an error.
        func cancel() { sockets.cancel() }

        /// The transfer's sockets, so that ``cancel()`` can shut them down from another thread. libcurl opens and
        /// closes them through callbacks that take the same lock, so a socket shut down is always still the
        /// transfer's (never a number the system has handed out again).
        private final class Sockets: Sendable {
            private let state = Locked(State())

            private struct State {
                var isCancelled = false
                var open: Set<Int32> = []
            }

            /// Whether ``cancel()`` was called.
            var isCancelled: Bool { state.withLock { $0.isCancelled } }

            /// Shuts every open socket down (libcurl then sees the connection end) and refuses new ones.
            func cancel() {
                state.withLock { state in
                    state.isCancelled = true
                    for socket in state.open { shutdown(socket, Int32(SHUT_RDWR)) }
                }
            }

            /// Records a socket libcurl opened; `false` (refuse it) once cancelled.
            func opened(_ socket: Int32) -> Bool {
                state.withLock { state in
                    guard !state.isCancelled else { return false }
                    state.open.insert(socket)
                    return true
                }
            }

            /// Closes a socket for libcurl and forgets it.
            func close(_ socket: Int32) {
                state.withLock { state in
                    state.open.remove(socket)
                    _ = Glibc.close(socket)
                }
            }
        }

        /// What libcurl's callbacks of one watch share (their box): used on the transfer's thread only, but for
        /// ``Sockets``.
        private final class Transfer {
            let curl: CurlHTTP.Library
            let reader: WatchReader
            let sockets: Sockets
            let idleTimeout: TimeInterval
            /// When data last arrived (or the transfer started), by the monotonic clock.
            var lastData = DispatchTime.now()
            /// Whether the transfer was ended for `idleTimeout` without data.
            var timedOut = false
            var handle: OpaquePointer?

            init(curl: CurlHTTP.Library, reader: WatchReader, sockets: Sockets, idleTimeout: TimeInterval) {
                self.curl = curl
                self.reader = reader
                self.sockets = sockets
                self.idleTimeout = idleTimeout
            }

            /// The watch's settings: the callbacks that follow its sockets and its silence.
            func configure(_ handle: OpaquePointer) -> Int32 {
                self.handle = handle
                let box = Unmanaged.passUnretained(self).toOpaque()
                let settings: [Int32] = [
                    curl.setLong(handle, CurlHTTP.Option.noProgress, 0),
                    curl.setFunction(
                        handle, CurlHTTP.Option.transferInfoFunction,
                        unsafeBitCast(Self.progress(), to: CurlHTTP.Callback.self)),
                    curl.setPointer(handle, CurlHTTP.Option.progressData, box),
                    curl.setFunction(
                        handle, CurlHTTP.Option.socketOptionFunction,
                        unsafeBitCast(Self.socketOpened(), to: CurlHTTP.Callback.self)),
                    curl.setPointer(handle, CurlHTTP.Option.socketOptionData, box),
                    curl.setFunction(
                        handle, CurlHTTP.Option.closeSocketFunction,
                        unsafeBitCast(Self.socketClosed(), to: CurlHTTP.Callback.self)),
                    curl.setPointer(handle, CurlHTTP.Option.closeSocketData, box),
                ]
                return settings.first { $0 != 0 } ?? 0
            }

            private static func of(_ box: UnsafeMutableRawPointer?) -> Transfer? {
                box.map { Unmanaged<Transfer>.fromOpaque($0).takeUnretainedValue() }
            }

            /// Hands the bytes to the reader (with the status, known by then); 0 (libcurl ends the transfer) when
            /// the reader has ended the stream.
            static func write() -> CurlHTTP.WriteFunction {
                { bytes, size, count, box in
                    guard let bytes, let transfer = Transfer.of(box) else { return 0 }
                    transfer.lastData = .now()
                    if transfer.reader.status == 0, let handle = transfer.handle {
                        var status = 0
                        _ = transfer.curl.getLong(handle, CurlHTTP.Info.responseCode, &status)
                        transfer.reader.status = status
                    }
                    let length = size * count
                    let data = Data(bytes: bytes, count: length)
                    return transfer.reader.received(data) ? length : 0
                }
            }

            /// Called by libcurl about once a second, and as data moves: non-zero ends the transfer (cancelled,
            /// or silent for too long).
            private static func progress()
                -> @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64) -> Int32
            {
                { box, _, _, _, _ in
                    guard let transfer = Transfer.of(box) else { return 1 }
                    if transfer.sockets.isCancelled { return 1 }
                    let silent =
                        Double(DispatchTime.now().uptimeNanoseconds - transfer.lastData.uptimeNanoseconds) / 1e9
                    if silent > transfer.idleTimeout {
                        transfer.timedOut = true
                        return 1
                    }
                    return 0
                }
            }

            /// `CURLOPT_SOCKOPTFUNCTION`: records a new socket; 1 (`CURL_SOCKOPT_ERROR`) once cancelled.
            private static func socketOpened() -> @convention(c) (UnsafeMutableRawPointer?, Int32, Int32) -> Int32 {
                { box, socket, _ in
                    guard let transfer = Transfer.of(box) else { return 1 }
                    return transfer.sockets.opened(socket) ? 0 : 1
                }
            }

            /// `CURLOPT_CLOSESOCKETFUNCTION`: closes and forgets a socket.
            private static func socketClosed() -> @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 {
                { box, socket in
                    guard let transfer = Transfer.of(box) else { return Glibc.close(socket) }
                    transfer.sockets.close(socket)
                    return 0
                }
            }
        }
    }
#endif
