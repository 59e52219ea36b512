import Foundation

// The uses of Errors.swift, guarded: the check must report none of them.

public func guardedDecode(_ bytes: [UInt8]) -> String? {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        return String(validating: bytes, as: UTF8.self)
    }
    return nil
}

public func guardedByGuard(_ bytes: [UInt8]) -> String? {
    guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return nil }
    return String(validating: bytes, as: UTF8.self)
}

public func guardedByUnavailable(_ bytes: [UInt8]) -> String? {
    if #unavailable(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2) {
        return nil
    } else {
        return String(validating: bytes, as: UTF8.self)
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class GuardedExecutor: TaskExecutor {
    let queue = DispatchQueue(label: "guarded")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public func guardedRun(_ bytes: [UInt8]) -> String? {
    let executor: any TaskExecutor = GuardedExecutor()
    Task(executorPreference: executor) {}
    return String(validating: bytes, as: UTF8.self)
}

@available(iOS, unavailable)
@available(tvOS, unavailable)
@available(watchOS, unavailable)
@available(visionOS, unavailable)
public func guardedHome() -> URL {
    FileManager.default.homeDirectoryForCurrentUser
}

// `for await` calls next(isolation:) (macOS 15) only where the deployment target has it: no error.
public func drain(_ stream: AsyncStream<Int>) async {
    for await _ in stream {}
}

// Linux-only code: no Apple platform compiles it, so it is not reported.
#if canImport(Glibc)
    public func linuxOnly(_ bytes: [UInt8]) -> String? { String(validating: bytes, as: UTF8.self) }
#endif

// Apple-only code: not compiled here, so listed as unchecked (the self-test expects exactly this one).
#if os(macOS)
    public func darwinHome() -> URL { FileManager.default.homeDirectoryForCurrentUser }
#endif

// The language-floor scan skips comments and strings: weak let, @concurrent, `a b`, Span.
public let notCode = "weak let, nonisolated(nonsending), Module::name, `raw identifier`"

// Linux resolves `&*` to FixedWidthInteger's requirement (macOS 15); Apple's compiler, at macOS 14, to the
// protocol extension's operator of the same signature: excused as an overload, not an error.
public func wrappingProduct(_ a: UInt64, _ b: UInt64) -> UInt64 { a &* b }

// @available on an extension guards its members.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension String {
    static func guardedInExtension(_ bytes: [UInt8]) -> String? { String(validating: bytes, as: UTF8.self) }
}
