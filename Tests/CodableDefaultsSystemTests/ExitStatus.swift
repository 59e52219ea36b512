import CodableDefaultsTestSupport

/// How a child process ended: the test support's ``CodableDefaultsTestSupport/ExitStatus``, not Swift
/// Testing's `ExitStatus` of exit tests, which `import Testing` also brings into scope.
typealias ExitStatus = CodableDefaultsTestSupport.ExitStatus
