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
        private let control = CurlTransferControl()

        /// Starts the request: a POST of `body` to `url` with `headers`. A message (or an error answer) over
        /// `maximumMessageSize` bytes ends the watch with ``EtcdError/Code/badResponse`` instead of growing without
        /// bound.
        init(
            url: String, body: Data, headers: [(String, String)], tls: EtcdTLS?, connectTimeout: TimeInterval,
            idleTimeout: TimeInterval, maximumMessageSize: Int, endpoint: URL
        ) {
            let (messages, continuation) = AsyncThrowingStream.makeStream(of: Wire.WatchMessage.self)
            self.messages = messages
            let control = control
            // A stream that ends (its consumer gone, or an error) stops the transfer.
            continuation.onTermination = { _ in control.cancel() }
            DispatchQueue(label: "CodableDefaultsEtcd.watch").async {
                let reader = WatchReader(
                    endpoint: endpoint, maximumMessageSize: maximumMessageSize, continuation: continuation)
                do throws(EtcdError) {
                    let curl = try CurlHTTP.loaded(endpoint: endpoint.absoluteString)
                    let transfer = Transfer(
                        curl: curl, reader: reader, control: control, connectTimeout: connectTimeout,
                        idleTimeout: idleTimeout)
                    let outcome = try withExtendedLifetime(transfer) { () throws(EtcdError) in
                        try CurlHTTP.transfer(
                            curl, url: url, body: body, headers: headers, tls: tls, endpoint: endpoint.absoluteString,
                            control: control, write: Transfer.write(),
                            box: Unmanaged.passUnretained(transfer).toOpaque(),
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
        func cancel() { control.cancel() }

        /// What libcurl's callbacks of one watch share (their box): used on the transfer's thread only, but for
        /// its ``CurlTransferControl``.
        private final class Transfer {
            let curl: CurlHTTP.Library
            let reader: WatchReader
            let control: CurlTransferControl
            let connectTimeout: TimeInterval
            let idleTimeout: TimeInterval
            /// When data last arrived (or the transfer started), by the monotonic clock.
            var lastData = DispatchTime.now()
            /// Whether the transfer was ended for `idleTimeout` without data.
            var timedOut = false
            var handle: OpaquePointer?

            init(
                curl: CurlHTTP.Library, reader: WatchReader, control: CurlTransferControl, connectTimeout: TimeInterval,
                idleTimeout: TimeInterval
            ) {
                self.curl = curl
                self.reader = reader
                self.control = control
                self.connectTimeout = connectTimeout
                self.idleTimeout = idleTimeout
            }

            /// The watch's progress callback, which ends it when cancelled or silent for too long (in place of the
            /// one of its ``CurlTransferControl``, which follows its sockets), and its connect timeout.
            func configure(_ handle: OpaquePointer) -> Int32 {
                self.handle = handle
                let box = Unmanaged.passUnretained(self).toOpaque()
                let settings: [Int32] = [
                    curl.setFunction(
                        handle, CurlHTTP.Option.transferInfoFunction,
                        unsafeBitCast(Self.progress(), to: CurlHTTP.Callback.self)),
                    curl.setPointer(handle, CurlHTTP.Option.progressData, box),
                    curl.setLong(
                        handle, CurlHTTP.Option.connectTimeoutMilliseconds, CurlHTTP.milliseconds(connectTimeout)),
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
                    if transfer.control.isCancelled { return 1 }
                    let silent =
                        Double(DispatchTime.now().uptimeNanoseconds - transfer.lastData.uptimeNanoseconds) / 1e9
                    if silent > transfer.idleTimeout {
                        transfer.timedOut = true
                        return 1
                    }
                    return 0
                }
            }
        }
    }
#endif
