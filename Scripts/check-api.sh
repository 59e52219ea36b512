#!/usr/bin/env bash
# Keeps the public API and its changelog together: lists every public declaration of the two library products
# (CodableDefaults, CodableDefaultsEtcd) from their symbol graphs, one line each, and compares the list with
# api/public-api.txt.
#
#   Scripts/check-api.sh            # fails when the list differs, or when it changed without CHANGELOG.md
#   Scripts/check-api.sh --update   # writes the list to api/public-api.txt (then say the change in CHANGELOG.md)
#
# The check fails when:
#   - a public declaration was added, removed or changed and api/public-api.txt does not say so;
#   - api/public-api.txt changed in a commit (or in the working tree) after the last change of CHANGELOG.md.
# It reads the symbol graphs Scripts/symbol-graphs.sh builds, as Scripts/docs.sh does (after it, a no-op build).
set -euo pipefail

cd "$(dirname "$0")/.."
listing=api/public-api.txt

update=false
case "${1:-}" in
    --update) update=true ;;
    "") ;;
    *)
        echo "usage: Scripts/check-api.sh [--update]" >&2
        exit 64
        ;;
esac

graphs=$(bash Scripts/symbol-graphs.sh)

current=$(mktemp)
trap 'rm -f "$current"' EXIT
python3 - "$graphs" >"$current" <<'EOF'
import json, os, sys

# A line per public declaration: its module, its path (Type.member), and its declaration as the compiler prints
# it. Symbols the compiler synthesizes (a protocol's default implementations) are left out: they follow from the
# conformances, which the type's line shows.
source = sys.argv[1]
lines = set()
for name in sorted(os.listdir(source)):
    module = name.split("@")[0].split(".")[0]
    if module not in ("CodableDefaults", "CodableDefaultsEtcd") or not name.endswith(".symbols.json"):
        continue
    with open(os.path.join(source, name)) as file:
        graph = json.load(file)
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
            continue
        path = ".".join(symbol["pathComponents"])
        declaration = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
        # The constraints of the extension it is declared in (`extension Persisted where Value: Equatable`), which
        # its declaration does not show: two overloads that differ only there are two lines.
        constraints = [
            f"{c['lhs']} {':' if c['kind'] == 'conformance' else '=='} {c['rhs']}"
            for c in symbol.get("swiftExtension", {}).get("constraints", [])
        ]
        where = f" (in an extension where {', '.join(constraints)})" if constraints else ""
        lines.add(f"{module}: {path}: {' '.join(declaration.split())}{where}")
    # What each public type conforms to or inherits from (its declaration above does not say).
    names = {symbol["identifier"]["precise"]: ".".join(symbol["pathComponents"]) for symbol in graph["symbols"]}
    public = {symbol["identifier"]["precise"] for symbol in graph["symbols"]
              if symbol.get("accessLevel") in ("public", "open")}
    for relation in graph.get("relationships", []):
        if relation["kind"] not in ("conformsTo", "inheritsFrom") or relation["source"] not in public:
            continue
        target = names.get(relation["target"]) or relation.get("targetFallback") or relation["target"]
        verb = "conforms to" if relation["kind"] == "conformsTo" else "inherits from"
        lines.add(f"{module}: {names[relation['source']]}: {verb} {target}")
for line in sorted(lines):
    print(line)
EOF

if $update; then
    mkdir -p "$(dirname "$listing")"
    cp "$current" "$listing"
    echo "check-api.sh: wrote $listing ($(wc -l <"$listing") declarations); say the change in CHANGELOG.md"
    exit 0
fi

if ! diff -u "$listing" "$current" >/dev/null 2>&1; then
    echo "check-api.sh: FAILED: the public API is not what $listing lists:" >&2
    diff -u "$listing" "$current" | tail -n +3 | grep -E '^[-+]' >&2 || true
    echo "Run Scripts/check-api.sh --update, and say the change in CHANGELOG.md." >&2
    exit 1
fi

# The listing and the changelog change together: in the working tree, or in history (the changelog's last change
# is the listing's, or later).
if ! git diff --quiet HEAD -- "$listing" && git diff --quiet HEAD -- CHANGELOG.md; then
    echo "check-api.sh: FAILED: $listing changed, CHANGELOG.md did not: say the change in it" >&2
    exit 1
fi
listed=$(git log -1 --format=%H -- "$listing")
logged=$(git log -1 --format=%H -- CHANGELOG.md)
if [[ -n $listed ]] && { [[ -z $logged ]] || ! git merge-base --is-ancestor "$listed" "$logged"; }; then
    echo "check-api.sh: FAILED: commit ${listed:0:12} changed $listing after the last change of CHANGELOG.md" >&2
    exit 1
fi
echo "check-api.sh: OK: $(wc -l <"$listing") public declarations, as $listing and CHANGELOG.md say"
