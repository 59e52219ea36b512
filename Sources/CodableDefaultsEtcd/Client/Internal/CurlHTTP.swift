#if canImport(Glibc)
    import CodableDefaultsCurlShim
    import Foundation
    import Glibc

    /// One POST over HTTPS with libcurl's easy interface, for the `https://` endpoints' unary calls on Linux with
    /// glibc (and the transfer under their watches, ``CurlWatch``).
    ///
    /// Why not URLSession: swift-corelibs-foundation's URLSession (every release up to Swift 6.3.x) stops the
    /// process when an answer ends with an HTTP trailer: libcurl hands the trailer's lines to URLSession's header
    /// callback, which takes them for the head of a new answer and drops the one it had, and the end of the
    /// transfer then finds no answer ("Transfer completed, but there's no response", a `fatalError`;
    /// swift-corelibs-foundation issue 5285, made an error instead of a crash only after 6.3). etcd 3.4's gateway
    /// sends a trailer with its answers whenever gRPC gave it trailing metadata, and a proxy or load balancer in
    /// front of etcd may add one: a settings library must not stop a service for that. libcurl itself reads
    /// trailers like any other part of the answer; the client only asks it for the status and the body.
    ///
    /// libcurl is the library URLSession itself speaks through on Linux (`libFoundationNetworking` links it), so
    /// it is already in the process: the client finds its functions there (`dlsym`), or loads `libcurl.so.4`, and
    /// needs no package. The TLS settings are libcurl's defaults, as URLSession leaves them, but for the files of
    /// ``EtcdTLS``: the peer's certificate and host name are checked against the system's trust store (the first of
    /// URLSession's list of bundle files when libcurl was built without one) or the authorities given, a client
    /// certificate is presented when given, proxies come from the environment. No redirect is followed.
    ///
    /// Blocking I/O on the calling thread, bounded by `timeout` from connect to the end of the answer (and the
    /// connection by `connectTimeout`); it needs no other thread, like ``PlainHTTP``. A client's calls reuse libcurl
    /// handles and their connections (``CurlHandlePool``); the process's exit ends every transfer before the TLS
    /// library's own exit handler runs (``CurlTransfers``).
    enum CurlHTTP {
        /// Whether libcurl's functions could be found; `nil` when they could, else why not (an `https://`
        /// endpoint is then refused when the client is made, before any call).
        static var unavailableReason: String? {
            switch library {
            case .success: nil
            case .failure(let failure): failure.reason
            }
        }

        /// Posts `body` to `url` (`https://host:port/path`) and returns the answer.
        ///
        /// - Throws: ``EtcdError/Code/unreachable`` naming `endpoint` when the endpoint did not answer (connection
        ///   refused, timed out, host not found, TLS handshake or certificate refused: libcurl's words);
        ///   ``EtcdError/Code/badResponse`` when the answer is over `maximumAnswerSize` bytes.
        static func post(
            url: String, body: Data, headers: [(String, String)], tls: EtcdTLS? = nil, pool: CurlHandlePool? = nil,
            connectTimeout: TimeInterval = .infinity, timeout: TimeInterval, maximumAnswerSize: Int, endpoint: String
        ) throws -> PlainHTTP.Answer {
            let curl = try loaded(endpoint: endpoint)
            let sink = Sink(limit: maximumAnswerSize)
            // libcurl's write callback: appends to the sink; a body over its limit ends the transfer (libcurl then
            // fails it, `CURLE_WRITE_ERROR`).
            let write: WriteFunction = { bytes, size, count, box in
                guard let bytes, let box else { return 0 }
                let sink = Unmanaged<Sink>.fromOpaque(box).takeUnretainedValue()
                let length = size * count
                guard sink.data.count + length <= sink.limit else {
                    sink.isTooLarge = true
                    return 0
                }
                sink.data.append(UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: length)
                return length
            }
            let milliseconds = Self.milliseconds(timeout)
            let connectMilliseconds = Self.milliseconds(min(connectTimeout, timeout))
            let outcome = try withExtendedLifetime(sink) {
                try transfer(
                    curl, url: url, body: body, headers: headers, tls: tls, endpoint: endpoint, pool: pool,
                    write: write,
                    box: Unmanaged.passUnretained(sink).toOpaque()
                ) { handle in
                    let settings = [
                        curl.setLong(handle, Option.timeoutMilliseconds, milliseconds),
                        curl.setLong(handle, Option.connectTimeoutMilliseconds, connectMilliseconds),
                    ]
                    return settings.first { $0 != 0 } ?? 0
                }
            }
            if sink.isTooLarge {
                throw EtcdError(
                    .badResponse, endpoint: endpoint,
                    message: "the answer is over \(maximumAnswerSize) bytes, more than etcd sends")
            }
            if let failure = outcome.failure { throw EtcdError(.unreachable, endpoint: endpoint, message: failure) }
            return PlainHTTP.Answer(status: outcome.status, body: sink.data)
        }

        /// `seconds` as libcurl's whole milliseconds: at least 1 (0 means no timeout to libcurl), at most `Int.max`.
        static func milliseconds(_ seconds: TimeInterval) -> Int {
            let milliseconds = (seconds * 1000).rounded(.up)
            return milliseconds >= Double(Int.max) ? Int.max : max(1, Int(milliseconds))
        }

        /// Cleans up the idle handles of `pool` (nothing when libcurl was never found: it then holds none).
        static func drain(_ pool: CurlHandlePool) {
            if case .success(let curl) = library { pool.drain(curl) }
        }

        /// libcurl's functions, or ``EtcdError/Code/invalidEndpoint`` saying why there are none.
        static func loaded(endpoint: String) throws(EtcdError) -> Library {
            switch library {
            case .success(let found): found
            case .failure(let failure): throw EtcdError(.invalidEndpoint, endpoint: endpoint, message: failure.reason)
            }
        }

        /// libcurl's write callback: the bytes, their size and count, and the box given with them.
        typealias WriteFunction =
            @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int

        /// Runs one POST of `body` to `url` (`http://` or `https://`) on the calling thread, with `headers`, the TLS
        /// files of `tls` (the authorities instead of the system's trust store, the client certificate and key),
        /// `control`'s callbacks (another thread may end the transfer with it; so does the process's exit), the
        /// settings `configure` adds (it returns the first non-zero `CURLcode` of them), and `write` given each
        /// part of the body with `box`. Returns the HTTP status (0 when none came), or libcurl's words when the
        /// transfer failed.
        ///
        /// - Throws: ``EtcdError/Code/unreachable`` when libcurl cannot start the transfer.
        static func transfer(
            _ curl: Library, url: String, body: Data, headers: [(String, String)], tls: EtcdTLS? = nil,
            endpoint: String, pool: CurlHandlePool? = nil, control: CurlTransferControl = CurlTransferControl(),
            write: WriteFunction, box: UnsafeMutableRawPointer, configure: (OpaquePointer) -> Int32
        ) throws(EtcdError) -> (status: Int, failure: String?) {
            // With a pool, a handle of the endpoint and its connection, or a new one with a control of its own (which
            // its connections keep as their callbacks' box, so it must live as long as the handle).
            let leased = pool?.take(endpoint, curl)
            let control = leased?.control ?? (pool == nil ? control : CurlTransferControl())
            // Recorded until the handle is cleaned up or given back, so that the process's exit ends it first
            // (``CurlTransfers``). While exiting, a leased handle is left as it is: libcurl is not called then.
            guard CurlTransfers.begin(control) else {
                throw EtcdError(.unreachable, endpoint: endpoint, message: "the process is exiting")
            }
            defer { CurlTransfers.end(control) }
            guard let handle = leased?.pointer ?? curl.easyInit() else {
                throw EtcdError(.unreachable, endpoint: endpoint, message: "libcurl could not make a transfer")
            }
            // A handle whose transfer got its answer goes back to the pool with its connection; any other is
            // cleaned up, its connection closed.
            var answered = false
            defer {
                if answered, let pool {
                    pool.giveBack(CurlHandlePool.Handle(pointer: handle, control: control), endpoint, curl)
                } else {
                    curl.easyCleanup(handle)
                }
            }
            var list: OpaquePointer?
            defer { curl.slistFreeAll(list) }
            // No `Expect: 100-continue` (libcurl's own for a large body): the gateway answers at once.
            for line in headers.map({ "\($0.0): \($0.1)" }) + ["Expect:"] {
                guard let longer = curl.slistAppend(list, line) else {
                    throw EtcdError(.unreachable, endpoint: endpoint, message: "libcurl could not take a header")
                }
                list = longer
            }
            let scheme = url.lowercased().hasPrefix("https:") ? Scheme.https : Scheme.http
            // With a server name, the URL names it (the name TLS sends and checks the certificate against) and
            // libcurl connects to the endpoint's host and port instead (`CURLOPT_CONNECT_TO`).
            var connectTo: OpaquePointer?
            defer { curl.slistFreeAll(connectTo) }
            var url = url
            if scheme == Scheme.https, let name = tls?.serverName, let named = Self.url(url, naming: name) {
                guard let entry = curl.slistAppend(nil, named.connectTo) else {
                    throw EtcdError(.unreachable, endpoint: endpoint, message: "libcurl could not take a server name")
                }
                connectTo = entry
                url = named.url
            }
            var errorText = [CChar](repeating: 0, count: 256 + 1)  // CURL_ERROR_SIZE
            let code: Int32 = url.withCString { url in
                body.withUnsafeBytes { body in
                    errorText.withUnsafeMutableBufferPointer { errorText in
                        let settings: [Int32] = [
                            curl.setPointer(handle, Option.url, url),
                            curl.setPointer(handle, Option.connectTo, UnsafeRawPointer(connectTo)),
                            curl.setLong(handle, Option.protocols, scheme),
                            curl.setLong(handle, Option.redirectProtocols, scheme),
                            // No redirect is followed (libcurl's default, said here): a 3xx is an error.
                            curl.setLong(handle, Option.followLocation, 0),
                            curl.setLong(handle, Option.noSignal, 1),
                            curl.setLong(handle, Option.post, 1),
                            curl.setLong(handle, Option.postFieldSize, body.count),
                            // An empty body still needs a pointer, or libcurl reads one from a callback.
                            curl.setPointer(handle, Option.postFields, body.baseAddress ?? UnsafeRawPointer(url)),
                            curl.setPointer(handle, Option.httpHeader, UnsafeRawPointer(list)),
                            curl.setFunction(handle, Option.writeFunction, unsafeBitCast(write, to: Callback.self)),
                            curl.setPointer(handle, Option.writeData, box),
                            curl.setPointer(handle, Option.errorBuffer, errorText.baseAddress),
                            control.configure(curl, handle),
                            configure(handle),
                        ]
                        if let refused = settings.first(where: { $0 != 0 }) { return refused }
                        let files = [
                            (Option.caInfo, tls?.certificateAuthorities?.path),
                            (Option.sslCertificate, tls?.certificate?.path), (Option.sslKey, tls?.key?.path),
                        ]
                        for case (let option, let path?) in files {
                            let set = path.withCString { curl.setPointer(handle, option, $0) }
                            guard set == 0 else { return set }
                        }
                        if tls?.certificateAuthorities == nil, let bundle = trustStoreFallback(curl, handle) {
                            let set = bundle.withCString { curl.setPointer(handle, Option.caInfo, $0) }
                            guard set == 0 else { return set }
                        }
                        return curl.perform(handle)
                    }
                }
            }
            guard code == 0 else {
                let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let meaning = curl.strerror(code).map { String(cString: $0) } ?? "libcurl error"
                let said = detail.isEmpty || detail == meaning ? meaning : "\(meaning): \(detail)"
                let hint = scheme == Scheme.https ? tlsHint(code, detail).map { "; \($0)" } ?? "" : ""
                return (0, "\(said) (libcurl error \(code))\(hint)")
            }
            var status = 0
            guard curl.getLong(handle, Info.responseCode, &status) == 0, status > 0 else {
                return (0, "the server closed the connection without an answer")
            }
            answered = true
            var connects = 0
            if let pool, curl.getLong(handle, Info.connectionsOpened, &connects) == 0 {
                pool.record(connectionsOpened: connects)
            }
            return (status, nil)
        }

        /// `url` with its host replaced by `name`, and libcurl's `CURLOPT_CONNECT_TO` entry that sends its
        /// connections to the original host and port (`name:port:host:port`, an IPv6 address in brackets); `nil` for
        /// a URL without a host.
        static func url(_ url: String, naming name: String) -> (url: String, connectTo: String)? {
            guard var components = URLComponents(string: url), let host = components.host else { return nil }
            let port = components.port ?? 443
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            components.host = name
            guard let renamed = components.string else { return nil }
            return (renamed, "\(name):\(port):\(bracketed):\(port)")
        }

        /// What a failed TLS transfer's libcurl error `code` most likely means for an etcd cluster, in the words of
        /// etcdctl's options, or `nil` for a failure that is not about TLS files.
        private static func tlsHint(_ code: Int32, _ detail: String) -> String? {
            switch code {
            case 58:  // CURLE_SSL_CERTPROBLEM
                return "the client certificate (--cert) or its key (--key) cannot be used: a key that is not the "
                    + "certificate's, or a file that is not PEM"
            case 60 where detail.contains("subject name") || detail.contains("host name"):
                return "the member's certificate does not name the endpoint's host: reach it by a name the certificate "
                    + "has, or give that name as the TLS files' server name"
            case 60:  // CURLE_PEER_FAILED_VERIFICATION
                return "the member's certificate is not signed by an authority this client trusts: --cacert names "
                    + "the cluster's CA file"
            case 35, 55, 56:  // CURLE_SSL_CONNECT_ERROR, CURLE_SEND_ERROR, CURLE_RECV_ERROR
                return "if the cluster requires client certificates (--client-cert-auth), it refused this client's "
                    + "(--cert, --key), or its lack of one: it takes those its --trusted-ca-file signed"
            default:
                return nil
            }
        }

        /// The body as it arrives, at most `limit` bytes.
        private final class Sink {
            let limit: Int
            var data = Data()
            var isTooLarge = false
            init(limit: Int) { self.limit = limit }
        }

        /// The bundle file to trust when libcurl was built without a default one: the first of the files
        /// URLSession looks for in the same case, so both paths trust the same authorities.
        private static func trustStoreFallback(_ curl: Library, _ handle: OpaquePointer) -> String? {
            var path: UnsafeMutablePointer<CChar>?
            guard curl.getString(handle, Info.caInfo, &path) == 0, path == nil else { return nil }
            let candidates = [
                "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                "/usr/share/ssl/certs/ca-bundle.crt", "/usr/local/share/certs/ca-root-nss.crt", "/etc/ssl/cert.pem",
            ]
            return candidates.first { access($0, R_OK) == 0 }
        }

        // MARK: - libcurl's functions and constants (curl/curl.h; stable since libcurl 7.x)

        /// A libcurl callback as ``Library/setFunction(_:_:_:)`` takes it: a `@convention(c)` function with the
        /// parameters libcurl documents for the option, cast with `unsafeBitCast` (C's cast between function types).
        typealias Callback = codable_defaults_curl_function

        /// The few libcurl functions the client calls. `curl_easy_setopt` and `curl_easy_getinfo` are variadic in
        /// C, which Swift cannot call, and which a call through a pointer of fixed parameters would get wrong on
        /// some platforms (a variadic argument may be passed elsewhere than a fixed one, or need more of the
        /// caller): they are called through the C functions of CodableDefaultsCurlShim, which call them as the
        /// variadic functions they are, one method here for each type of argument. The others have fixed
        /// parameters and are called directly.
        struct Library: @unchecked Sendable {
            let easyInit: @convention(c) () -> OpaquePointer?
            let easyCleanup: @convention(c) (OpaquePointer?) -> Void
            let easyReset: @convention(c) (OpaquePointer?) -> Void
            let perform: @convention(c) (OpaquePointer?) -> Int32
            /// `curl_easy_setopt`, for CodableDefaultsCurlShim's functions only.
            let setopt: UnsafeMutableRawPointer
            /// `curl_easy_getinfo`, for CodableDefaultsCurlShim's functions only.
            let getinfo: UnsafeMutableRawPointer
            let slistAppend: @convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> OpaquePointer?
            let slistFreeAll: @convention(c) (OpaquePointer?) -> Void
            let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?

            /// Sets an option that takes a `long`; returns libcurl's `CURLcode` (0 when it took it).
            func setLong(_ handle: OpaquePointer, _ option: Int32, _ value: Int) -> Int32 {
                codable_defaults_curl_setopt_long(setopt, UnsafeMutableRawPointer(handle), option, value)
            }

            /// Sets an option that takes an object pointer; returns libcurl's `CURLcode` (0 when it took it).
            func setPointer(_ handle: OpaquePointer, _ option: Int32, _ value: UnsafeRawPointer?) -> Int32 {
                codable_defaults_curl_setopt_pointer(setopt, UnsafeMutableRawPointer(handle), option, value)
            }

            /// Sets an option that takes a callback (see ``Callback``); returns libcurl's `CURLcode` (0 when it
            /// took it).
            func setFunction(_ handle: OpaquePointer, _ option: Int32, _ value: Callback) -> Int32 {
                codable_defaults_curl_setopt_function(setopt, UnsafeMutableRawPointer(handle), option, value)
            }

            /// Reads an item that is a `long` into `value`; returns libcurl's `CURLcode` (0 when it did).
            func getLong(_ handle: OpaquePointer, _ info: Int32, _ value: inout Int) -> Int32 {
                codable_defaults_curl_getinfo_long(getinfo, UnsafeMutableRawPointer(handle), info, &value)
            }

            /// Reads an item that is a string into `value` (libcurl's pointer, or `nil`); returns libcurl's
            /// `CURLcode` (0 when it did).
            func getString(_ handle: OpaquePointer, _ info: Int32, _ value: inout UnsafeMutablePointer<CChar>?)
                -> Int32
            {
                codable_defaults_curl_getinfo_string(getinfo, UnsafeMutableRawPointer(handle), info, &value)
            }
        }

        /// Why libcurl could not be used.
        private struct Unavailable: Error {
            var reason: String
        }

        /// libcurl's functions, found once: in the process (URLSession's libcurl), else in `libcurl.so.4`.
        private static let library: Result<Library, Unavailable> = {
            var handle = dlopen(nil, RTLD_NOW)
            if handle == nil || dlsym(handle, "curl_easy_init") == nil {
                handle = dlopen("libcurl.so.4", RTLD_NOW)
            }
            guard let handle else {
                let said = dlerror().map { String(cString: $0) } ?? "not found"
                return .failure(Unavailable(reason: "https:// needs libcurl, which this process cannot load (\(said))"))
            }
            func function<Function>(_ name: String, as _: Function.Type) throws(Unavailable) -> Function {
                guard let address = dlsym(handle, name) else {
                    throw Unavailable(reason: "https:// needs libcurl, and this process's libcurl has no \(name)")
                }
                return unsafeBitCast(address, to: Function.self)
            }
            do throws(Unavailable) {
                let curl = Library(
                    easyInit: try function("curl_easy_init", as: (@convention(c) () -> OpaquePointer?).self),
                    easyCleanup: try function("curl_easy_cleanup", as: (@convention(c) (OpaquePointer?) -> Void).self),
                    easyReset: try function("curl_easy_reset", as: (@convention(c) (OpaquePointer?) -> Void).self),
                    perform: try function("curl_easy_perform", as: (@convention(c) (OpaquePointer?) -> Int32).self),
                    setopt: try function("curl_easy_setopt", as: UnsafeMutableRawPointer.self),
                    getinfo: try function("curl_easy_getinfo", as: UnsafeMutableRawPointer.self),
                    slistAppend: try function(
                        "curl_slist_append",
                        as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> OpaquePointer?).self),
                    slistFreeAll: try function(
                        "curl_slist_free_all", as: (@convention(c) (OpaquePointer?) -> Void).self),
                    strerror: try function(
                        "curl_easy_strerror", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self)
                )
                // Once, before any transfer (reference-counted, and URLSession has usually done it already).
                let initialize = try function("curl_global_init", as: (@convention(c) (Int) -> Int32).self)
                guard initialize(3) == 0 else {  // CURL_GLOBAL_ALL
                    throw Unavailable(reason: "https:// needs libcurl, and curl_global_init failed")
                }
                // After libcurl's initialization, which registered the exit handler of the TLS library under it:
                // this one then runs first, and ends the transfers before that one frees what they use.
                atexit { CurlTransfers.endAllForExit() }
                return .success(curl)
            } catch {
                return .failure(error)
            }
        }()

        /// `CURLoption` values.
        enum Option {
            static let writeData: Int32 = 10_001
            static let url: Int32 = 10_002
            static let errorBuffer: Int32 = 10_010
            static let postFields: Int32 = 10_015
            static let httpHeader: Int32 = 10_023
            static let noProgress: Int32 = 43
            static let post: Int32 = 47
            static let followLocation: Int32 = 52
            static let postFieldSize: Int32 = 60
            static let progressData: Int32 = 10_057
            static let caInfo: Int32 = 10_065
            static let connectTo: Int32 = 10_243
            static let sslCertificate: Int32 = 10_025
            static let sslKey: Int32 = 10_087
            static let noSignal: Int32 = 99
            static let timeoutMilliseconds: Int32 = 155
            static let connectTimeoutMilliseconds: Int32 = 156
            static let protocols: Int32 = 181
            static let redirectProtocols: Int32 = 182
            static let writeFunction: Int32 = 20_011
            static let socketOptionFunction: Int32 = 20_148
            static let socketOptionData: Int32 = 10_149
            static let closeSocketFunction: Int32 = 20_208
            static let closeSocketData: Int32 = 10_209
            static let transferInfoFunction: Int32 = 20_219
        }

        /// `CURLINFO` values.
        enum Info {
            static let responseCode: Int32 = 0x20_0000 + 2
            static let connectionsOpened: Int32 = 0x20_0000 + 26
            static let caInfo: Int32 = 0x10_0000 + 61
        }

        /// `CURLPROTO_*` values.
        private enum Scheme {
            static let http = 1
            static let https = 2
        }
    }
#endif
