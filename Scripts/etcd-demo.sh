#!/usr/bin/env bash
# The etcd store in one command: starts a local etcd (one member, on free loopback ports, in a temporary
# directory), opens the same prefix in two processes (codable-defaults-etcd-fixture, standing for two machines),
# sets a value in one and shows both observers seeing it, and etcdctl showing the JSON in etcd. Stops etcd at the end.
#
#   bash Scripts/etcd-demo.sh        # needs /usr/bin/etcd and etcdctl (apt-get install etcd-server etcd-client),
#                                    # or $ETCD_BINARY and etcdctl beside it
set -euo pipefail
cd "$(dirname "$0")/.."

etcd=${ETCD_BINARY:-/usr/bin/etcd}
etcdctl=$(dirname "$etcd")/etcdctl
if [ ! -x "$etcd" ] || [ ! -x "$etcdctl" ]; then
    echo "etcd-demo: needs $etcd and $etcdctl: apt-get install etcd-server etcd-client" >&2
    exit 1
fi
swift build --product codable-defaults-etcd-fixture >&2
fixture="$(swift build --product codable-defaults-etcd-fixture --show-bin-path)/codable-defaults-etcd-fixture"

scratch=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT

# Starts etcd on two free ports (tried again on others when one was taken meanwhile); sets $endpoint.
for attempt in 1 2 3 4 5; do
    client=$((20000 + RANDOM % 20000))
    peer=$((client + 1))
    endpoint="http://127.0.0.1:$client"
    "$etcd" --name demo --data-dir "$scratch/etcd.data" --listen-client-urls "$endpoint" \
        --advertise-client-urls "$endpoint" --listen-peer-urls "http://127.0.0.1:$peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer" --initial-cluster "demo=http://127.0.0.1:$peer" \
        --logger zap --log-outputs stderr 2>"$scratch/etcd.log" &
    etcd_pid=$!
    for _ in $(seq 100); do
        if ETCDCTL_API=3 "$etcdctl" --endpoints "$endpoint" endpoint health >/dev/null 2>&1; then break 2; fi
        if ! kill -0 "$etcd_pid" 2>/dev/null; then break; fi
        sleep 0.1
    done
    kill "$etcd_pid" 2>/dev/null || true
    wait "$etcd_pid" 2>/dev/null || true
    rm -rf "$scratch/etcd.data"
    if [ "$attempt" -eq 5 ]; then
        echo "etcd-demo: etcd did not start; its log:" >&2
        tail -20 "$scratch/etcd.log" >&2
        exit 1
    fi
done
pids+=("$etcd_pid")
echo "etcd is running at $endpoint"

# Two processes on the prefix demo/, each observing "volume"; their output goes to a file each.
mkfifo "$scratch/a.in" "$scratch/b.in"
"$fixture" "$endpoint" demo/ <"$scratch/a.in" >"$scratch/a.out" &
pids+=($!)
exec 3>"$scratch/a.in"
"$fixture" "$endpoint" demo/ <"$scratch/b.in" >"$scratch/b.out" &
pids+=($!)
exec 4>"$scratch/b.in"

# Waits until the file $1 has a line matching $2 (up to 30 s).
wait_for() {
    for _ in $(seq 300); do
        if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "etcd-demo: no \"$2\" in $1:" >&2
    cat "$1" >&2
    exit 1
}

wait_for "$scratch/a.out" '^ready'
wait_for "$scratch/b.out" '^ready'
echo "observe volume" >&3
echo "observe volume" >&4
wait_for "$scratch/a.out" '^ok'
wait_for "$scratch/b.out" '^ok'

echo '$ (process A) defaults.set(0.8, forKey: "volume")'
echo "set volume 0.8" >&3
wait_for "$scratch/a.out" '^changed volume 0.8'
wait_for "$scratch/b.out" '^changed volume 0.8'
echo "process A's observer: $(grep '^changed' "$scratch/a.out")"
echo "process B's observer: $(grep '^changed' "$scratch/b.out")"
echo '$ etcdctl get demo/volume'
ETCDCTL_API=3 "$etcdctl" --endpoints "$endpoint" get demo/volume

echo "quit" >&3
echo "quit" >&4
exec 3>&- 4>&-
