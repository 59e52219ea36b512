@testable import CodableDefaults

/// Records what a handler was called with.
final class Recorder<Value: Sendable>: Sendable {
    private let lock = Lock()
    nonisolated(unsafe) private var storage: [Value] = []

    var values: [Value] { lock.withLock { storage } }
    func append(_ value: Value) { lock.withLock { storage.append(value) } }
}
