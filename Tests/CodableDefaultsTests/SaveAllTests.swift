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

/// Flushing every open store, as an app does when it moves to the background (iOS and the other mobile
/// platforms) or a program before it may be killed.
@Suite struct SaveAllTests {
    /// Flushes the open stores of `dir` only: the registry is the whole process's, and other tests' stores
    /// (some with planned faults) must not be saved by this one.
    func saveAll(in dir: TemporaryDirectory) {
        let prefix = DurableFile.canonicalPath(dir.path) + "/"
        StoreRegistry.saveAll { store in store.path?.hasPrefix(prefix) ?? false }
    }

    @Test func pendingAfterIdleChangesOfEveryOpenStoreAreOnDiskWhenItReturns() throws {
        let dir = try TemporaryDirectory()
        let first = try Defaults(url: dir.file("first.json"), saveMode: .afterIdle(.seconds(3600)))
        let second = try Defaults(url: dir.file("second.json"), saveMode: .afterIdle(.seconds(3600)))
        first[.count] = 1
        second[.count] = 2
        second[.volume] = 0.25
        #expect(try dir.contents().filter { $0.hasSuffix(".json") }.isEmpty)
        saveAll(in: dir)
        #expect(try openFresh(dir.file("first.json"))[.count] == 1)
        let reread = try openFresh(dir.file("second.json"))
        #expect(reread[.count] == 2)
        #expect(reread[.volume] == 0.25)
        // Saved: nothing is left to discard.
        first.discardUnsavedChanges()
        #expect(first[.count] == 1)
    }

    @Test func aStoreThatFailsIsReportedAndTheOthersAreStillSaved() throws {
        let dir = try TemporaryDirectory()
        let plan = FaultPlan()
        let failing = try FaultPlan.install(plan) {
            try Defaults(url: dir.file("failing.json"), saveMode: .afterIdle(.seconds(3600)))
        }
        plan.fail(.fsync, on: .suffix(".tmp"), with: EIO)
        let errors = ErrorLog()
        failing.onError = errors.handler
        let fine = try Defaults(url: dir.file("fine.json"), saveMode: .afterIdle(.seconds(3600)))
        failing[.count] = 1
        fine[.count] = 2
        saveAll(in: dir)
        #expect(errors.errors.count == 1)
        #expect(errors.errors.first?.code == .writeFailed)
        // Still pending: a discard goes back to the (missing) file.
        failing.discardUnsavedChanges()
        #expect(failing[.count] == 0)
        #expect(try openFresh(dir.file("fine.json"))[.count] == 2)
    }
}
