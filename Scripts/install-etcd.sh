#!/usr/bin/env bash
# For .ci/run: makes sure Debian's etcd-server and etcd-client are installed, so that the etcd tests
# (Tests/CodableDefaultsEtcdTests, which start etcd themselves and fail without it) can run. Installs them with
# apt-get only when /usr/bin/etcd or /usr/bin/etcdctl is missing (as Scripts/reliability.sh does for strace).
# Prints one line starting with "etcd:" and exits non-zero when they cannot be installed.
set -euo pipefail

if [ ! -x /usr/bin/etcd ] || [ ! -x /usr/bin/etcdctl ]; then
    echo "etcd: installing etcd-server and etcd-client"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then sudo=(sudo -n); fi
    if ! timeout 300 "${sudo[@]}" apt-get update -qq >/tmp/install-etcd-apt.log 2>&1 \
        || ! timeout 300 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            etcd-server etcd-client >>/tmp/install-etcd-apt.log 2>&1; then
        tail -5 /tmp/install-etcd-apt.log >&2 || true
        echo "etcd: FAILED: cannot install etcd-server and etcd-client with apt-get (no network or no root?);" \
            "the etcd tests would fail" >&2
        exit 1
    fi
fi
# The Debian package enables and starts an etcd service where systemd runs; the tests start their own on free
# ports and do not use it.
echo "etcd: $(/usr/bin/etcd --version | head -1) and etcdctl $(ETCDCTL_API=3 /usr/bin/etcdctl version | head -1 | awk '{ print $NF }') installed"
