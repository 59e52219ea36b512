#!/usr/bin/env bash
# The reliability checks that `swift test` does not run by itself, for .ci/run:
#   1. makes sure Debian's strace is installed, so that the fault-injection tests of the system layer
#      (Tests/CodableDefaultsSystemTests) run instead of skipping (run `swift test`, or
#      `swift test --filter CodableDefaultsSystemTests`, after this script), and checks that strace can
#      inject faults here (ptrace allowed);
#   2. fuzzes the store file's parser for a bounded time (Scripts/fuzz.sh).
#
# Usage: Scripts/reliability.sh [FUZZ_SECONDS]     (default: $FUZZ_SECONDS or 60)
# Takes about FUZZ_SECONDS + 30 s (plus an apt-get install of strace the first time); every step is
# time-bounded. Prints one summary line starting with "reliability:" and exits non-zero on any failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fuzz_seconds="${1:-${FUZZ_SECONDS:-60}}"

# 1. strace
if ! command -v strace >/dev/null 2>&1; then
    echo "reliability: installing strace"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo -n); fi
    if ! timeout 300 "${sudo[@]}" apt-get update -qq >/tmp/reliability-apt.log 2>&1 \
        || ! timeout 300 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace \
            >>/tmp/reliability-apt.log 2>&1; then
        tail -5 /tmp/reliability-apt.log >&2 || true
        echo "reliability: FAILED: cannot install strace with apt-get (no network or no root?);" \
            "the fault-injection tests would be skipped" >&2
        exit 1
    fi
fi
strace_version=$(strace -V | head -1 | awk '{ print $NF }')
injected=$(timeout 30 strace -f -qq -o /dev/null -e trace=getppid -e inject=getppid:retval=4242 \
    sh -c 'echo $PPID' 2>/dev/null || true)
if [ "$injected" != "4242" ]; then
    echo "reliability: FAILED: strace $strace_version cannot inject faults here (ptrace refused?)" >&2
    exit 1
fi
echo "reliability: strace $strace_version installed, fault injection works"

# 2. fuzzing
fuzz_line=$("$root/Scripts/fuzz.sh" "$fuzz_seconds" | tee /dev/stderr | tail -1) || {
    echo "reliability: FAILED: $fuzz_line" >&2
    exit 1
}
echo "reliability: strace $strace_version ready for the fault-injection tests; ${fuzz_line#fuzz: }"
