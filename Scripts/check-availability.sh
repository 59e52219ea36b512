#!/usr/bin/env bash
# Availability and language-floor check of the package (CI: after `swift build --build-tests`).
#
#   bash Scripts/check-availability.sh                  check the package; exit 1 on any error, 2 if the check fails
#   bash Scripts/check-availability.sh --verbose        also list excused overload resolutions and timings
#   bash Scripts/check-availability.sh --list-unchecked list the #if branches only Apple platforms compile
#   bash Scripts/check-availability.sh --self-test      build Scripts/availability/Fixture and check that exactly
#                                                       the errors in its expected.txt are reported
#
# Apple APIs: every reference in every module of the package (sources, tests, benchmarks, executables), taken
# from the type-checked AST, is joined with the availability in the symbol graphs of the toolchain's own modules
# (Swift, _Concurrency, Foundation, Testing, ...); a symbol newer than the minimums in Package.swift, or
# unavailable on a declared Apple platform, is an error unless `if #available`, `guard #available`,
# `if #unavailable ... else`, or `@available` on an enclosing declaration covers it.
#
# Language floor (Swift 6.1, Xcode 16.3), by a text scan with comments and string literals blanked:
#   weak let (6.3); nonisolated(nonsending), @concurrent (6.2); InlineArray and [N of T] (6.2);
#   Span, RawSpan, MutableSpan, MutableRawSpan, UTF8Span, OutputSpan (6.2); ~Escapable (6.2);
#   isolated conformances `: @MainActor P` (6.2); raw identifiers `a b`, `1x` (6.2); isolated deinit (6.2);
#   integer generic parameters <let N: Int> (6.2); @abi( (6.2); @c attribute (6.3); module selectors
#   Module::name (6.3); Swift Testing: #expect/#require(processExitsWith:) and Attachment (6.2),
#   Test.cancel( (6.3).
#
# Not seen: #if branches that only Apple platforms compile (listed at the end of every run), and differences
# between Apple's Foundation and swift-corelibs-foundation (APIs only Linux has, or without availability there).
# The work is done in Scripts/availability/check.py (Python 3 standard library only).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package="$(cd "$here/.." && pwd)"

if ! command -v python3 >/dev/null; then
    echo "check-availability: error: python3 is needed" >&2
    exit 2
fi
if ! command -v swift >/dev/null; then
    echo "check-availability: error: no swift toolchain on PATH" >&2
    exit 2
fi

exec python3 "$here/availability/check.py" --package-path "$package" "$@"
