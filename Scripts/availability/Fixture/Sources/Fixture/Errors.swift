import Foundation

// Every use in this file is an error the check must report; expected.txt lists them by line.

public func decode(_ bytes: [UInt8]) -> String? {
    String(validating: bytes, as: UTF8.self)
}

final class QueueExecutor: TaskExecutor {
    let queue = DispatchQueue(label: "fixture")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

public func run() {
    Task(executorPreference: QueueExecutor()) {}
}

public func home() -> URL {
    FileManager.default.homeDirectoryForCurrentUser
}

// A type used only in an annotation.
nonisolated(unsafe) var annotated: (any TaskExecutor)? = nil

// Guarded on macOS only: still an error on the other platforms.
public func partlyGuarded(_ bytes: [UInt8]) -> String? {
    if #available(macOS 15, *) {
        return String(validating: bytes, as: UTF8.self)
    }
    return nil
}

// The then-branch of #unavailable is where the symbol is missing.
public func wrongBranch(_ bytes: [UInt8]) -> String? {
    if #unavailable(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2) {
        return String(validating: bytes, as: UTF8.self)
    }
    return nil
}

final class Holder: @unchecked Sendable {
    weak let target: AnyObject?

    init(target: AnyObject?) { self.target = target }
}

// An enum case (Foundation's, macOS 15) in a pattern.
public func isDayOfYear(_ component: Calendar.Component) -> Bool {
    switch component {
    case .dayOfYear: return true
    default: return false
    }
}
