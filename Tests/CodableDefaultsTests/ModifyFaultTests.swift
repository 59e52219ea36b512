import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `modify` when the write fails, through the in-process fault plan: nothing changes, on disk or in memory,
/// and the error names the path and errno; a failed directory flush is `notDurable` with the value taken.
@Suite struct ModifyFaultTests {
    typealias Subject = InProcessFaultTests.Subject

    @Test(arguments: [(FaultPlan.Call.fsync, EIO), (.write, ENOSPC), (.rename, EROFS)])
    func aFailedWriteThrowsAndChangesNothing(_ call: FaultPlan.Call, _ errno: Int32) throws {
        let subject = try Subject()
        let count = Defaults.Key<Int>("count", default: 0)
        try subject.defaults.modify(count) { $0 = 1 }
        let old = try bytes(subject.url)
        let changes = Recorder<Int>()
        let token = subject.defaults.observe(count) { changes.append($0.newValue) }
        subject.plan.fail(call, on: .suffix(".tmp"), with: errno)

        let error = #expect(throws: DefaultsError.self) { try subject.defaults.modify(count) { $0 += 1 } }
        #expect(error?.code == .writeFailed && error?.errno == errno, "\(String(describing: error))")
        #expect(error?.path == subject.path)
        #expect(try bytes(subject.url) == old)
        #expect(subject.defaults[count] == 1, "memory is unchanged")
        #expect(
            !subject.defaults.store.state.withLock { $0.members.cells[MemberName("count")]!.isDirty }, "nothing pending"
        )

        try subject.defaults.modify(count) { $0 += 1 }
        #expect(changes.values == [2], "observers heard of the successful update only")
        #expect(try openFresh(subject.url)[count] == 2)
        #expect(subject.errors.errors.isEmpty, "\(subject.errors.errors)")
        token.cancel()
    }

    @Test func aFailedDirectoryFlushIsNotDurableWithTheValueTaken() throws {
        let subject = try Subject()
        let count = Defaults.Key<Int>("count", default: 0)
        try subject.defaults.modify(count) { $0 = 1 }
        subject.plan.fail(.fsync, on: .exactly(subject.directory), with: EIO)

        let error = #expect(throws: DefaultsError.self) { try subject.defaults.modify(count) { $0 += 1 } }
        #expect(error?.code == .notDurable, "\(String(describing: error))")
        #expect(subject.defaults[count] == 2)
        #expect(try openFresh(subject.url)[count] == 2)
        try subject.defaults.save()  // retries the directory flush, which works now
    }
}
