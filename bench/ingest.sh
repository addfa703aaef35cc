#!/usr/bin/env bash
# bench/ingest.sh — vector-table ingest, direct vs through lethe-proxy with
# capture on, interleaved (direct, proxy, direct, proxy, ...) for R rounds:
#
#   extended  multi-row INSERT (BATCH rows/statement), extended protocol, binary
#             parameters: text id, pgvector binary vector, jsonb    target ≥ 0.85× direct
#   simple    the same rows as inline literals, simple protocol    target ≥ 0.70× direct
#   copy      COPY … FROM STDIN WITH (FORMAT BINARY)                target ≥ 0.90× direct
#
# Rows: text id, vector(DIM), jsonb {"user_id": "user<N>@example.com"} over
# 1000 subjects. One connection per target. The table is truncated directly
# (not through the proxy, which refuses TRUNCATE in strict mode) before every
# run. For each run it records rows/s, the proxy's CPU (utime+stime from
# /proc/PID/stat) per row and its largest VmRSS (sampled every 100 ms from
# /proc/PID/status; VmHWM is monotone, so it is reported only as a total).
# Then a bounded-memory check streams BIG_MB MiB of binary COPY through the
# proxy, generated on the fly, and reports the proxy's peak RSS during it.
#
# The proxy (built from this checkout) runs with capture of the benchmark
# table, strict mode, an SQLite ledger in a temp dir and a random subject
# salt; it is stopped on exit. `lethe-proxy ledger counts` is printed at the
# end as a sanity check that the rows were tagged.
#
# Usage (test cluster running: scripts/testdb.sh start):
#   bench/ingest.sh
#   ROWS=5000 R=1 BIG_MB=256 bench/ingest.sh          # quick
#   PERF=1 R=1 WORKLOADS=simple BIG_MB=0 bench/ingest.sh   # + perf profile of the proxy
#
# Environment (defaults in brackets):
#   R            rounds [3]                 ROWS       rows per run [20000]
#   BATCH        rows per INSERT [100]      DIM        vector dimensions [1536]
#   WORKLOADS    ["extended simple copy"] (order within a round)
#   PAIRED_ROWS  rows per target of the paired extended measurement: statements
#                alternate direct/proxy, and the ratio of summed statement times
#                is reported (steadier than whole runs on a noisy host; ~20 s, so
#                it sees confirmation batches) [60000], 0 = none
#   SETTLE_S     seconds to let the proxy finish its background work (it holds
#                confirmations up to 10 s; with WAL=1 its SQLite ledger writes the
#                follower's changes into its index up to 10 s later) after each
#                proxy run, and with WAL=1 after each direct run too, counted in
#                the run's proxy CPU [11]. A run shorter than that hold never sees a batch of
#                confirmations committed while it runs: compare whole runs of
#                ROWS=100000 or more, or the paired measurement
#   WARMUP_ROWS  unrecorded rows per workload and target before round 1 [1000], 0 = none
#   BIG_MB       size of the bounded-memory COPY in MiB [1024], 0 = skip
#   BENCH_DB     database (created if missing) [lethe_bench]
#   TABLE        table (dropped and re-created) [public.lethe_ingest_bench]
#   PROXY_PORT   lethe-proxy port on 127.0.0.1 [0 = pick a free one]
#   LETHE_PROXY_ENV  extra "K=V K=V" environment for lethe-proxy only
#   QUIET_PCT    before each run, wait until the host was at most this % busy over 1s [20]; 0 = don't
#   QUIET_MAX    give up waiting after this many seconds [60]
#   PG_DURABLE   1 = fsync and synchronous_commit on in the server for the run, as in
#                production (the ledger fsyncs too), restored at exit; 0 = leave the
#                test cluster as it is (fsync=off) [1]
#   CAPTURE      0 = the proxy captures no table: the relay's own cost [1]
#   WAL          1 = the proxy's WAL follower follows the table (slot WAL_SLOT,
#                dropped at exit), and bench/wallag reports its lag over the
#                whole invocation (direct and proxy runs alike: it follows
#                every write): marker rows committed every 100 ms into
#                public.lethe_wallag_marker, timed until the slot is confirmed
#                past them (they are durably in the ledger); 0 = capture.wal: off [1]
#                With WAL=1, each run ends when the follower's slot is confirmed
#                past it (at most CATCHUP_MAX_S [300] seconds later): the
#                follower's work for a run is in that run's proxy CPU, not in the
#                next run's time. The wait is logged and in runs.csv (caught_up_s)
#   WAL_SLOT     [lethe_ingest_bench]
#   WAL_DECODING_MEM  capture.wal_decoding_mem of the proxy (e.g. 1GB): the walsender's
#                logical_decoding_work_mem; empty = the server's setting []. With WAL=1
#                the slot's spill and stream counters (pg_stat_replication_slots) and
#                the walsender's peak RSS (VmHWM) are reported at the end
#   VECTOR_STORAGE  the embedding column's STORAGE (plain, main, external, extended);
#                empty = the type's own (extended: a 1536-dimension vector is
#                TOASTed, and the walsender decodes its TOAST chunks) []
#   PERF         1 = `perf record -e cpu-clock -g` the proxy for the whole run and
#                print its top symbols [0]
#   RESULTS_DIR  [bench/results]; each invocation writes RESULTS_DIR/ingest-<UTC stamp>/
#   LETHE_TEST_PG_HOST/PORT/USER/PASSWORD  server and superuser (default: scripts/testdb.sh env)
#
# All connections use sslmode=disable (the proxy is not configured for TLS).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

export R=${R:-3} ROWS=${ROWS:-20000} BATCH=${BATCH:-100} DIM=${DIM:-1536}
export WORKLOADS=${WORKLOADS:-extended simple copy}
export WARMUP_ROWS=${WARMUP_ROWS:-1000} BIG_MB=${BIG_MB:-1024} PAIRED_ROWS=${PAIRED_ROWS:-60000}
export QUIET_PCT=${QUIET_PCT:-20} QUIET_MAX=${QUIET_MAX:-60} SETTLE_S=${SETTLE_S:-11}
BENCH_DB=${BENCH_DB:-lethe_bench}
TABLE=${TABLE:-public.lethe_ingest_bench}
PROXY_PORT=${PROXY_PORT:-0}
LETHE_PROXY_ENV=${LETHE_PROXY_ENV:-}
PERF=${PERF:-0}
CAPTURE=${CAPTURE:-1}
WAL=${WAL:-1}
WAL_SLOT=${WAL_SLOT:-lethe_ingest_bench}
WAL_DECODING_MEM=${WAL_DECODING_MEM:-}
PG_DURABLE=${PG_DURABLE:-1}
RESULTS_DIR=${RESULTS_DIR:-$REPO/bench/results}

BENCH_NAME=ingest
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

for v in R ROWS BATCH DIM WARMUP_ROWS PAIRED_ROWS SETTLE_S BIG_MB QUIET_PCT QUIET_MAX PROXY_PORT PG_DURABLE CAPTURE WAL; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
[[ $TABLE =~ ^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$ ]] || die "TABLE must be schema.table in lower case (got '$TABLE')"
[[ $BENCH_DB =~ ^[A-Za-z0-9_]+$ ]] || die "BENCH_DB must be a plain identifier"

# --- server connection ----------------------------------------------------------

connect_env lethe-ingest-bench
require_bins psql go getconf od
((PERF == 0)) || command -v perf >/dev/null || die "PERF=1 needs perf in PATH"
export CLK_TCK
CLK_TCK=$(getconf CLK_TCK)

# --- lifecycle -------------------------------------------------------------------

WORK=$(mktemp -d /tmp/lethe-ingest.XXXXXX)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_DIR/ingest-$STAMP"
PROXY_PID="" PERF_PID="" LAG_PID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    # shellcheck disable=SC2086 # each is empty or one pid
    stop_pids 50 $LAG_PID $PERF_PID $PROXY_PID
    if ((WAL && CAPTURE)); then
        psql_direct -d "$BENCH_DB" -c "SELECT pg_drop_replication_slot('$WAL_SLOT') FROM pg_replication_slots WHERE slot_name = '$WAL_SLOT'" \
            -c "DROP PUBLICATION IF EXISTS $WAL_SLOT, ${WAL_SLOT}_inserts" >/dev/null ||
            log "WARNING: could not drop replication slot $WAL_SLOT; drop it, or it keeps the server's WAL"
    fi
    if [[ -d $OUT ]]; then cp "$WORK"/proxy.yaml "$WORK"/proxy.log "$OUT"/ 2>/dev/null || true; fi
    restore_server_durability
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ((PROXY_PORT == 0)); then
    PROXY_PORT=$(free_port)
else
    port_free "$PROXY_PORT" || die "port 127.0.0.1:$PROXY_PORT is in use (set PROXY_PORT)"
fi

# --- server durability -------------------------------------------------------------
# PG_DURABLE=1 turns fsync and synchronous_commit on for the run and puts them
# back at exit (see make_server_durable in bench/lib.sh).
if ((PG_DURABLE)); then make_server_durable; fi
ensure_bench_db "$BENCH_DB"

mkdir -p "$OUT"
log "results → $OUT"
log "building lethe-proxy and bench/ingest from $REPO"
build_binaries ./cmd/lethe-proxy ./bench/ingest ./bench/wallag

# --- lethe-proxy with capture ----------------------------------------------------

if ((WAL && CAPTURE)); then
    # bench/wallag's marker rows: the table exists before the proxy starts,
    # so the follower publishes it from the start.
    psql_direct -d "$BENCH_DB" -c "CREATE TABLE IF NOT EXISTS public.lethe_wallag_marker (id text PRIMARY KEY, user_id text)" \
        -c "TRUNCATE public.lethe_wallag_marker"
fi

cat >"$WORK/proxy.yaml" <<EOF
postgres:
  listen: 127.0.0.1:$PROXY_PORT
  upstream: $PG_HOST:$PG_PORT
  upstream_tls: disable
capture:
  mode: strict
  ledger:
    sqlite: ${LEDGER_DIR:-$WORK}/ledger.db
  database: $BENCH_DB
$(if ((WAL)); then cat <<WALCFG
  store: "host=$PG_HOST port=$PG_PORT user=$PG_USER dbname=$BENCH_DB sslmode=disable"
  wal_slot: $WAL_SLOT
${WAL_DECODING_MEM:+  wal_decoding_mem: $WAL_DECODING_MEM}
WALCFG
else echo "  wal: off"; fi)
  tables:
$(if [ "$CAPTURE" = 1 ]; then cat <<RULE
    - table: $TABLE
      id: id
      subjects: ["metadata->>'user_id'"]
$(((WAL)) && printf '    - {table: public.lethe_wallag_marker, id: id, subjects: [user_id]}')
RULE
else echo "    []"; fi)
log:
  level: warn
shutdown_timeout: 2s
EOF
# A fresh random salt per invocation: the ledger is thrown away afterwards.
SALT=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')

log "starting lethe-proxy on 127.0.0.1:$PROXY_PORT${LETHE_PROXY_ENV:+ with env: $LETHE_PROXY_ENV}"
# shellcheck disable=SC2086 # LETHE_PROXY_ENV is a list of K=V words
env $LETHE_PROXY_ENV LETHE_SUBJECT_SALT="$SALT" "$WORK/lethe-proxy" serve --config "$WORK/proxy.yaml" >"$WORK/proxy.log" 2>&1 </dev/null &
PROXY_PID=$!
wait_listening "$PROXY_PID" "$PROXY_PORT" lethe-proxy "$WORK/proxy.log"

if ((PERF == 1)); then
    log "perf record -e cpu-clock -g -p $PROXY_PID"
    perf record -q -e cpu-clock -F 2000 -g -p "$PROXY_PID" -o "$WORK/perf.data" >"$WORK/perf.log" 2>&1 &
    PERF_PID=$!
fi

# --- metadata --------------------------------------------------------------------

{
    host_meta
    echo "pgvector=$(psql_direct -d "$BENCH_DB" -c "select coalesce((select extversion from pg_extension where extname = 'vector'), 'not yet installed')")"
    echo "go=$(go version)"
    echo "rounds=$R rows=$ROWS batch=$BATCH dim=$DIM warmup_rows=$WARMUP_ROWS paired_rows=$PAIRED_ROWS pg_durable=$PG_DURABLE (server was: $DURABILITY_WAS) capture=$CAPTURE wal=$WAL big_mb=$BIG_MB"
    echo "workloads=$WORKLOADS table=$TABLE db=$BENCH_DB"
    echo "wal_decoding_mem=${WAL_DECODING_MEM:-server} lethe_proxy_env=$LETHE_PROXY_ENV quiet_pct=$QUIET_PCT quiet_max_s=$QUIET_MAX perf=$PERF"
} >"$OUT/meta.txt"

# --- run -------------------------------------------------------------------------

dsn() { echo "host=127.0.0.1 port=$1 user=$PG_USER dbname=$BENCH_DB sslmode=disable application_name=lethe-ingest-bench"; }

FOLLOWED_SLOT=""
if ((WAL && CAPTURE)); then
    FOLLOWED_SLOT=$WAL_SLOT
    "$WORK/wallag" -dsn "$(dsn "$PG_PORT")" -table public.lethe_wallag_marker -slot "$WAL_SLOT" -csv "$OUT/wal-lag.csv" >"$OUT/wal-lag.txt" 2>&1 &
    LAG_PID=$!
fi
INGEST_DIRECT_DSN=$(dsn "$PG_PORT") INGEST_PROXY_DSN=$(dsn "$PROXY_PORT") \
    INGEST_PROXY_PID=$PROXY_PID INGEST_TABLE=$TABLE OUT_DIR=$OUT INGEST_WAL_SLOT=$FOLLOWED_SLOT \
    "$WORK/ingest" 2> >(tee "$OUT/ingest.log" >&2)

if [[ -n $LAG_PID ]]; then
    kill -INT "$LAG_PID" 2>/dev/null || true
    wait "$LAG_PID" 2>/dev/null || true
    LAG_PID=""
    echo
    echo "WAL follower lag over the whole invocation (bench/wallag):"
    tee -a "$OUT/meta.txt" <"$OUT/wal-lag.txt"
    # The walsender's decoding: what it spilled to disk or streamed, and its
    # peak RSS (shared buffers it touched included).
    echo "replication slot $WAL_SLOT (pg_stat_replication_slots, walsender VmHWM):"
    psql_direct -d "$BENCH_DB" -F ' ' -c "SELECT 'spill_txns=' || spill_txns, 'spill_bytes=' || spill_bytes, 'stream_txns=' || stream_txns,
            'stream_bytes=' || stream_bytes, 'total_txns=' || total_txns, 'total_bytes=' || total_bytes
        FROM pg_stat_replication_slots WHERE slot_name = '$WAL_SLOT'" | tee -a "$OUT/meta.txt"
    walsender=$(psql_direct -d "$BENCH_DB" -c "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '$WAL_SLOT'")
    echo "walsender_$(grep -s VmHWM "/proc/$walsender/status" | tr -s ' \t' ' ')" | tee -a "$OUT/meta.txt"
fi

if [[ -n $PERF_PID ]]; then
    kill -INT "$PERF_PID" 2>/dev/null || true
    wait "$PERF_PID" 2>/dev/null || true
    PERF_PID=""
    cp "$WORK/perf.data" "$OUT/perf.data" 2>/dev/null || true
    echo
    echo "proxy profile (perf report --no-children), top symbols:"
    { perf report -i "$WORK/perf.data" --no-children --sort sym --stdio 2>/dev/null || true; } |
        grep -E '^ +[0-9.]+%' | sed -n 1,15p | tee "$OUT/perf-top.txt"
    echo "by DSO:"
    { perf report -i "$WORK/perf.data" --no-children --sort dso --stdio 2>/dev/null || true; } |
        grep -E '^ +[0-9.]+%' | sed -n 1,6p | tee "$OUT/perf-dso.txt"
fi

# Stop the proxy (SIGTERM, graceful) before reading the ledger, so the
# counts are those of a settled ledger. After a large COPY the proxy can take
# well over shutdown_timeout to exit: it is still confirming tags.
log "stopping lethe-proxy (SIGTERM)"
t_stop=$(date +%s.%N)
kill -TERM "$PROXY_PID" 2>/dev/null || true
for _ in $(seq 1200); do kill -0 "$PROXY_PID" 2>/dev/null || break; sleep 0.1; done
stop_s=$(awk -v a="$t_stop" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if kill -0 "$PROXY_PID" 2>/dev/null; then
    log "lethe-proxy still running ${stop_s}s after SIGTERM; ledger counts below may show pending tags"
else
    PROXY_PID=""
    log "lethe-proxy exited ${stop_s}s after SIGTERM"
fi
echo "proxy_exit_after_sigterm_s=$stop_s" >>"$OUT/meta.txt"

echo
echo "ledger counts (lethe-proxy ledger counts):"
{ LETHE_SUBJECT_SALT="$SALT" "$WORK/lethe-proxy" ledger counts --config "$WORK/proxy.yaml" 2>&1 || true; } | tee "$OUT/ledger-counts.txt"
if grep -Eqi 'refus|LT00|error' "$WORK/proxy.log"; then
    log "the proxy logged errors or refusals; see $OUT/proxy.log"
fi
echo
echo "Per-run data: $OUT/runs.csv"
echo "Table:        $OUT/table.txt"
echo "Metadata:     $OUT/meta.txt"
