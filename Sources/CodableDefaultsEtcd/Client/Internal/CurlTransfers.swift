#if canImport(Glibc)
    import CodableDefaults
    import Glibc

    /// One libcurl transfer's sockets and whether it was cancelled, so that another thread can end it at once: its
    /// owner (a watch's ``CurlWatch/cancel()``) or the process's exit (``CurlTransfers``). libcurl opens and closes
    /// the sockets through callbacks that take the same lock, so a socket shut down is always still the transfer's
    /// (never a number the system has handed out again).
    final class CurlTransferControl: Sendable {
        private let state = Locked(State())

        private struct State {
            var isCancelled = false
            var open: Set<Int32> = []
        }

        /// Whether ``cancel()`` was called: the transfer's progress callback then ends it.
        var isCancelled: Bool { state.withLock { $0.isCancelled } }

        /// Shuts every open socket down (libcurl then sees the connection end, in a TLS handshake too) and refuses
        /// new ones.
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

        /// The callbacks that follow the transfer's sockets and end it once cancelled, with `self` as their box:
        /// `CURLOPT_SOCKOPTFUNCTION`, `CURLOPT_CLOSESOCKETFUNCTION` and `CURLOPT_XFERINFOFUNCTION` (a transfer that
        /// sets its own progress callback, as a watch does, checks ``isCancelled`` in it). Returns the first
        /// non-zero `CURLcode` of the settings.
        func configure(_ curl: CurlHTTP.Library, _ handle: OpaquePointer) -> Int32 {
            let box = Unmanaged.passUnretained(self).toOpaque()
            let settings: [Int32] = [
                curl.setFunction(
                    handle, CurlHTTP.Option.socketOptionFunction,
                    unsafeBitCast(Self.socketOpened(), to: CurlHTTP.Callback.self)),
                curl.setPointer(handle, CurlHTTP.Option.socketOptionData, box),
                curl.setFunction(
                    handle, CurlHTTP.Option.closeSocketFunction,
                    unsafeBitCast(Self.socketClosed(), to: CurlHTTP.Callback.self)),
                curl.setPointer(handle, CurlHTTP.Option.closeSocketData, box),
                curl.setLong(handle, CurlHTTP.Option.noProgress, 0),
                curl.setFunction(
                    handle, CurlHTTP.Option.transferInfoFunction,
                    unsafeBitCast(Self.progress(), to: CurlHTTP.Callback.self)),
                curl.setPointer(handle, CurlHTTP.Option.progressData, box),
            ]
            return settings.first { $0 != 0 } ?? 0
        }

        private static func of(_ box: UnsafeMutableRawPointer?) -> CurlTransferControl? {
            box.map { Unmanaged<CurlTransferControl>.fromOpaque($0).takeUnretainedValue() }
        }

        /// `CURLOPT_XFERINFOFUNCTION`: non-zero (libcurl ends the transfer) once cancelled.
        private static func progress()
            -> @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64) -> Int32
        {
            { box, _, _, _, _ in
                guard let control = CurlTransferControl.of(box) else { return 1 }
                return control.isCancelled ? 1 : 0
            }
        }

        /// `CURLOPT_SOCKOPTFUNCTION`: records a new socket; 1 (`CURL_SOCKOPT_ERROR`) once cancelled.
        private static func socketOpened() -> @convention(c) (UnsafeMutableRawPointer?, Int32, Int32) -> Int32 {
            { box, socket, _ in
                guard let control = CurlTransferControl.of(box) else { return 1 }
                return control.opened(socket) ? 0 : 1
            }
        }

        /// `CURLOPT_CLOSESOCKETFUNCTION`: closes and forgets a socket.
        private static func socketClosed() -> @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 {
            { box, socket in
                guard let control = CurlTransferControl.of(box) else { return Glibc.close(socket) }
                control.close(socket)
                return 0
            }
        }
    }

    /// Every libcurl transfer of the process in flight, ended and waited for when the process exits, before the
    /// libraries under libcurl clean up.
    ///
    /// Why: `exit` runs the exit handlers of the libraries the process loaded, and OpenSSL's (`OPENSSL_cleanup`,
    /// registered with `atexit` when libcurl first initializes it) frees its locks, its providers and its error
    /// state. A transfer that still runs on another thread (a watch's stream, a call in a TLS handshake) then takes
    /// a freed lock or frees freed memory: the process that was ending with its own status is killed by signal 11
    /// instead (as a test that exits while watches start shows, a few times in ten without this).
    ///
    /// The fix, at the root: an exit handler of this library, registered with `atexit` right after libcurl's
    /// `curl_global_init` when libcurl is loaded (``CurlHTTP``; before any transfer can start), so after OpenSSL's
    /// (exit handlers run in the reverse order of their registration), cancels every transfer in flight (``CurlTransferControl/cancel()``: its sockets shut down, its progress
    /// callback ends it) and waits until each has left libcurl, at most ``exitWait`` seconds; a transfer asked
    /// for after that fails at once, without touching libcurl.
    enum CurlTransfers {
        /// The longest the process's exit waits for its transfers to end (they end within milliseconds once their
        /// sockets are shut down; a transfer stuck in a name lookup may not).
        static let exitWait: Double = 2

        private struct State {
            var running: [ObjectIdentifier: CurlTransferControl] = [:]
            var isExiting = false
        }

        private static let state = Locked(State())

        /// Records a transfer about to start; `false` (it must not start) once the process is exiting.
        static func begin(_ control: CurlTransferControl) -> Bool {
            state.withLock { state in
                guard !state.isExiting else { return false }
                state.running[ObjectIdentifier(control)] = control
                return true
            }
        }

        /// Records a transfer that left libcurl (its handle cleaned up).
        static func end(_ control: CurlTransferControl) {
            state.withLock { state in _ = state.running.removeValue(forKey: ObjectIdentifier(control)) }
        }

        /// Cancels every transfer in flight, refuses new ones, and waits until the running ones have ended (at most
        /// ``exitWait`` seconds, polling every millisecond).
        static func endAllForExit() {
            let running = state.withLock { state in
                state.isExiting = true
                return Array(state.running.values)
            }
            for control in running { control.cancel() }
            var waited = 0.0
            while waited < exitWait && !state.withLock({ $0.running.isEmpty }) {
                usleep(1_000)
                waited += 0.001
            }
        }
    }
#endif

#if canImport(Glibc)
    /// The libcurl handles a client keeps between its calls, a few per endpoint, so that a call reuses the
    /// connection (and its TLS session) a previous call left open instead of paying a handshake: HTTP/1.1
    /// keep-alive (or an HTTP/2 connection), as libcurl keeps it in each handle's connection cache.
    ///
    /// A call takes an idle handle of its endpoint (or makes one), and gives it back only when the transfer ended
    /// with an answer; a handle whose transfer failed is cleaned up, closing its connection ("closed on errors").
    /// At most ``maximumIdlePerEndpoint`` handles wait per endpoint; more concurrent calls make handles of their
    /// own, cleaned up after. Each handle has its own ``CurlTransferControl``, which lives as long as the handle:
    /// libcurl keeps a connection's socket callbacks, and their box, from the transfer that opened it. Thread-safe.
    final class CurlHandlePool: Sendable {
        /// A libcurl easy handle and the control of its sockets.
        struct Handle: @unchecked Sendable {
            // An easy handle is used by one thread at a time: the pool hands each to one call.
            let pointer: OpaquePointer
            let control: CurlTransferControl
        }

        /// The most idle handles kept per endpoint.
        static let maximumIdlePerEndpoint = 4

        private let idle = Locked<[String: [Handle]]>([:])
        private let opened = Locked(0)

        /// How many connections the pool's transfers opened (libcurl's `CURLINFO_NUM_CONNECTS`, summed).
        var connectionsOpened: Int { opened.withLock { $0 } }

        /// Counts the connections a transfer opened.
        func record(connectionsOpened count: Int) {
            opened.withLock { $0 += count }
        }

        /// An idle handle of `endpoint`, reset to libcurl's defaults (its connections kept), or `nil` when none
        /// waits.
        func take(_ endpoint: String, _ curl: CurlHTTP.Library) -> Handle? {
            let handle = idle.withLock { idle in idle[endpoint]?.popLast() }
            if let handle { curl.easyReset(handle.pointer) }
            return handle
        }

        /// Keeps `handle` for the next call to `endpoint`, or cleans it up when enough wait.
        func giveBack(_ handle: Handle, _ endpoint: String, _ curl: CurlHTTP.Library) {
            let kept = idle.withLock { idle in
                guard idle[endpoint, default: []].count < Self.maximumIdlePerEndpoint else { return false }
                idle[endpoint, default: []].append(handle)
                return true
            }
            if !kept { curl.easyCleanup(handle.pointer) }
        }

        /// Cleans up every idle handle (closing its connections): the client is going away.
        func drain(_ curl: CurlHTTP.Library) {
            let all = idle.withLock { idle in
                defer { idle = [:] }
                return idle.values.flatMap { $0 }
            }
            for handle in all { curl.easyCleanup(handle.pointer) }
        }

        /// How many handles wait, for tests.
        var idleCount: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }
    }
#endif
