#!/usr/bin/env bash
# `make cluster`: a Redis Cluster of three masters with one replica each on 127.0.0.1, ports
# CLUSTER_BASE..CLUSTER_BASE+5 (7001..7006 by default), the module loaded on every node, left
# running in the background for you to try. Each run starts from an empty cluster.
# `make cluster-stop` (this script with `stop`) shuts the nodes down.
#
# usage: scripts/cluster.sh start|stop SERVER_COMMAND...   (the server binary and any
# environment it needs, as `make run` uses them)
set -euo pipefail

action=$1
shift
base=${CLUSTER_BASE:-7001}
root=$(realpath -m "${CLUSTER_DIR:-run/cluster}")
module=$(realpath "${REDBLOOM_MODULE:-target/release/libredbloom.so}")
ports=$(seq "$base" $((base + 5)))

# Stops the nodes this script started, and no other server that happens to use those ports.
stop() {
  for port in $ports; do
    if redis-cli -p "$port" CONFIG GET dir 2>/dev/null | grep -qx "$root/$port"; then
      redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    fi
  done
}

# Waits until `check` succeeds, or gives up after 30 s saying what it waited for.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 300); do
    "$@" && return 0
    sleep 0.1
  done
  echo "cluster: gave up waiting for $what (logs under $root/)" >&2
  exit 1
}

if [ "$action" = stop ]; then
  stop
  echo "cluster on ports $base-$((base + 5)) stopped"
  exit 0
fi

stop
rm -rf "$root"
nodes=()
for port in $ports; do
  dir="$root/$port"
  mkdir -p "$dir"
  # DEBUG from loopback only, so that DEBUG DIGEST-VALUE can compare a filter across nodes.
  env "$@" --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes --logfile redis.log \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
    --appendonly yes --enable-debug-command local --loadmodule "$module"
  nodes+=("127.0.0.1:$port")
done
for port in $ports; do
  wait_for "the node on port $port to start" redis-cli -p "$port" PING >/dev/null 2>&1
done
if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$root/create.log" 2>&1; then
  cat "$root/create.log" >&2
  stop
  exit 1
fi
cluster_ok() { redis-cli -p "$1" CLUSTER INFO | grep -q "cluster_state:ok"; }
three_replicas() { [ "$(redis-cli -p "$base" CLUSTER NODES | grep -c slave)" = 3 ]; }
# Resharding while a replica is still in its first sync can leave a slot open on Valkey.
linked() { redis-cli -p "$1" INFO replication | grep -q "role:master\|master_link_status:up"; }
for port in $ports; do
  wait_for "port $port to see the cluster up" cluster_ok "$port"
done
wait_for "three replicas" three_replicas
for port in $ports; do
  wait_for "port $port to be linked to its master" linked "$port"
done
redis-cli -p "$base" CLUSTER NODES | awk '{print $2, $3, $9}' | sed 's/@[0-9]*//'
cat <<EOF

A cluster is running on 127.0.0.1:$base-$((base + 5)), data and logs under $root/.
Try it (-c follows redirections):
  redis-cli -c -p $base BF.ADD users:{tenant1} alice
  redis-cli -c -p $base BF.EXISTS users:{tenant1} alice
Reshard by hand while a client writes, from two terminals:
  while :; do redis-cli -c -p $base BF.ADD "filter:\$((RANDOM % 300))" "item:\$RANDOM" >/dev/null; done
  redis-cli --cluster reshard 127.0.0.1:$base
Fail a master over:     redis-cli -p <its replica's port> CLUSTER FAILOVER
Stop it:                make cluster-stop
EOF
