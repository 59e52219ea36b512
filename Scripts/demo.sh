#!/usr/bin/env bash
# The README's main job: a short session with the command-line tool on a demo store file.
# Usage: bash Scripts/demo.sh [FILE]   (default: a new temporary file)
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --product codable-defaults >&2
tool="$(swift build --product codable-defaults --show-bin-path)/codable-defaults"
if [ $# -ge 1 ]; then
    file="$1"
else
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    file="$scratch/demo.json"
fi

# Prints an argument as a shell would need it typed: bare when safe, else in single quotes.
quote() {
    case "$1" in
        *[!A-Za-z0-9_./:=+-]* | "") printf " '%s'" "${1//\'/\'\\\'\'}" ;;
        *) printf ' %s' "$1" ;;
    esac
}

run() {
    printf '$ codable-defaults'
    for argument in "$@"; do quote "$argument"; done
    printf '\n'
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
