import CodableDefaults

/// Records what a handler was called with.
package final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])

    /// An empty recorder.
    package init() {}

    /// What was recorded, in order.
    package var values: [Value] { storage.withLock { $0 } }
    /// Records `value`.
    package func append(_ value: Value) { storage.withLock { $0.append(value) } }
}
