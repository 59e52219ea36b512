#!/usr/bin/env bash
# Fails when a document or a comment cites a file of this repository that is not there, or a line past its end:
# `Store.swift`, `Store/Store.swift:45`, `Scripts/demo.sh`, `.ci/run`, in README.md, CONTRIBUTING.md,
# Benchmarks/README.md, the DocC articles, Swift comments and script comments. The rules are in
# Scripts/check-citations.py.
#
#   Scripts/check-citations.sh               # exit 1, naming the citing file and line of each broken citation
#   Scripts/check-citations.sh --self-test   # on a made-up tree: finds every broken citation it holds, no other
set -euo pipefail
exec python3 "$(dirname "$0")/check-citations.py" "$@"
