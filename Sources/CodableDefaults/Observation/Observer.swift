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
///
/// `@unchecked Sendable`: the compiler checks only final classes. The delivery state is `Locked`; what a
/// subclass keeps for its deliveries (``KeyObserver``'s last value) is touched only by the delivering thread,
/// and one delivery hands over to the next under the lock.
class Observer: @unchecked Sendable {
    /// Who delivers, what is noted for delivery, whether the observer was cancelled.
    private struct Delivery {
        var isCancelled = false
        var isDelivering = false
        var pendingNames = Set<MemberName>()
        var hasPending = false

        /// Takes the names noted for delivery.
        mutating func takePending() -> Set<MemberName> {
            hasPending = false
            defer { pendingNames = [] }
            return pendingNames
        }
    }

    private let delivery = Locked(Delivery())
    /// Held (entered) while a delivery runs, so ``cancel()`` can wait for it.
    private let running = DispatchGroup()
    /// The store, weakly: the store holds its observers. Set once, in `init`, and never again (a `var` only
    /// because `weak let` needs Swift 6.3); loading a weak reference is safe from any thread.
    private(set) weak var store: Store?

    init(store: Store) {
        self.store = store
    }

    /// Delivers what changed in `names` (see the type's discussion). Call without holding the store's lock.
    final func deliver(names: Set<MemberName>) {
        var batch: Set<MemberName>? = delivery.withLock { delivery in
            delivery.pendingNames.formUnion(names)
            delivery.hasPending = true
            guard !delivery.isDelivering && !delivery.isCancelled else { return nil }
            delivery.isDelivering = true
            running.enter()
            return delivery.takePending()
        }
        guard batch != nil else { return }
        Self.deliveryDepth += 1
        defer { Self.deliveryDepth -= 1 }
        while let names = batch {
            run(names: names)
            batch = delivery.withLock { delivery in
                if delivery.hasPending && !delivery.isCancelled { return delivery.takePending() }
                delivery.isDelivering = false
                delivery.pendingNames = []
                delivery.hasPending = false
                return nil
            }
        }
        running.leave()
    }

    /// Calls `body` (which calls the handler) unless the observer was cancelled, checking under the lock so
    /// that a cancel racing this call waits for it.
    final func callHandler(_ body: () -> Void) {
        guard !delivery.withLock({ $0.isCancelled }) else { return }
        body()
    }

    /// One delivery: compare and call the handler. Runs on the delivering thread only.
    func run(names: Set<MemberName>) {}

    /// Stops deliveries and unregisters from the store. Waits for a handler call running on another thread,
    /// unless this thread is delivering for an observer itself (see the type's discussion).
    final func cancel() {
        let insideADelivery = Self.deliveryDepth > 0
        let (first, mustWait): (Bool, Bool) = delivery.withLock { delivery in
            defer { delivery.isCancelled = true }
            return (!delivery.isCancelled, delivery.isDelivering && !insideADelivery)
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
///
/// `@unchecked Sendable`: `last` and `needsInitialCall` are touched only by the delivering thread (see
/// ``Observer``); everything else is immutable and `Sendable`.
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
            let change = Defaults.Change(key: key.name, oldValue: last, newValue: last, isSecret: key.isSecret)
            callHandler { handler(change) }
        }
        let current = store.value(for: key)
        guard !Self.same(last, current, key: key) else { return }
        let change = Defaults.Change(key: key.name, oldValue: last, newValue: current, isSecret: key.isSecret)
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
///
/// `@unchecked Sendable` only because its superclass is; its one property is immutable and `Sendable`.
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
