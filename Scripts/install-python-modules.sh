#!/usr/bin/env bash
# For .ci/run: makes sure python3 and the modules the tests check the library against are installed, so that the
# tests that use them (each skipped with the reason without them) run: `jsonschema` (Debian's python3-jsonschema),
# the independent validator of the generated JSON Schema (Tests/CodableDefaultsProcessTests/SchemaValidationTests.swift),
# and `cryptography` (python3-cryptography), the independent implementation of AES-256-GCM that opens the encrypted
# values the library writes (Tests/CodableDefaultsTests/SecretEnvelopeTests.swift). Installs the missing ones with
# apt-get only when a module cannot be imported (as Scripts/install-etcd.sh does for etcd). Prints one line starting
# with "python modules:" and exits non-zero when one cannot be installed.
set -euo pipefail

missing=()
python3 -c 'import jsonschema; jsonschema.Draft202012Validator' >/dev/null 2>&1 || missing+=(python3-jsonschema)
python3 -c 'from cryptography.hazmat.primitives.ciphers.aead import AESGCM' >/dev/null 2>&1 \
    || missing+=(python3-cryptography)
if [ ${#missing[@]} -gt 0 ]; then
    echo "python modules: installing ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo -n); fi
    if ! timeout 300 "${sudo[@]}" apt-get update -qq >/tmp/install-python-modules-apt.log 2>&1 \
        || ! timeout 300 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            "${missing[@]}" >>/tmp/install-python-modules-apt.log 2>&1; then
        tail -5 /tmp/install-python-modules-apt.log >&2 || true
        echo "python modules: FAILED: cannot install ${missing[*]} with apt-get (no network or no root?);" \
            "the tests that need them would be skipped" >&2
        exit 1
    fi
fi
echo "python modules: jsonschema $(python3 -c 'import importlib.metadata as m; print(m.version("jsonschema"))')," \
    "cryptography $(python3 -c 'import importlib.metadata as m; print(m.version("cryptography"))') installed"
