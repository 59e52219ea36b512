#!/usr/bin/env bash
# Builds the DocC catalog of CodableDefaults without the docc plugin, with warnings as errors, so a broken
# ``symbol`` or <doc:article> link fails. Scripts/check-snippets.sh checks that the Swift blocks compile.
#
#   Scripts/docs.sh            # builds .build/CodableDefaults.doccarchive
#
# Uses its own scratch path under .build, so it never disturbs a normal `swift build`.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/.build/docs
graphs=$root/.build/docs-symbol-graphs
archive=$root/.build/CodableDefaults.doccarchive

if command -v docc >/dev/null 2>&1; then
    docc=$(command -v docc)
elif command -v xcrun >/dev/null 2>&1 && xcrun --find docc >/dev/null 2>&1; then
    docc=$(xcrun --find docc)
else
    echo "docs.sh: docc not found: it ships with the Swift toolchain (or set PATH)" >&2
    exit 1
fi

# The compiler writes the symbol graph only when it compiles the module; an up-to-date build leaves the
# graph of the last one in place. If that graph is missing, build from scratch so it is written again.
if [[ ! -f $graphs/CodableDefaults.symbols.json ]]; then
    rm -rf "$scratch"
fi
mkdir -p "$graphs"
swift build --scratch-path "$scratch" --target CodableDefaults \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs"

rm -rf "$archive"
"$docc" convert Sources/CodableDefaults/Documentation.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-path "$archive" \
    --fallback-display-name CodableDefaults \
    --fallback-bundle-identifier CodableDefaults \
    --warnings-as-errors

echo "docs.sh: OK: built ${archive#"$root"/} with no warnings"
