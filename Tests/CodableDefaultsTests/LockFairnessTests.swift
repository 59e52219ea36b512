import CodableDefaultsTestSupport
import Foundation
import Testing

@testable import CodableDefaults

/// The file lock's wait gives every waiter its turn: a writer that saves back to back cannot keep another out
/// until its lock timeout passes.
@Suite struct LockFairnessTests {
    /// One writer takes the lock, holds it 2 ms (a save) and takes it again at once, over and over; a second
    /// writer asks for it meanwhile. `flock` keeps no queue, so without a turn the second one got in only when
    /// one of its tries fell into the microseconds between a release and the next take (three runs of this test
    /// before the turn: after 112, 285 and 656 of the first writer's saves); with the turn it gets in at the
    /// first writer's next release.
    @Test func aWaiterGetsTheLockWithinAFewSavesOfAWriterThatSavesBackToBack() throws {
        let dir = try TemporaryDirectory()
        let file = DurableFile(path: dir.file().path, system: .live)
        let saves = Locked(0)
        let waiterDone = Locked(false)
        let writerStarted = DispatchSemaphore(value: 0)
        let writerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { writerDone.signal() }
            do {
                while !waiterDone.withLock({ $0 }) && saves.withLock({ $0 }) < 5_000 {
                    let fd = try file.lock(timeout: .seconds(60))
                    if saves.withLock({ count in
                        count += 1
                        return count
                    }) == 1 {
                        writerStarted.signal()
                    }
                    usleep(2_000)
                    file.unlock(fd)
                }
            } catch {
                Issue.record("the writer: \(error)")
                writerStarted.signal()
            }
        }
        writerStarted.wait()
        let before = saves.withLock { $0 }
        let fd = try file.lock(timeout: .seconds(60))
        let during = saves.withLock { $0 } - before
        file.unlock(fd)
        waiterDone.withLock { $0 = true }
        writerDone.wait()
        #expect(during <= 10, "the waiter got the lock after \(during) of the other writer's saves")
    }

    /// A waiter holding the turn that does not go on (here: the queue file held, as by a stopped process) keeps
    /// the others out for a second at most: then they try the lock themselves, and the save goes through.
    @Test func aWaiterHoldingTheTurnThatDoesNotGoOnDoesNotBlockTheOthers() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), options: Defaults.Options(lockTimeout: .seconds(60)))
        let queue = open(dir.file(".settings.json.queue").path, O_RDWR | O_CREAT, 0o600)
        #expect(queue >= 0 && flock(queue, LOCK_EX) == 0)
        defer { close(queue) }
        defaults[.count] = 1
        try defaults.save()
        #expect(try openFresh(dir.file())[.count] == 1)
    }

    /// With the turn held and the lock held too, the timeout names the lock's holder, not the turn's.
    @Test func aTimeoutNamesTheLocksHolder() throws {
        let dir = try TemporaryDirectory()
        let defaults = try openFresh(dir.file(), options: Defaults.Options(lockTimeout: .milliseconds(50)))
        let queue = open(dir.file(".settings.json.queue").path, O_RDWR | O_CREAT, 0o600)
        let lock = open(dir.file(".settings.json.lock").path, O_RDWR | O_CREAT, 0o600)
        #expect(flock(queue, LOCK_EX) == 0 && flock(lock, LOCK_EX) == 0)
        defer {
            close(queue)
            close(lock)
        }
        defaults[.count] = 1
        let error = #expect(throws: DefaultsError.self) { try defaults.save() }
        #expect(error?.code == .lockTimeout)
        #expect(error?.path == dir.file(".settings.json.lock").path)
        if hasProcFileSystem {
            #expect(error?.message.contains("held by process \(getpid())") == true, "\(String(describing: error))")
        }
        #expect(defaults.hasStoredValue(for: .count), "the change stays pending")
    }
}
