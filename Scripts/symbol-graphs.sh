#!/usr/bin/env bash
# Builds the symbol graphs of CodableDefaults, CodableDefaultsEtcd and the tool `codable-defaults`, every access
# level, into .build/docs-symbol-graphs (scratch path .build/docs, so a normal `swift build` is not disturbed), and
# prints that directory. Scripts/docs.sh and Scripts/check-api.sh read them; run by them, not on its own.
#
# The compiler writes a module's symbol graph only when it compiles the module; an up-to-date build leaves the
# graphs of the last one in place. If one is missing, the build starts from scratch so they are all written again.
set -euo pipefail

cd "$(dirname "$0")/.."
scratch=.build/docs
graphs=.build/docs-symbol-graphs

for module in CodableDefaults CodableDefaultsEtcd codable_defaults; do
    if [[ ! -f $graphs/$module.symbols.json ]]; then
        rm -rf "$scratch" "$graphs"
        break
    fi
done
mkdir -p "$graphs"
# The tool's target depends on both libraries: building it compiles the three modules.
swift build --scratch-path "$scratch" --target codable-defaults \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc private >&2
echo "$PWD/$graphs"
