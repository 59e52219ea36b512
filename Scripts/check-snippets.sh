#!/usr/bin/env bash
# Compiles every ```swift block of README.md, CONTRIBUTING.md, Benchmarks/README.md and the DocC articles as a
# reader would copy it, from the documents' own text, and reports each failing block by document, line and column.
#
#   Scripts/check-snippets.sh        # builds .build/snippets; exit 1 if a block does not compile
#
# Conventions, in the documents (both are HTML comments, which GitHub and DocC do not render):
# - A block is the body of a program's main.swift: top-level code, Swift 6 language mode, so its globals
#   are on the main actor. It must declare or import everything it uses (CodableDefaults and
#   CodableDefaultsEtcd can be imported).
# - `<!-- continued -->` on the line right before the opening fence: the block builds on the document's
#   previous checked block and is compiled after it, in the same main.swift (its names must not clash).
# - `<!-- fragment -->` on the line right before the opening fence: the block is not a program (a
#   Package.swift excerpt, a signature) and is not compiled. Nothing else is skipped.
#   A marker before an indented block (in a list item) is indented like the block.
# Blocks fenced other than ```swift (sh, json) are not Swift and are not compiled.
#
# All blocks are compiled in one scratch package (one executable target per chain of blocks, with
# #sourceLocation directives so diagnostics name the document's own lines) that depends on this package by
# path, in one `swift build` (when it fails, each program is built on its own to report every failing
# block). The blocks are compiled, never run.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/.build/snippets
package=$scratch/package
documents=(README.md CONTRIBUTING.md Benchmarks/README.md Sources/CodableDefaults/Documentation.docc/*.md)

rm -rf "$package/Sources"
mkdir -p "$package/Sources"

# Writes Sources/<target>/main.swift per chain of blocks and prints the target names, one per line.
targets=$(awk -v out="$package/Sources" '
    FNR == 1 {
        if (inblock) { printf "%s:%d: unclosed ```swift block\n", name, start > "/dev/stderr"; bad = 1 }
        name = FILENAME; chain = ""; inblock = 0; previous = ""
        document++
    }
    !inblock && /^[[:space:]]*```/ {
        fence = $0
        sub(/^[[:space:]]*```[[:space:]]*/, "", fence)
        sub(/[[:space:]]*$/, "", fence)
        inblock = 1; start = FNR; skip = 1
        if (fence == "swift") {
            match($0, /^[[:space:]]*/); indent = RLENGTH
            if (previous ~ /^[[:space:]]*<!-- fragment -->[[:space:]]*$/) {
                skip = 1
            } else if (previous ~ /^[[:space:]]*<!-- continued -->[[:space:]]*$/) {
                if (chain == "") {
                    printf "%s:%d: <!-- continued --> with no checked block before it\n", name, FNR > "/dev/stderr"
                    bad = 1
                } else {
                    skip = 0
                }
            } else {
                skip = 0
                count++
                chain = sprintf("Snippet%02d_%d", document, count)
                print chain
                system("mkdir -p \"" out "/" chain "\"")
            }
            if (!skip) {
                file = out "/" chain "/main.swift"
                printf "#sourceLocation(file: \"%s\", line: %d)\n", name, FNR + 1 >> file
            }
        }
        previous = $0
        next
    }
    inblock && /^[[:space:]]*```[[:space:]]*$/ {
        inblock = 0
        if (!skip) { print "#sourceLocation()" >> file; close(file) }
        previous = $0
        next
    }
    inblock && !skip { line = $0; for (i = 0; i < indent && line ~ /^ /; i++) line = substr(line, 2); print line >> file }
    { previous = $0 }
    END {
        if (inblock) { printf "%s:%d: unclosed ```swift block\n", name, start > "/dev/stderr"; bad = 1 }
        exit bad
    }
' "${documents[@]}")

{
    echo '// swift-tools-version:6.0'
    echo '// Written by Scripts/check-snippets.sh: one executable target per chain of documented blocks.'
    echo 'import PackageDescription'
    echo
    echo 'let package = Package('
    echo '    name: "Snippets",'
    echo '    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],'
    echo "    dependencies: [.package(path: \"$root\")],"
    echo '    targets: ['
    for target in $targets; do
        echo "        .executableTarget(name: \"$target\", dependencies: ["
        echo "            .product(name: \"CodableDefaults\", package: \"$(basename "$root")\"),"
        echo "            .product(name: \"CodableDefaultsEtcd\", package: \"$(basename "$root")\"),"
        echo "        ]),"
    done
    echo '    ],'
    echo '    swiftLanguageModes: [.v6]'
    echo ')'
} >"$package/Package.swift"

count=$(wc -w <<<"$targets")
log=$scratch/build.log
if swift build --package-path "$package" --scratch-path "$scratch/build" >"$log" 2>&1; then
    echo "check-snippets.sh: OK: $count programs from ${#documents[@]} documents compile"
    exit 0
fi

# A build stops at the first program that fails; build each program on its own to report every failing block.
: >"$log.each"
for target in $targets; do
    swift build --package-path "$package" --scratch-path "$scratch/build" --target "$target" >>"$log.each" 2>&1 || true
done

# The diagnostics of the blocks name the document (from #sourceLocation).
errors=$(grep -hE "^[^ ]*\.md:[0-9]+:[0-9]+: error:" "$log" "$log.each" | sort -t: -k1,1 -k2,2n -k3,3n | uniq || true)
if [[ -n $errors ]]; then
    echo "check-snippets.sh: blocks that do not compile as written:" >&2
    echo "$errors" >&2
    echo "check-snippets.sh: $(wc -l <<<"$errors") error(s); the build logs are ${log#"$root"/} and ${log#"$root"/}.each" >&2
else
    tail -40 "$log" >&2
    echo "check-snippets.sh: the snippet package failed to build (see ${log#"$root"/})" >&2
fi
exit 1
