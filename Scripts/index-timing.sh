#!/usr/bin/env bash
# Times JSONParser.parse against the index scan (JSONIndex) on the benchmark's 10 MB store file, optimized, and
# prints the index's memory per member, the time to make the file's image (FileImage(index:)) and to apply one
# change to it. See Benchmarks/IndexScan/main.swift.
#
# Usage: Scripts/index-timing.sh     (builds in $INDEX_TIMING_WORK, default /tmp/codable-defaults-index-timing)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${INDEX_TIMING_WORK:-/tmp/codable-defaults-index-timing}"
mkdir -p "$work"
source="$root/Sources/CodableDefaults"
benchmarks="$root/Benchmarks/CodableDefaultsBenchmarks"
swiftc -O -wmo -parse-as-library -package-name CodableDefaults \
    "$source/Format/JSONParser.swift" "$source/Format/JSONParser+Position.swift" "$source/Format/JSONIndex.swift" \
    "$source/Format/JSONIndex+Building.swift" "$source/Format/FileImage.swift" "$source/Format/FileImage+Index.swift" \
    "$source/Format/FileImage+Layout.swift" \
    "$source/Storage/MemberName.swift" "$benchmarks/Fixtures.swift" \
    "$root/Benchmarks/IndexScan/main.swift" -o "$work/index-timing"
"$work/index-timing" "$@"
