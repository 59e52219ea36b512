// Language features newer than Swift 6.1, one a line: the self-test's text scan must report each (expected.txt).
// No target builds this file; it is only scanned.
final class A { weak let a: AnyObject? = nil }
nonisolated(nonsending) func b() async {}
@concurrent func c() async {}
let d: InlineArray<3, Int> = [1, 2, 3]
let e: [3 of Int] = [1, 2, 3]
func f(_ s: Span<UInt8>, _ r: RawSpan) {}
struct G: ~Escapable {}
extension H: @MainActor P {}
func `a test name`() {}
actor I { isolated deinit {} }
struct J<T, let N: Int> {}
@abi(func k()) func k2() {}
@c func l() {}
let m = Swift::print
func n() async { await #expect(processExitsWith: .failure) {} }
let o = Attachment(p, named: "p.txt")
func q() throws { try Test.cancel("not now") }

// None of these: comments, strings and ordinary code.
// weak let, @concurrent, `a b`, Module::name, Span
/* weak let /* nested */ @c func */
let r = "weak let, @c func, `raw identifier`, Span, Swift::print"
let s = #"nonisolated(nonsending) "quoted" InlineArray"#
let t = """
    isolated deinit, <let N: Int>, @abi(
    """
weak var u: AnyObject? = nil
func `default`() {}
let v = [3, 4].map { $0 * 2 }
struct W<T: Equatable, U> {}
