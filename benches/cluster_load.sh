#!/usr/bin/env bash
# The same load against three tengen nodes (one PostgreSQL, one NATS) and then against
# one node on the same PostgreSQL and NATS, for BENCHMARKS.md "Cluster (issue 13)".
#
#   benches/cluster_load.sh GAMES SPECTATORS [SECONDS]
#
# NODE_BIN (default target/release/tengen; not TENGEN_*, which the nodes read as settings) runs the nodes, LOAD_BIN (default the same)
# the load tool. PostgreSQL at postgres://postgres:postgres@127.0.0.1:5432 (a fresh
# database per run, dropped after), NATS at nats://127.0.0.1:4222 (a cluster name per
# run). LEASE_MS sets the nodes' lease (default 2000); ONLY=three or ONLY=one runs one
# side alone. A move per game every 2 s; every run is bounded (the load tool stops at its
# --duration, the nodes are killed at the end).
set -euo pipefail

games=${1:?games}
spectators=${2:?spectators per game}
secs=${3:-30}
bin=${NODE_BIN:-target/release/tengen}
load=${LOAD_BIN:-$bin}
lease=${LEASE_MS:-2000}
only=${ONLY:-}
pg=postgres://postgres:postgres@127.0.0.1:5432
stamp=$(date +%s)
ulimit -n 20000 || true

pids=()
stop_nodes() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
trap stop_nodes EXIT

# run NAME NODES: starts NODES nodes on a fresh database and loads them.
run() {
    local name=$1 nodes=$2 db="tengen_bench_${stamp}_$1" urls=()
    psql -q "$pg/postgres" -c "CREATE DATABASE $db"
    local dir
    dir=$(mktemp -d)
    echo "bench-secret-of-32-bytes-or-more-$stamp" >"$dir/secret"
    for i in $(seq 0 $((nodes - 1))); do
        local port=$((7600 + i))
        TENGEN_LOG=warn TENGEN_LIMITS__MAX_CONNECTIONS=19900 \
        TENGEN_LIMITS__MESSAGES_PER_SECOND=1000 TENGEN_LIMITS__BURST=2000 \
        TENGEN_STORE__BACKEND=postgres TENGEN_STORE__POSTGRES_URL="$pg/$db" \
        TENGEN_CLUSTER__NATS_URL=nats://127.0.0.1:4222 \
        TENGEN_CLUSTER__NAME="bench${stamp}$name" TENGEN_CLUSTER__NODE_ID="n$i" \
        TENGEN_CLUSTER__LEASE_MS="$lease" TENGEN_AUTH__SECRET="bench-secret-of-32-bytes-or-more-$stamp" \
            "$bin" serve --listen "127.0.0.1:$port" --data "$dir/n$i" &
        pids+=($!)
        urls+=(--url "ws://127.0.0.1:$port/ws")
    done
    sleep 3
    echo "== $name: $nodes node(s), $games games x (2 + $spectators), a move every 2 s, $secs s, lease $lease ms"
    "$load" load "${urls[@]}" --token-secret "$dir/secret" --games "$games" \
        --spectators "$spectators" --move-interval 2000 --duration "$secs" --settle 3 \
        --seed 13 || echo "(the load run reported a failure)"
    stop_nodes
    psql -q "$pg/postgres" -c "DROP DATABASE $db WITH (FORCE)" || true
    rm -rf "$dir"
}

[ "$only" = one ] || run three 3
[ "$only" = three ] || run one 1
