#!/usr/bin/env bash
# The README's main job: a short session with the command-line tool on a demo store file.
# Usage: bash Scripts/demo.sh [FILE]   (default: a new temporary file)
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --product codable-defaults >&2
tool="$(swift build --product codable-defaults --show-bin-path)/codable-defaults"
file="${1:-$(mktemp -d)/demo.json}"

run() {
    printf '$ codable-defaults %s\n' "$*"
    "$tool" "$@"
}

run write "$file" volume 0.8
run write "$file" profile '{"name": "Mister Default", "age": 29}'
run write "$file" greeting --string "hello, world"
run read "$file" profile
run keys "$file"
run delete "$file" greeting
run read "$file"
run check "$file"
printf '$ cat %s\n' "$file"
cat "$file"
