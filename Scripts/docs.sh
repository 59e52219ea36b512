#!/usr/bin/env bash
# Builds the documentation of every library product without the docc plugin, with warnings as errors, so a broken
# ``symbol`` or <doc:article> link fails anywhere: in an article, in a public declaration's comment, and in the
# comment of an internal or private declaration of the libraries and of the command-line tool.
# Scripts/check-snippets.sh checks that the Swift blocks compile.
#
#   Scripts/docs.sh            # builds .build/CodableDefaults.doccarchive
#
# Two passes over one build's symbol graphs (every access level, of CodableDefaults, CodableDefaultsEtcd and the
# tool `codable-defaults`):
#   1. the check: every symbol of the three modules, in one conversion, so that a link to another module's
#      symbol resolves when written with its module (``CodableDefaults/DefaultsError``);
#   2. the archive readers get: the public symbols of the two library products, with the articles, where a
#      public comment's link to a symbol readers cannot see fails too.
#
# Uses its own scratch path under .build, so it never disturbs a normal `swift build`.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
checked=$root/.build/docs-check
public=$root/.build/docs-public-symbol-graphs
archive=$root/.build/CodableDefaults.doccarchive

if command -v docc >/dev/null 2>&1; then
    docc=$(command -v docc)
elif command -v xcrun >/dev/null 2>&1 && xcrun --find docc >/dev/null 2>&1; then
    docc=$(xcrun --find docc)
else
    echo "docs.sh: docc not found: it ships with the Swift toolchain (or set PATH)" >&2
    exit 1
fi

graphs=$(bash Scripts/symbol-graphs.sh)

# 1. Every symbol's comment, every module.
rm -rf "$checked"
"$docc" convert Sources/CodableDefaults/Documentation.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-path "$checked" \
    --fallback-display-name CodableDefaults \
    --fallback-bundle-identifier CodableDefaults \
    --warnings-as-errors

# 2. The public symbols of the libraries (a graph's relationships kept where both ends are kept, or the other end
# belongs to another module), with the articles.
rm -rf "$public"
mkdir -p "$public"
python3 - "$graphs" "$public" <<'EOF'
import json, os, sys

source, target = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(source)):
    if not name.endswith(".symbols.json") or not name.startswith(("CodableDefaults.", "CodableDefaults@",
                                                                  "CodableDefaultsEtcd.", "CodableDefaultsEtcd@")):
        continue
    with open(os.path.join(source, name)) as file:
        graph = json.load(file)
    every = {symbol["identifier"]["precise"] for symbol in graph["symbols"]}
    symbols = [symbol for symbol in graph["symbols"] if symbol.get("accessLevel") in ("public", "open")]
    kept = {symbol["identifier"]["precise"] for symbol in symbols}
    def keeps(end):
        return end in kept or end not in every
    graph["symbols"] = symbols
    graph["relationships"] = [
        relation for relation in graph.get("relationships", [])
        if keeps(relation["source"]) and keeps(relation["target"])
    ]
    with open(os.path.join(target, name), "w") as file:
        json.dump(graph, file)
EOF
rm -rf "$archive"
"$docc" convert Sources/CodableDefaults/Documentation.docc \
    --additional-symbol-graph-dir "$public" \
    --output-path "$archive" \
    --fallback-display-name CodableDefaults \
    --fallback-bundle-identifier CodableDefaults \
    --warnings-as-errors

echo "docs.sh: OK: every link of the three modules resolves; built ${archive#"$root"/} with no warnings"
