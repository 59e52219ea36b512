import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An observation registered with a store: told after changes, it works out whether the value it watches
/// really changed and calls its handler.
///
/// One thread at a time delivers for an observer, and no lock is held while the handler runs. A thread that
/// finds a delivery already running (on another thread, or on its own: a handler that changed what it
/// observes) leaves a note and returns; the delivering thread then looks again before it stops. So calls of
/// one handler never overlap, a handler may read and write the store, two observers whose handlers write
/// each other's keys from two threads cannot deadlock, and re-entrant changes run as a loop rather than a
/// recursion.
///
/// ``cancel()`` from a thread that is not delivering for any observer waits for a call running on another
/// thread, so once it returns the handler is never called again. From a thread that is delivering (inside
/// any observer's handler, of any store) it does not wait: the cancelled handler may finish a call running
/// on another thread, and is never called after that. So a handler may cancel its own token or any other,
/// and two handlers on two threads that cancel each other's tokens cannot deadlock.
class Observer: @unchecked Sendable {
    private let lock = Lock()
    /// Held (entered) while a delivery runs, so ``cancel()`` can wait for it.
    private let running = DispatchGroup()
    // Guarded by `lock`.
    private var isCancelled = false
    private var isDelivering = false
    private var pendingNames = Set<MemberName>()
    private var hasPending = false
    /// The store, weakly: the store holds its observers.
    weak var store: Store?

    init(store: Store) {
        self.store = store
    }

    /// Delivers what changed in `names` (see the type's discussion). Call without holding the store's lock.
    final func deliver(names: Set<MemberName>) {
        var batch: Set<MemberName>? = lock.withLock {
            pendingNames.formUnion(names)
            hasPending = true
            guard !isDelivering && !isCancelled else { return nil }
            isDelivering = true
            running.enter()
            return takePending()
        }
        guard batch != nil else { return }
        Self.deliveryDepth += 1
        defer { Self.deliveryDepth -= 1 }
        while let names = batch {
            run(names: names)
            batch = lock.withLock {
                if hasPending && !isCancelled { return takePending() }
                isDelivering = false
                pendingNames = []
                hasPending = false
                return nil
            }
        }
        running.leave()
    }

    /// Takes the names noted for delivery. Call with the lock held.
    private func takePending() -> Set<MemberName> {
        hasPending = false
        defer { pendingNames = [] }
        return pendingNames
    }

    /// Calls `body` (which calls the handler) unless the observer was cancelled, checking under the lock so
    /// that a cancel racing this call waits for it.
    final func callHandler(_ body: () -> Void) {
        guard !lock.withLock({ isCancelled }) else { return }
        body()
    }

    /// One delivery: compare and call the handler. Runs on the delivering thread only.
    func run(names: Set<MemberName>) {}

    /// Stops deliveries and unregisters from the store. Waits for a handler call running on another thread,
    /// unless this thread is delivering for an observer itself (see the type's discussion).
    final func cancel() {
        let insideADelivery = Self.deliveryDepth > 0
        let (first, mustWait): (Bool, Bool) = lock.withLock {
            defer { isCancelled = true }
            return (!isCancelled, isDelivering && !insideADelivery)
        }
        if first { unregister() }
        if mustWait { running.wait() }
    }

    /// The thread-specific slot that counts the deliveries running on the thread (nested when a handler's
    /// change makes another observer deliver).
    private static let deliveryKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// How many deliveries are running on the calling thread.
    private static var deliveryDepth: Int {
        get { Int(bitPattern: pthread_getspecific(deliveryKey)) }
        set { pthread_setspecific(deliveryKey, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// Removes the observer from the store.
    func unregister() {}
}

/// Observes one typed key.
final class KeyObserver<Value: Codable & Sendable>: Observer, @unchecked Sendable {
    let key: Defaults.Key<Value>
    private let handler: @Sendable (Defaults.Change<Value>) -> Void
    // Touched only by the delivering thread (see `Observer`).
    /// The value last delivered (or read when registering).
    private var last: Value
    /// Whether the `.initial` call is still to be made.
    private var needsInitialCall: Bool

    init(
        store: Store, key: Defaults.Key<Value>, initial: Value, callsAtOnce: Bool,
        handler: @escaping @Sendable (Defaults.Change<Value>) -> Void
    ) {
        self.key = key
        self.handler = handler
        self.last = initial
        self.needsInitialCall = callsAtOnce
        super.init(store: store)
    }

    override func run(names: Set<MemberName>) {
        guard let store else { return }
        if needsInitialCall {
            needsInitialCall = false
            let change = Defaults.Change(key: key.name, oldValue: last, newValue: last)
            callHandler { handler(change) }
        }
        let current = store.value(for: key)
        guard !Self.same(last, current, key: key) else { return }
        let change = Defaults.Change(key: key.name, oldValue: last, newValue: current)
        last = current
        callHandler { handler(change) }
    }

    override func unregister() {
        store?.removeObserver(self, name: key.name)
    }

    /// Whether two values are the same: `==` for `Equatable` values, equal JSON otherwise.
    static func same(_ lhs: Value, _ rhs: Value, key: Defaults.Key<Value>) -> Bool {
        if let isEqual = key.isEqual { return isEqual(lhs, rhs) }
        let encoder = Codec.makeEncoder()
        do {
            return try encoder.encode(lhs) == encoder.encode(rhs)
        } catch {
            // A value that cannot be encoded cannot be compared: count it as a change rather than hide it.
            return false
        }
    }
}

/// Observes the set of names that changed, for ``Defaults/observeAll(_:)``.
final class AllObserver: Observer, @unchecked Sendable {
    private let handler: @Sendable (Set<String>) -> Void

    init(store: Store, handler: @escaping @Sendable (Set<String>) -> Void) {
        self.handler = handler
        super.init(store: store)
    }

    override func run(names: Set<MemberName>) {
        guard !names.isEmpty else { return }
        // The public set is of `String`: two names that differ only in Unicode normalization arrive as one.
        let strings = Set(names.lazy.map(\.string))
        callHandler { handler(strings) }
    }

    override func unregister() {
        store?.removeAllObserver(self)
    }
}
