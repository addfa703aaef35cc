#!/usr/bin/env bash
# bench/small.sh — small writes, the shape of chat memory and mem0's add:
# single-row INSERTs in autocommit (one Bind/Execute/Sync, or one simple
# Query, per row) of a 1536-dimension vector with a subject, from CLIENTS
# concurrent clients, against these targets, interleaved round by round:
#
#   direct   the server
#   relay    lethe-proxy capturing no table: the relay alone
#   proxy    lethe-proxy capturing the table (strict, SQLite ledger) with
#            capture.wal: off: every insert's write-ahead intent is durable
#            before its Sync goes on
#   wal      lethe-proxy capturing the table with the WAL follower on (the
#            default configuration, capture.intents: auto): once the follower
#            streams the table, inserts take no write-ahead intent, the slot
#            being the durable record of committed rows; the follower's own
#            CPU is in the proxy's (slot lethe_small_bench, dropped at exit)
#   walintents  as wal with capture.intents: always: every insert's intent
#            is written (without waiting for fsync) before its Sync goes on
#            (slot lethe_small_bench_intents, dropped at exit)
#   nosync   (NOSYNC=1) as proxy, run from the package's test binary with
#            LETHE_BENCH_PROXY_NOSYNC=1: intents are written without waiting
#            for fsync (ledger.Options.IntentSync = ledger.IntentNoSync)
#
# Modes: extended (a prepared INSERT … VALUES ($1,$2,$3), binary parameters,
# as pgx and pgvector-go send it) and simple (inline literals, one Query per
# row, as psycopg2 sends it). For each run it reports inserts/s, p50/p99
# latency per insert, and the proxy process's CPU (utime+stime from
# /proc/PID/stat) per insert; ratios to direct and to the relay.
#
# Usage (test cluster running: scripts/testdb.sh start):
#   bench/small.sh                              # R=3 D=10 CLIENTS="4 8" MODES="extended simple"
#   NOSYNC=1 bench/small.sh                     # + the nosync target
#   R=1 D=5 CLIENTS=4 MODES=extended bench/small.sh   # quick
#
# Environment (defaults in brackets):
#   R            rounds [3]                    D          seconds per run [10]
#   CLIENTS      client counts ["4 8"]         MODES      ["extended simple"]
#   DIM          vector dimensions [1536]      WARMUP_S   unrecorded seconds per mode and target before round 1 [2]
#   NOSYNC       1 = add the nosync target [0]
#   TARGETS      which targets, in order [direct relay proxy wal walintents (nosync)]
#   SETTLE_S     seconds to let a capturing proxy commit its held confirmations
#                after each of its runs, counted in its CPU [11]
#   PG_DURABLE   1 = fsync and synchronous_commit on in the server for the run, as
#                in production, restored at exit; 0 = leave the cluster as it is [1]
#   PERF_TARGET  a proxy target to `perf record -g` for the whole run (e.g. proxy) []
#   BENCH_DB     database (created if missing) [lethe_bench]
#   TABLE        table (dropped and re-created) [public.lethe_small_bench]
#   LETHE_PROXY_ENV  extra "K=V K=V" environment for the proxies
#   QUIET_PCT    before each run, wait until the host was at most this % busy over 1s [20]; 0 = don't
#   QUIET_MAX    give up waiting after this many seconds [60]
#   RESULTS_DIR  [bench/results]; each invocation writes RESULTS_DIR/small-<UTC stamp>/
#   LETHE_TEST_PG_HOST/PORT/USER/PASSWORD  server and superuser (default: scripts/testdb.sh env)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

export R=${R:-3} D=${D:-10} DIM=${DIM:-1536} WARMUP_S=${WARMUP_S:-2} SETTLE_S=${SETTLE_S:-11}
export CLIENTS=${CLIENTS:-4 8} MODES=${MODES:-extended simple}
export QUIET_PCT=${QUIET_PCT:-20} QUIET_MAX=${QUIET_MAX:-60}
NOSYNC=${NOSYNC:-0}
DEFAULT_TARGETS="direct relay proxy wal walintents"
((NOSYNC == 0)) || DEFAULT_TARGETS+=" nosync"
TARGETS=${TARGETS:-$DEFAULT_TARGETS}
BENCH_DB=${BENCH_DB:-lethe_bench}
TABLE=${TABLE:-public.lethe_small_bench}
LETHE_PROXY_ENV=${LETHE_PROXY_ENV:-}
PG_DURABLE=${PG_DURABLE:-1}
PERF_TARGET=${PERF_TARGET:-}
RESULTS_DIR=${RESULTS_DIR:-$REPO/bench/results}

BENCH_NAME=small
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

for v in R D DIM WARMUP_S SETTLE_S QUIET_PCT QUIET_MAX PG_DURABLE NOSYNC; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
for t in $TARGETS; do
    case $t in direct | relay | proxy | wal | walintents | nosync) ;; *) die "unknown target '$t' (direct, relay, proxy, wal, walintents, nosync)" ;; esac
done
[[ $TABLE =~ ^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$ ]] || die "TABLE must be schema.table in lower case (got '$TABLE')"
[[ $BENCH_DB =~ ^[A-Za-z0-9_]+$ ]] || die "BENCH_DB must be a plain identifier"

connect_env lethe-small-bench
require_bins psql go getconf od
[[ -z $PERF_TARGET ]] || command -v perf >/dev/null || die "PERF_TARGET needs perf in PATH"
export CLK_TCK
CLK_TCK=$(getconf CLK_TCK)

WORK=$(mktemp -d /tmp/lethe-small.XXXXXX)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_DIR/small-$STAMP"
PIDS=() PERF_PID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    # shellcheck disable=SC2086 # PERF_PID is empty or one pid
    stop_pids 100 $PERF_PID "${PIDS[@]}"
    if [[ -d $OUT ]]; then cp "$WORK"/*.yaml "$WORK"/*.log "$OUT"/ 2>/dev/null || true; fi
    if [[ " $TARGETS " == *" wal"* ]]; then
        psql_direct -d "$BENCH_DB" -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name IN ('lethe_small_bench', 'lethe_small_bench_intents')" \
            -c "DROP PUBLICATION IF EXISTS lethe_small_bench, lethe_small_bench_inserts, lethe_small_bench_intents, lethe_small_bench_intents_inserts" >/dev/null ||
            log "WARNING: could not drop replication slots lethe_small_bench*; drop them, or they keep the server's WAL"
    fi
    restore_server_durability
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The ledger fsyncs every intent, as a production PostgreSQL fsyncs every
# commit; the test cluster runs with fsync=off, which would flatter direct.
if ((PG_DURABLE)); then make_server_durable; fi
ensure_bench_db "$BENCH_DB"

mkdir -p "$OUT"
log "results → $OUT"
log "building lethe-proxy and bench/small from $REPO"
build_binaries ./cmd/lethe-proxy ./bench/small
if [[ " $TARGETS " == *" nosync "* ]]; then
    # The package's test binary runs as the proxy when LETHE_BENCH_PROXY_NOSYNC=1
    # (cmd/lethe-proxy/nosync_bench_test.go): the shipped command has no such switch.
    (cd "$REPO" && go test -c -o "$WORK/lethe-proxy-nosync.test" ./cmd/lethe-proxy) || die "go test -c (nosync) failed"
    printf '#!/bin/sh\nLETHE_BENCH_PROXY_NOSYNC=1 exec %q "$@"\n' "$WORK/lethe-proxy-nosync.test" >"$WORK/lethe-proxy-nosync"
    chmod +x "$WORK/lethe-proxy-nosync"
fi

dsn() { echo "host=127.0.0.1 port=$1 user=$PG_USER dbname=$BENCH_DB sslmode=disable application_name=lethe-small-bench"; }
# A fresh random salt per invocation: the ledgers are thrown away afterwards.
SALT=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')

# start_proxy NAME BINARY CAPTURE(0|1|2|3): starts a lethe-proxy on a free
# port (capturing nothing, the table with capture.wal: off, the table with
# the WAL follower, or with the follower and capture.intents: always) and
# exports SMALL_DSN_NAME and SMALL_PID_NAME.
start_proxy() {
    local name=$1 bin=$2 capture=$3 port pid
    port=$(free_port)
    cat >"$WORK/$name.yaml" <<EOF
postgres:
  listen: 127.0.0.1:$port
  upstream: $PG_HOST:$PG_PORT
  upstream_tls: disable
capture:
  mode: strict
  ledger:
    sqlite: $WORK/$name-ledger.db
  database: $BENCH_DB
$(if ((capture >= 2)); then cat <<WALCFG
  store: "host=$PG_HOST port=$PG_PORT user=$PG_USER dbname=$BENCH_DB sslmode=disable"
  wal_slot: lethe_small_bench$( ((capture == 3)) && echo _intents)
  intents: $( ((capture == 3)) && echo always || echo auto)
WALCFG
else echo "  wal: off"; fi)
  tables:
$(if ((capture)); then cat <<RULE
    - table: $TABLE
      id: id
      subjects: ["metadata->>'user_id'"]
RULE
else echo "    []"; fi)
log:
  level: warn
shutdown_timeout: 2s
EOF
    log "starting $name (lethe-proxy, capture=$capture) on 127.0.0.1:$port${LETHE_PROXY_ENV:+ with env: $LETHE_PROXY_ENV}"
    # shellcheck disable=SC2086 # LETHE_PROXY_ENV is a list of K=V words
    env $LETHE_PROXY_ENV LETHE_SUBJECT_SALT="$SALT" "$bin" serve --config "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 </dev/null &
    pid=$!
    PIDS+=("$pid")
    wait_listening "$pid" "$port" "$name" "$WORK/$name.log"
    export "SMALL_DSN_$name=$(dsn "$port")" "SMALL_PID_$name=$pid"
}

CAPTURING=""
for t in $TARGETS; do
    case $t in
    direct) export "SMALL_DSN_direct=$(dsn "$PG_PORT")" ;;
    relay) start_proxy relay "$WORK/lethe-proxy" 0 ;;
    proxy) start_proxy proxy "$WORK/lethe-proxy" 1; CAPTURING+=" proxy" ;;
    wal) start_proxy wal "$WORK/lethe-proxy" 2; CAPTURING+=" wal" ;;
    walintents) start_proxy walintents "$WORK/lethe-proxy" 3; CAPTURING+=" walintents" ;;
    nosync) start_proxy nosync "$WORK/lethe-proxy-nosync" 1; CAPTURING+=" nosync" ;;
    esac
done

if [[ -n $PERF_TARGET ]]; then
    pid_var="SMALL_PID_$PERF_TARGET"
    [[ -n ${!pid_var:-} ]] || die "PERF_TARGET=$PERF_TARGET is not a running proxy target"
    log "perf record -g -p ${!pid_var} ($PERF_TARGET)"
    perf record -q -e cpu-clock -F 999 -g -p "${!pid_var}" -o "$WORK/perf.data" >"$WORK/perf.log" 2>&1 &
    PERF_PID=$!
fi

{
    host_meta
    echo "go=$(go version)"
    echo "rounds=$R d=$D clients=$CLIENTS modes=$MODES dim=$DIM warmup_s=$WARMUP_S settle_s=$SETTLE_S targets=$TARGETS"
    echo "pg_durable=$PG_DURABLE (server was: $DURABILITY_WAS) table=$TABLE db=$BENCH_DB"
    echo "lethe_proxy_env=$LETHE_PROXY_ENV quiet_pct=$QUIET_PCT quiet_max_s=$QUIET_MAX perf_target=$PERF_TARGET"
    echo "loadavg_at_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/meta.txt"

SMALL_TARGETS=$TARGETS SMALL_CAPTURING=$CAPTURING SMALL_ADMIN_DSN=$(dsn "$PG_PORT") SMALL_TABLE=$TABLE OUT_DIR=$OUT \
    "$WORK/small" 2> >(tee "$OUT/small.log" >&2)

if [[ -n $PERF_PID ]]; then
    kill -INT "$PERF_PID" 2>/dev/null || true
    wait "$PERF_PID" 2>/dev/null || true
    PERF_PID=""
    cp "$WORK/perf.data" "$OUT/perf.data" 2>/dev/null || true
    echo
    echo "profile of $PERF_TARGET (perf report --no-children), top symbols:"
    { perf report -i "$WORK/perf.data" --no-children --sort sym --stdio 2>/dev/null || true; } |
        grep -E '^ +[0-9.]+%' | sed -n 1,25p | tee "$OUT/perf-top.txt"
fi

for f in "$WORK"/*.log; do
    if grep -Eqi 'refus|LT00|error' "$f"; then log "$(basename "$f" .log) logged errors or refusals; see $OUT/$(basename "$f")"; fi
done
echo
echo "Per-run data: $OUT/runs.csv"
echo "Table:        $OUT/table.txt"
echo "Metadata:     $OUT/meta.txt"
