import Dispatch

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A weak reference to a store.
final class WeakStore {
    weak var store: Store?
    init(_ store: Store) { self.store = store }
}

/// The stores open in this process, one per file path, so that every ``Defaults`` on one file shares one
/// in-memory state. Holds them weakly; flushes the live ones at normal process exit.
///
/// A store is loaded (its file read, migrated, moved aside: user code may run) with no lock held. While it
/// loads, its path has a loading entry: another thread opening the same path waits for that load and then
/// gets the same store (or, if the load failed, makes its own attempt), so one path never has two stores.
/// The wait has no time limit (a migration may take long).
///
/// A wait that could never end is refused with an `invalidArgument` error instead: the registry records
/// which thread runs each load and which load each waiting thread waits for, and a thread may not wait for a
/// load whose thread waits, directly or through other loads, for one this thread runs. That covers a load
/// that opens its own path again on the same thread (a migration step or error handler that opens the store
/// being opened), and crossed opens: thread A opening P1 whose step opens P2 while thread B opens P2 whose
/// step opens P1 (the second of the two waits is refused).
///
/// What the registry cannot see is a thread blocked outside it: a step that waits for another thread
/// (`DispatchQueue.global().sync { try Defaults(url: sameURL) }`) which opens the store being loaded blocks
/// both threads for good. A migration step or error handler must not wait for another thread that opens the
/// same store.
enum StoreRegistry {
    /// A path's entry: its open store, or the load under way.
    private enum Entry {
        case open(WeakStore)
        case loading(Loading)
    }

    /// A load under way: the thread running it, and a group entered until it ends.
    ///
    /// `@unchecked Sendable`: both properties are immutable; `pthread_t` is a pointer on Darwin, used here as
    /// an identity only (compared, never dereferenced).
    private final class Loading: @unchecked Sendable {
        let thread = pthread_self()
        let done = DispatchGroup()
    }

    /// What the registry holds, reachable only under its lock.
    private struct State {
        /// By path (``key(for:)``), compared as bytes (see ``MemberName``): two files whose names differ only
        /// in Unicode normalization are two files to most kernels, and get two stores; in a case-insensitive
        /// directory the name is case-folded, so its spellings give one store.
        var entries: [MemberName: Entry] = [:]
        /// The load each waiting thread waits for, while it waits. A thread waits for one load at a time.
        var waits: [(thread: pthread_t, loading: Loading)] = []
        /// The stores no path names (an engine's, such as etcd's): not shared, only flushed with the others.
        var unnamed: [WeakStore] = []
        var exitHookInstalled = false

        #if CODABLE_DEFAULTS_TESTING
            /// How many threads wait for `loading` (for tests; debug builds only).
            func waiters(for loading: Loading) -> Int {
                waits.filter { $0.loading === loading }.count
            }
        #endif
    }

    /// What to do after looking at the registry.
    private enum Step {
        case found(Store)
        case wait(Loading)
        case load(Loading)
        case reentered
        case crossed
    }

    private static let state = Locked(State())

    /// The registry's key for the file at `path` (a canonical path): its spelling, case-folded where a
    /// directory on the way is case-insensitive (see ``DurableFile/registryKey(forCanonicalPath:comparison:)``).
    static func key(for path: String) -> MemberName {
        MemberName(DurableFile.registryKey(forCanonicalPath: path))
    }

    /// The open store for `path`, or a new one made by `open` (called without the registry's lock). Spellings
    /// of one file in a case-insensitive directory (`Settings.json`, `settings.json`) share one store.
    ///
    /// - Throws: What `open` throws, or `invalidArgument` when waiting for the load of `path` under way would
    ///   never end: `open` itself, on this thread, opens `path`, or the load's thread waits for a load that
    ///   this thread runs.
    static func store(
        for path: String, open: () throws(DefaultsError) -> Store
    ) throws(DefaultsError) -> Store {
        let key = key(for: path)
        while true {
            let step: Step = state.withLock { state in
                switch state.entries[key] {
                case .open(let weak)?:
                    if let store = weak.store { return .found(store) }
                case .loading(let loading)?:
                    if pthread_equal(loading.thread, pthread_self()) != 0 { return .reentered }
                    if waitCloses(loading, state) { return .crossed }
                    state.waits.append((pthread_self(), loading))
                    return .wait(loading)
                case nil:
                    break
                }
                let loading = Loading()
                loading.done.enter()
                state.entries[key] = .loading(loading)
                return .load(loading)
            }
            switch step {
            case .found(let store):
                return store
            case .reentered:
                throw DefaultsError(
                    .invalidArgument,
                    "the store was opened again while it was being opened, on the same thread (by a migration step "
                        + "or an error handler); a migration step cannot open the store it is migrating",
                    path: path)
            case .crossed:
                throw DefaultsError(
                    .invalidArgument,
                    "the store is being opened by another thread whose opening waits for a store this thread is "
                        + "opening (each side's migration step or error handler opens the other's store); a "
                        + "migration step cannot open a store whose opening waits for it", path: path)
            case .wait(let loading):
                loading.done.wait()
                state.withLock { state in
                    state.waits.removeAll { pthread_equal($0.thread, pthread_self()) != 0 }
                }
            case .load(let loading):
                defer { loading.done.leave() }
                let store: Store
                do throws(DefaultsError) {
                    store = try open()
                } catch {
                    state.withLock { $0.entries[key] = nil }
                    throw error
                }
                let installHooks = state.withLock { register(store, for: key, in: &$0) }
                if installHooks { installFlushHooks() }
                return store
            }
        }
    }

    /// Whether this thread waiting for `loading` would close a cycle of waits: following, from the thread
    /// that runs `loading`, the load each thread waits for leads back to this thread.
    private static func waitCloses(_ loading: Loading, _ state: State) -> Bool {
        let waits = state.waits
        var thread = loading.thread
        // Each step goes to another waiting thread; without a cycle back to this one, the chain ends.
        for _ in 0...waits.count {
            if pthread_equal(thread, pthread_self()) != 0 { return true }
            guard let next = waits.first(where: { pthread_equal($0.thread, thread) != 0 }) else { return false }
            thread = next.loading.thread
        }
        return false
    }

    /// Records a loaded store; returns whether the hooks that flush every store at exit (and, on the mobile
    /// platforms, when the app leaves the foreground) are still to be installed, which the caller does
    /// outside the lock.
    private static func register(_ store: Store, for key: MemberName, in state: inout State) -> Bool {
        state.entries[key] = .open(WeakStore(store))
        if state.entries.count > 64 {
            state.entries = state.entries.filter { _, entry in
                if case .open(let weak) = entry { return weak.store != nil }
                return true
            }
        }
        guard !state.exitHookInstalled else { return false }
        state.exitHookInstalled = true
        return true
    }

    /// Flushes every open store at normal process exit, and where apps are suspended without exiting (iOS,
    /// tvOS, visionOS, watchOS), when the app moves to the background or is about to terminate (see
    /// ``AppLifecycle``). Called once, outside the registry's lock.
    private static func installFlushHooks() {
        atexit { StoreRegistry.saveAll() }
        AppLifecycle.flushOnSuspension()
    }

    /// Keeps `store`, which no path names (an engine's), among the stores ``saveAll(where:)`` saves: at exit
    /// and, on the mobile platforms, when the app leaves the foreground. Held weakly.
    static func track(_ store: Store) {
        let installHooks = state.withLock { state in
            state.unnamed.removeAll { $0.store == nil }
            state.unnamed.append(WeakStore(store))
            guard !state.exitHookInstalled else { return false }
            state.exitHookInstalled = true
            return true
        }
        if installHooks { installFlushHooks() }
    }

    #if CODABLE_DEFAULTS_TESTING
        /// How many threads wait for the load of `path` under way (for tests; debug builds only); 0 when none is.
        static func waiterCount(for path: String) -> Int {
            let key = key(for: path)
            return state.withLock { state in
                if case .loading(let loading)? = state.entries[key] { return state.waiters(for: loading) }
                return 0
            }
        }
    #endif

    /// Saves the unsaved changes of every open store, durably, one store after another on the calling
    /// thread, reporting each failure to its store's error handler (called outside the registry's lock).
    /// When it returns, every change made before the call is on disk or reported, and no file lock is held.
    ///
    /// - Parameter included: Which stores to save (tests save only their own: the registry is the process's);
    ///   every store when omitted. Called outside the lock.
    static func saveAll(where included: (Store) -> Bool = { _ in true }) {
        let open: [Store] = state.withLock { state in
            state.entries.values.compactMap { entry in
                if case .open(let weak) = entry { return weak.store }
                return nil
            } + state.unnamed.compactMap(\.store)
        }
        let live = open.filter(included)
        for store in live {
            do { try store.save() } catch { store.report(error) }
        }
    }
}
