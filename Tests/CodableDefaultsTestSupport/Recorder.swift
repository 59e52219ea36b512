@testable import CodableDefaults

/// Records what a handler was called with.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])

    var values: [Value] { storage.withLock { $0 } }
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
}
