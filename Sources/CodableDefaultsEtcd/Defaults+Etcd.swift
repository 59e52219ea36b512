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
    /// Every key API works as on a file: reads are served from memory; the typed subscript, `value(for:)`, the
    /// string API, `register`, `reset`, `removeAll`, `batch`, observers and `@Persisted`. Each call makes a new
    /// store (nothing is shared with another `Defaults` on the same prefix: it stands for another machine). A
    /// watch of the prefix takes in what other writers store, at once and whether or not anything observes it,
    /// and tells observers (on the store's queue); after a disconnect it resumes from the last revision seen, so
    /// no change is missed, and when etcd compacted that revision away, the store reloads the prefix and tells
    /// observers what differs.
    ///
    /// ## Threads
    /// As every `Defaults`: callable from any thread or task. An `.immediate` set and the synchronous `save()` wait
    /// for etcd on the calling thread, blocking it until etcd answers or the request times out; the call needs no
    /// other thread, so this cannot deadlock on Swift's cooperative pool. In `async` code, `try await save()` waits
    /// on the store's own queue instead, as `.afterIdle` saves (the default) do.
    ///
    /// ## Durability
    /// A change is saved when etcd acknowledged its transaction (committed by a majority of the cluster): before a
    /// `.immediate` set or `save()` returns. One save is one transaction of every unsaved change (a burst of sets under
    /// `.afterIdle` is one), of up to 127 keys and their history record (etcd's defaults refuse more than 128
    /// operations or 1.5 MiB in one request) and 1 MiB of keys, values and record; a larger save is several
    /// transactions, then not atomic as a whole. A change etcd refuses (a value larger than its request limit, a key
    /// the user may not write) stays unsaved alone: a transaction etcd refuses is sent again one change at a time, so
    /// the other changes of the save are written; the save then fails naming the refused keys, and every later save
    /// tries them again until they are changed or removed. The empty key under the empty prefix (etcd has no empty key)
    /// is refused when it is set. `modify` is a transaction that compares the keys' revisions, retried with the new
    /// values when another writer changed one first (one transaction, so at most 127 keys with the history record).
    /// When the connection is lost after etcd applied that transaction but before its answer arrived, the retry cannot
    /// tell its own write from another writer's and runs the closure again on it (an increment may then count twice);
    /// etcd's own client has the same limit.
    ///
    /// ## History
    /// Every transaction of a save also puts the prefix's history record, in the reserved key `prefix`, the byte
    /// 0xFF, `history` (not UTF-8, so never a setting): who saved, when, and which keys changed, by name. The
    /// change and its record are one transaction; the record's revision is etcd's revision of it (it only grows,
    /// for every writer, and survives restarts). ``history()-29g0`` reads the keys' values before and after each save
    /// from etcd's own past revisions, back to the bound of ``Options/history`` or to what etcd compacted away:
    /// a revert before that throws `historyUnavailable` ("history before revision N is gone"), and when etcd
    /// compacted even the last save's revisions, ``history()-29g0`` throws it too. A secret key's record names it;
    /// its values are never read. With ``Options/history`` off, saves record nothing: a user etcd lets write some
    /// keys of the prefix only, not the record key, needs it off (its saves are refused otherwise, saying so).
    ///
    /// ## Offline
    /// With a `localCopy` file, the store keeps a copy of the prefix there (rewritten atomically and durably after it
    /// opens, after each save and as the watch brings changes; one store at a time uses a copy). With no endpoint
    /// answering, opening serves the copy (``isStale`` is true, and ``onError`` is told), and changes are kept in
    /// it durably before a save returns, so they survive a restart; when a member answers, the kept changes are
    /// sent in a transaction that compares each key's revision with the one the change was made on, the prefix is
    /// read again and observers are told what changed. A key another writer changed meanwhile keeps etcd's value,
    /// and the dropped change is reported as a `conflict` error with both values (a secret key's withheld).
    ///
    /// ## Errors
    /// When no endpoint answers, a save fails with `writeFailed` (quoting each endpoint's failure): the changes
    /// stay unsaved in memory, reads keep serving them and the last values read, and the store asks etcd again
    /// with a backoff (100 ms doubling to 5 s) and saves them once it answers. Failed background saves go to
    /// ``onError``; `save()` throws. A value another tool stored that is not JSON is left as it is
    /// (until this store sets that key): a typed read gives the key's default and reports a `decodingFailed`
    /// error naming the key to ``onError``, and ``value(for:)`` throws it. It is not a stored value: `keys` does not
    /// list it, and `reset` and `removeAll()` leave it; a set writes over it. A key under the prefix whose name is
    /// not UTF-8 is not a setting at all: no `String` names it, and the store leaves it alone.
    ///
    /// - Parameters:
    ///   - endpoints: Client URLs of the cluster's members (`http://host:2379` or `https://host:2379`, checked
    ///     against the system's trust store); the first that answers is used, the others when it stops answering.
    ///   - prefix: The keys of this store start with it, such as `"myservice/"`; the empty prefix is the whole
    ///     key space.
    ///   - saveMode: When changes made through this `Defaults` are written to etcd.
    ///   - username: The etcd user to authenticate as (etcd's authentication), or `nil` when it has none.
    ///   - password: The user's password.
    ///   - options: Limits (value depth, key length; `maximumFileSize` bounds what one answer of etcd may take in
    ///     memory: twice that, plus 1 MiB, for the base64 and JSON around the values) and how much history
    ///     ``history()-29g0`` reads; the file's policies (unreadable file, lock timeout) and migrations do not apply.
    ///   - localCopy: A file (of this process alone) where the store keeps a copy of the prefix, or `nil` for none.
    ///     With one, the store opens with no endpoint answering (serving the copy, ``isStale`` until it caught up),
    ///     and changes made while none answers are kept in it durably and sent when a member answers (see
    ///     "Offline" above).
    ///   - onError: If not `nil`, becomes ``onError`` before the store opens.
    /// - Throws: ``DefaultsError``: `invalidArgument` for an endpoint that is not an `http(s)://` URL with a host
    ///   (and a port in 1...65535 if it names one)
    ///   or an option out of range, `readFailed` quoting etcd when the prefix cannot be read (no endpoint
    ///   answers and there is no local copy, the user name or password is refused); for the local copy,
    ///   `lockTimeout` when another store uses it, and what reading it throws (`invalidJSON`, `decodingFailed`
    ///   for a copy of another prefix): it is then left as it is.
    public convenience init(
        etcd endpoints: [URL], prefix: String, saveMode: SaveMode = .default, username: String? = nil,
        password: String? = nil, options: Options = .default, localCopy: URL? = nil,
        onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) async throws(DefaultsError) {
        let storage = try Self.etcdStorage(endpoints, prefix, username, password, options, localCopy)
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
        _ endpoints: [URL], _ prefix: String, _ username: String?, _ password: String?, _ options: Options,
        _ localCopy: URL?
    ) throws(DefaultsError) -> EtcdStorage {
        let client: EtcdClient
        do {
            // An answer holds the prefix's keys and values in base64 (4 bytes for 3) within JSON: twice the size
            // limit of a store file, and a margin, bound what one answer may take in memory.
            client = try EtcdClient(
                endpoints: endpoints.map(\.absoluteString), user: username, password: password,
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
    /// ``init(etcd:prefix:saveMode:username:password:options:localCopy:onError:)``, on the calling thread, which waits
    /// for etcd's answer: for the synchronous programs of this package (the tool, the benchmarks).
    ///
    /// - Throws: What the initializer throws.
    package static func openingEtcd(
        _ endpoints: [URL], prefix: String, saveMode: SaveMode, username: String? = nil, password: String? = nil,
        localCopy: URL? = nil, onError: (@Sendable (DefaultsError) -> Void)? = nil
    ) throws(DefaultsError) -> Defaults {
        let storage = try etcdStorage(endpoints, prefix, username, password, .default, localCopy)
        return try Defaults(engine: storage, saveMode: saveMode, options: .default, onError: onError)
    }
}

extension Defaults {
    /// Whether this etcd store serves its local copy because no endpoint answered when it opened: its values may be
    /// older than etcd's. It turns false once a member answered, the changes kept meanwhile were sent, and the
    /// prefix was read again (observers are told what changed). Always false for a store without a local copy and
    /// for a file store. Thread-safe.
    public var isStale: Bool {
        (engine as? EtcdStorage)?.isStale ?? false
    }

    /// How many changes this etcd store keeps in its local copy because no endpoint answered, not yet sent to etcd
    /// (0 for a store without a local copy, and for a file store). Thread-safe.
    public var unsentChangeCount: Int {
        (engine as? EtcdStorage)?.unsentChangeCount ?? 0
    }
}
