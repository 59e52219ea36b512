#!/usr/bin/env bash
# Fuzzes the store file's parser (JSONParser.parse, JSONIndex and JSONParser.compactValue) and its writer (FileImage)
# with libFuzzer.
#
# The fuzz target is Fuzz/JSONParserFuzzer.swift compiled together with
# Sources/CodableDefaults/Format/JSONParser.swift, JSONParser+Position.swift, JSONIndex.swift,
# JSONIndex+Building.swift, FileImage.swift, FileImage+Index.swift, FileImage+Layout.swift and MemberName.swift
# (which use only the standard library and the C library) by swiftc with -sanitize=fuzzer,address; no package
# target is needed.
# It starts from the seed corpus in Fuzz/Corpus (checked in) and runs for a bounded time.
#
# Usage: Scripts/fuzz.sh [SECONDS]        (default: $FUZZ_SECONDS or 60)
#   FUZZ_WORK=/path    where to build and keep the growing corpus (default: /tmp/codable-defaults-fuzz)
#   FUZZ_JOBS=N        run N fuzzing processes in parallel (default 1)
# A long run:  Scripts/fuzz.sh 3600
#
# Prints "fuzz: N inputs executed in S s, C crashes" and exits non-zero if the target crashed, leaked,
# timed out or could not be built. A crashing input is saved as $FUZZ_WORK/artifacts/crash-*: add it to
# Fuzz/Corpus and turn it into a regression test.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-${FUZZ_SECONDS:-60}}"
work="${FUZZ_WORK:-/tmp/codable-defaults-fuzz}"
jobs="${FUZZ_JOBS:-1}"
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;; esac

mkdir -p "$work/corpus" "$work/artifacts"
binary="$work/json-parser-fuzzer"

echo "fuzz: building $binary"
build_start=$(date +%s)
# lld avoids gold's warnings about the sanitizer's local symbols.
linker=()
if command -v ld.lld >/dev/null 2>&1 || [ -x "$(dirname "$(command -v swiftc)")/ld.lld" ]; then linker=(-use-ld=lld); fi
# The package name lets the fuzz target see FileImage, which is `package` for the command-line tool.
timeout 600 swiftc -parse-as-library -package-name CodableDefaults -O -g -sanitize=fuzzer,address "${linker[@]}" \
    "$root/Sources/CodableDefaults/Format/JSONParser.swift" \
    "$root/Sources/CodableDefaults/Format/JSONParser+Position.swift" \
    "$root/Sources/CodableDefaults/Format/JSONIndex.swift" \
    "$root/Sources/CodableDefaults/Format/JSONIndex+Building.swift" \
    "$root/Sources/CodableDefaults/Format/FileImage.swift" \
    "$root/Sources/CodableDefaults/Format/FileImage+Index.swift" \
    "$root/Sources/CodableDefaults/Format/FileImage+Layout.swift" \
    "$root/Sources/CodableDefaults/Storage/MemberName.swift" \
    "$root/Fuzz/JSONParserFuzzer.swift" \
    -o "$binary"
echo "fuzz: built in $(( $(date +%s) - build_start )) s"

# Crashes must reach libFuzzer's handler rather than Swift's backtracer.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

log="$work/fuzz.log"
: >"$log"
status=0
fuzz_args=(
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096
    -dict="$root/Fuzz/json.dict" -artifact_prefix="$work/artifacts/" -print_final_stats=1
)
if [ "$jobs" -gt 1 ]; then fuzz_args+=(-fork="$jobs" -ignore_crashes=0); fi
# The hard bound leaves room for start-up and the final corpus merge.
timeout --kill-after=30 $(( seconds + 120 )) \
    "$binary" "${fuzz_args[@]}" "$work/corpus" "$root/Fuzz/Corpus" >"$log" 2>&1 || status=$?

executed=$({ grep -E '^stat::number_of_executed_units:' "$log" || true; } | awk '{ s += $2 } END { print s + 0 }')
if [ "$executed" -eq 0 ]; then
    # -fork mode prints no final stats; take the last progress line.
    executed=$({ grep -oE '^#[0-9]+' "$log" || true; } | tail -1 | tr -d '#')
    executed=${executed:-0}
fi
elapsed=$({ grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" || true; } | tail -1 | awk '{ print $5 }')
elapsed=${elapsed:-$seconds}
crashes=$(find "$work/artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -newer "$binary" | wc -l)
corpus=$(find "$work/corpus" -type f | wc -l)

if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    echo "fuzz: FAILED (exit status $status) after $executed inputs; the end of $log:" >&2
    tail -40 "$log" >&2
    find "$work/artifacts" -maxdepth 1 -type f -newer "$binary" -printf 'fuzz: saved input %p\n' >&2
    echo "fuzz: $executed inputs executed in $elapsed s, $crashes crashes (corpus $corpus files)"
    exit 1
fi
echo "fuzz: $executed inputs executed in $elapsed s, 0 crashes (corpus $corpus files, seeds in Fuzz/Corpus)"
