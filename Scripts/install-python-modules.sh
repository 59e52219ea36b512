#!/usr/bin/env bash
# For .ci/run: makes sure python3 and its jsonschema package are installed, so that the test that checks the
# generated JSON Schema with an independent validator (Tests/CodableDefaultsProcessTests/SchemaValidationTests.swift,
# skipped with the reason without them) runs. Installs Debian's python3-jsonschema with apt-get only when the
# package cannot be imported (as Scripts/install-etcd.sh does for etcd). Prints one line starting with
# "jsonschema:" and exits non-zero when it cannot be installed.
set -euo pipefail

if ! python3 -c 'import jsonschema; jsonschema.Draft202012Validator' >/dev/null 2>&1; then
    echo "jsonschema: installing python3-jsonschema"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo -n); fi
    if ! timeout 300 "${sudo[@]}" apt-get update -qq >/tmp/install-jsonschema-apt.log 2>&1 \
        || ! timeout 300 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            python3-jsonschema >>/tmp/install-jsonschema-apt.log 2>&1; then
        tail -5 /tmp/install-jsonschema-apt.log >&2 || true
        echo "jsonschema: FAILED: cannot install python3-jsonschema with apt-get (no network or no root?);" \
            "the schema validation test would be skipped" >&2
        exit 1
    fi
fi
echo "jsonschema: $(python3 -c 'import importlib.metadata as m; print(m.version("jsonschema"))') installed"
