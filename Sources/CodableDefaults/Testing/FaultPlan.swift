/// Which system calls of one file layer fail, and how: the in-process fault injection of the tests.
///
/// A plan is a list of rules, each "the Nth call of this kind on a matching path fails with this `errno`"
/// (or, for reads and writes, moves fewer bytes), plus a log of every call made through it. It acts only on
/// the ``Syscalls`` made with it, so on the ``DurableFile`` (and the store) given it; a file made without a
/// plan never consults one. To give a plan to a store opened through the public API, open it inside
/// ``install(_:operation:)``:
///
/// ```swift
/// let plan = FaultPlan()
/// let defaults = try FaultPlan.install(plan) { try Defaults(url: url, saveMode: .manual) }
/// plan.fail(.fsync, on: .suffix(".tmp"), with: EIO)  // the next save's fsync of its temporary file
/// ```
///
/// Thread-safe: a store may make its calls on any thread (its background saves run on its queue).
final class FaultPlan: @unchecked Sendable {
    /// A kind of system call, as ``Syscalls`` names them.
    enum Call: String, Sendable, CaseIterable {
        case open, close, read, write, fsync, fstat, stat, lstat, fchmod, fchown, rename, unlink, mkdir, flock
        case readlink, realpath, opendir
    }

    /// What happens to a call a rule matches.
    enum Fault: Sendable, Equatable {
        /// The call is not made; it returns -1 with this `errno`.
        case error(Int32)
        /// A read or write moves at most this many bytes (at least 1), for real; other calls are made as asked.
        case short(Int)
    }

    /// Which paths a rule matches. A call on a descriptor has the path it was opened with (when it was opened
    /// through the same plan); a rename has two paths, and either may match.
    enum Paths: Sendable, Equatable {
        case any
        case exactly(String)
        case suffix(String)

        func matches(_ path: String?) -> Bool {
            switch self {
            case .any: true
            case .exactly(let wanted): path == wanted
            case .suffix(let tail): path?.hasSuffix(tail) ?? false
            }
        }
    }

    /// One call made through the plan.
    struct Record: Sendable, Equatable, CustomStringConvertible {
        var call: Call
        /// The path, or the path the descriptor was opened with; `nil` when unknown.
        var path: String?
        /// The rename's target.
        var otherPath: String?
        /// The fault injected into it, or `nil` when it was made as asked.
        var fault: Fault?

        var description: String {
            "\(call)(\(path ?? "?")\(otherPath.map { ", " + $0 } ?? ""))" + (fault.map { " <- \($0)" } ?? "")
        }
    }

    private struct Rule {
        var call: Call
        var paths: Paths
        var skip: Int
        var remaining: Int
        var fault: Fault
    }

    /// The plan installed for the current task, which ``Syscalls/installed`` hands to new files.
    @TaskLocal static var current: FaultPlan?

    private let lock = Lock()
    private var rules: [Rule] = []
    private var paths: [Int32: String] = [:]
    private var log: [Record] = []

    /// Makes an empty plan: every call is made as asked, and logged.
    init() {}

    /// Runs `operation` with `plan` installed for the current task: every ``DurableFile`` made by
    /// `DurableFile(path:)` inside it (so every store opened inside it) keeps the plan for its life. Tests
    /// running in parallel each have their own task, so a plan never reaches another test's files.
    static func install<Result>(_ plan: FaultPlan, operation: () throws -> Result) rethrows -> Result {
        try $current.withValue(plan, operation: operation)
    }

    /// Makes calls fail from now on: after `skipping` matching calls, the next `times` matching calls of kind
    /// `call` on `paths` get `fault`. Rules are consulted in the order they were added; a call takes the
    /// first rule that has calls left to skip or to fail.
    func inject(_ fault: Fault, into call: Call, on paths: Paths = .any, skipping: Int = 0, times: Int = 1) {
        lock.withLock {
            rules.append(Rule(call: call, paths: paths, skip: skipping, remaining: times, fault: fault))
        }
    }

    /// Makes calls fail with `errno` (see ``inject(_:into:on:skipping:times:)``).
    func fail(_ call: Call, on paths: Paths = .any, with errno: Int32, skipping: Int = 0, times: Int = 1) {
        inject(.error(errno), into: call, on: paths, skipping: skipping, times: times)
    }

    /// Ends every rule: from now on every call is made as asked (and still logged).
    func removeAll() {
        lock.withLock { rules.removeAll() }
    }

    /// Every call made through the plan so far, in order.
    var records: [Record] { lock.withLock { log } }

    /// The calls made so far that got a fault.
    var injected: [Record] { records.filter { $0.fault != nil } }

    /// Whether every rule has had all its faults injected.
    var isSpent: Bool { lock.withLock { rules.allSatisfy { $0.remaining == 0 } } }

    /// Logs a call and returns the fault it gets, if any. Called by ``Syscalls`` before the call is made.
    func take(_ call: Call, path: String?, otherPath: String?, fd: Int32?) -> Fault? {
        lock.withLock {
            let path = path ?? fd.flatMap { paths[$0] }
            var fault: Fault?
            for index in rules.indices where rules[index].call == call && rules[index].remaining > 0 {
                guard rules[index].paths.matches(path) || (otherPath != nil && rules[index].paths.matches(otherPath))
                else { continue }
                if rules[index].skip > 0 {
                    rules[index].skip -= 1
                } else {
                    rules[index].remaining -= 1
                    fault = rules[index].fault
                }
                break
            }
            log.append(Record(call: call, path: path, otherPath: otherPath, fault: fault))
            return fault
        }
    }

    /// Remembers the path a descriptor was opened with.
    func opened(_ fd: Int32, path: String) {
        lock.withLock { paths[fd] = path }
    }

    /// Forgets a descriptor's path (it is being closed).
    func closed(_ fd: Int32) {
        lock.withLock { _ = paths.removeValue(forKey: fd) }
    }
}
