import CodableDefaults
import Foundation

extension Defaults {
    /// Opens the store kept in an etcd cluster under the keys that start with `prefix`: each key `prefix + name`
    /// holds one value's compact JSON text (so `etcdctl get myservice/volume` shows `0.8`, and other tools may
    /// write values).
    ///
    /// ```swift
    /// let defaults = try await Defaults(etcd: [URL(string: "http://127.0.0.1:2379")!], prefix: "myservice/")
    /// defaults[.volume] = 0.8          // in memory at once, in etcd after 500 ms of quiet
    /// try await defaults.save()        // acknowledged by etcd, now
    /// ```
    ///
    /// Every key API works as on a file, reads served from memory. Each call makes a new store (nothing is shared
    /// with another `Defaults` on the same prefix: it stands for another machine). A watch of the prefix takes in
    /// what other writers store and tells observers, on the store's queue; it resumes after a disconnect without
    /// missing a change. The article "Sharing Settings Across Machines" (in the `CodableDefaults` documentation)
    /// tells the whole story; the contract in short:
    ///
    /// - **Threads.** Callable from any thread or task. An `.immediate` set and the synchronous `save()` block the
    ///   calling thread until etcd answers (needing no other thread, so they cannot deadlock the cooperative pool);
    ///   the `async` forms wait on the store's queue.
    /// - **Durability.** A change is saved once etcd acknowledged its transaction (a majority of the cluster): one
    ///   transaction per save, of up to 127 keys and the history record and 1 MiB, several (not atomic as a whole)
    ///   beyond. A change etcd refuses stays unsaved alone and is named by the save's error; the others are written.
    ///   `modify` is a compare-and-write transaction, retried when another writer was first.
    /// - **History.** Each save's transaction also puts a record in the reserved key `prefix`, 0xFF, `history`;
    ///   ``CodableDefaults/Defaults/history()-29g0`` reads past values from etcd's revisions, back to
    ///   ``CodableDefaults/Defaults/Options/history``'s bound or to what etcd compacted away.
    /// - **Offline.** With `localCopy`, the store opens from its copy when no endpoint answers
    ///   (``CodableDefaultsEtcd/EtcdConnection/isStale``), keeps changes in it durably, and sends them when a member
    ///   answers; a key another writer changed meanwhile keeps etcd's value, reported as a `conflict`.
    /// - **Errors.** With no endpoint answering, a save fails with `writeFailed` and its changes stay unsaved (the
    ///   store saves them once etcd answers again). A value another tool stored that is not JSON reads as the key's
    ///   default, reports `decodingFailed`, and is left as it is until this store sets the key.
    ///
    /// - Parameters:
    ///   - endpoints: Client URLs of the cluster's members (`http://host:2379` or `https://host:2379`, checked
    ///     against the system's trust store); the first that answers is used, the others when it stops answering.
    ///   - prefix: The keys of this store start with it, such as `"myservice/"`; the empty prefix is the whole
    ///     key space.
    ///   - saveMode: When changes made through this `Defaults` are written to etcd.
    ///   - username: The etcd user to authenticate as (etcd's authentication), or `nil` when it has none.
    ///   - password: The user's password.
    ///   - tls: The TLS files of a cluster that runs a private authority or requires client certificates
    ///     (``CodableDefaultsEtcd/EtcdTLS``: etcdctl's `--cacert`, `--cert`, `--key`), or `nil` for the system's
    ///     trust store and no client certificate.
    ///   - timeouts: How long the store waits for one endpoint, connecting and for an answer, before it tries the
    ///     next (``CodableDefaultsEtcd/EtcdTimeouts``: etcdctl's `--dial-timeout` and `--command-timeout`, 2 and 5
    ///     seconds).
    ///   - options: Limits (value depth, key length; `maximumFileSize` bounds what one answer of etcd may take in
    ///     memory: twice that, plus 1 MiB, for the base64 and JSON around the values) and how much history
    ///     ``history()-29g0`` reads; the file's policies (unreadable file, lock timeout) and migrations do not apply.
    ///   - localCopy: A file (of this process alone) where the store keeps a copy of the prefix, or `nil` for none.
    ///     With one, the store opens with no endpoint answering (serving the copy,
    ///     ``CodableDefaultsEtcd/EtcdConnection/isStale`` until it caught up), and changes made while none answers are
    ///     kept in it durably and sent when a member answers (see "Offline" above).
    ///   - onError: If not `nil`, becomes ``onError`` before the store opens.
    /// - Throws: ``DefaultsError``: `invalidArgument` for an endpoint that is not an `http(s)://` URL with a host
    ///   (and a port in 1...65535 if it names one), an option out of range, a TLS certificate without its key (on
    ///   Apple platforms, any PEM client certificate: `EtcdTLS.clientIdentity` takes it; with musl, any TLS file);
    ///   `readFailed` naming a TLS file that cannot be read or
    ///   is not PEM; `invalidArgument` for a timeout not more than zero; `readFailed` quoting etcd when the prefix cannot be read (no endpoint
    ///   answers and there is no local copy, the user name or password is refused); for the local copy,
    ///   `lockTimeout` when another store uses it, and what reading it throws (`invalidJSON`, `decodingFailed`
    ///   for a copy of another prefix): it is then left as it is.
    public convenience init(
        etcd endpoints: [URL], prefix: String, saveMode: SaveMode = .default, username: String? = nil,
        password: String? = nil, tls: EtcdTLS? = nil, timeouts: EtcdTimeouts = EtcdTimeouts(),
        options: Options = .default, localCopy: URL? = nil, onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) async throws(DefaultsError) {
        let storage = try Self.etcdStorage(endpoints, prefix, username, password, tls, timeouts, options, localCopy)
        try await storage.prime()
        try self.init(engine: storage, saveMode: saveMode, options: options, onError: onError)
    }

    /// The most bytes one answer of etcd may take for a store whose file limit is `fileLimit`: twice it (base64
    /// and JSON around the values), plus 1 MiB; `Int.max` when that does not fit (a limit of `Int.max` is none).
    static func answerLimit(forFileLimit fileLimit: Int) -> Int {
        let (twice, overflow) = fileLimit.multipliedReportingOverflow(by: 2)
        let (limit, overflowAgain) = twice.addingReportingOverflow(1 << 20)
        return overflow || overflowAgain ? Int.max : limit
    }

    /// The storage of a store on the cluster at `endpoints`; it connects to nothing yet.
    private static func etcdStorage(
        _ endpoints: [URL], _ prefix: String, _ username: String?, _ password: String?, _ tls: EtcdTLS?,
        _ timeouts: EtcdTimeouts, _ options: Options, _ localCopy: URL?
    ) throws(DefaultsError) -> EtcdStorage {
        for (name, value) in [("connect", timeouts.connect), ("request", timeouts.request)] where value <= .zero {
            throw DefaultsError(.invalidArgument, "the \(name) timeout is \(value); it must be more than zero")
        }
        switch tls?.problem() {
        case .invalid(let message)?: throw DefaultsError(.invalidArgument, message)
        case .unusable(let option, let path, let reason)?:
            throw DefaultsError(.readFailed, "\(option): \(reason)", path: path)
        case nil: break
        }
        let client: EtcdClient
        do {
            // An answer holds the prefix's keys and values in base64 (4 bytes for 3) within JSON: twice the size
            // limit of a store file, and a margin, bound what one answer may take in memory.
            client = try EtcdClient(
                endpoints: endpoints.map(\.absoluteString), user: username, password: password, tls: tls,
                connectTimeout: EtcdTimeouts.seconds(timeouts.connect),
                requestTimeout: EtcdTimeouts.seconds(timeouts.request),
                maximumAnswerSize: answerLimit(forFileLimit: options.maximumFileSize))
        } catch {
            throw DefaultsError(.invalidArgument, "\(error)")
        }
        return EtcdStorage(
            client: client, prefix: prefix, maximumDepth: options.maximumDepth, history: options.history,
            localCopy: localCopy.map { $0.standardizedFileURL.path }, localCopyLimit: options.maximumFileSize)
    }
}

extension Defaults {
    /// ``init(etcd:prefix:saveMode:username:password:tls:timeouts:options:localCopy:onError:)``, on the calling thread, which waits
    /// for etcd's answer: for the synchronous programs of this package (the tool, the benchmarks).
    ///
    /// - Throws: What the initializer throws.
    package static func openingEtcd(
        _ endpoints: [URL], prefix: String, saveMode: SaveMode, username: String? = nil, password: String? = nil,
        tls: EtcdTLS? = nil, timeouts: EtcdTimeouts = EtcdTimeouts(), options: Options = .default,
        localCopy: URL? = nil, onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) throws(DefaultsError) -> Defaults {
        let storage = try etcdStorage(endpoints, prefix, username, password, tls, timeouts, options, localCopy)
        return try Defaults(engine: storage, saveMode: saveMode, options: options, onError: onError)
    }
}

extension Defaults {
    /// The etcd side of this store: its connection's state, or `nil` for a store that is not on etcd (a file, or
    /// memory). Thread-safe; each read of the connection's properties reads the store's state anew.
    public var etcd: EtcdConnection? {
        (engine as? EtcdStorage).map(EtcdConnection.init(storage:))
    }
}

/// The state of a store on etcd (``CodableDefaults/Defaults/etcd``) that no file store has: whether it serves its local
/// copy, and what it has yet to send. A value that reads the store's state at each access; `Sendable`, safe from any
/// thread.
public struct EtcdConnection: Sendable {
    /// The store's storage.
    let storage: EtcdStorage

    /// Whether the store serves its local copy because no endpoint answered when it opened: its values may be older
    /// than etcd's. It turns false once a member answered, the changes kept meanwhile were sent, and the prefix was
    /// read again (observers are told what changed). Always false for a store without a local copy.
    public var isStale: Bool { storage.isStale }

    /// How many changes the store keeps in its local copy because no endpoint answered, not yet sent to etcd (0 for a
    /// store without a local copy).
    public var unsentChangeCount: Int { storage.unsentChangeCount }
}
