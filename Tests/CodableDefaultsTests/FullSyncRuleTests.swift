import Testing

@testable import CodableDefaults

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The rule of Darwin's full flush (`F_FULLFSYNC`, then `fsync` only where the file system lacks it), run
/// here with stand-ins for the two system calls.
@Suite struct FullSyncRuleTests {
    /// Runs the rule with a full flush failing with `fullErrno` (or succeeding when `nil`) and a plain one
    /// succeeding; returns the result, the `errno` after it, and whether the plain flush was made.
    func run(fullErrno: Int32?, plainErrno: Int32? = nil) -> (result: Int32, errno: Int32, plainMade: Bool) {
        var plainMade = false
        Platform.setErrno(0)
        let result = Platform.fullSync(
            full: {
                guard let fullErrno else { return 0 }
                Platform.setErrno(fullErrno)
                return -1
            },
            plain: {
                plainMade = true
                guard let plainErrno else { return 0 }
                Platform.setErrno(plainErrno)
                return -1
            })
        return (result, Platform.errno, plainMade)
    }

    @Test func aFullFlushThatSucceedsIsTheResult() {
        let outcome = run(fullErrno: nil)
        #expect(outcome.result == 0)
        #expect(!outcome.plainMade)
    }

    @Test(arguments: [EIO, ENOSPC, EDQUOT, EINTR, EBADF, EROFS])
    func aFailedFullFlushIsNeverFollowedByAPlainOne(code: Int32) {
        let outcome = run(fullErrno: code)
        #expect(outcome.result == -1)
        #expect(outcome.errno == code)
        #expect(!outcome.plainMade)
    }

    @Test(arguments: [ENOTSUP, ENOTTY, EINVAL])
    func aFileSystemWithoutTheFullFlushGetsThePlainOne(code: Int32) {
        let succeeded = run(fullErrno: code)
        #expect(succeeded.result == 0)
        #expect(succeeded.plainMade)
        let failed = run(fullErrno: code, plainErrno: EIO)
        #expect(failed.result == -1)
        #expect(failed.errno == EIO)
    }

    @Test func onlyTheUnsupportedCodesAreUnsupported() {
        #expect(Platform.fullSyncIsUnsupported(ENOTSUP))
        #expect(Platform.fullSyncIsUnsupported(ENOTTY))
        #expect(Platform.fullSyncIsUnsupported(EINVAL))
        #expect(!Platform.fullSyncIsUnsupported(EIO))
        #expect(!Platform.fullSyncIsUnsupported(0))
    }
}
