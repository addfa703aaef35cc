#!/usr/bin/env bash
# bench/pgbench.sh — pgbench -S through three targets, interleaved:
#
#   direct     pgbench → PostgreSQL
#   pgbouncer  pgbench → PgBouncer (session mode) → PostgreSQL
#   proxy      pgbench → lethe-proxy (built from this checkout), no capture rules → PostgreSQL
#   capture    pgbench → lethe-proxy with capture on: six rules, among them the
#              three tables pgbench -S reads (opt in: TARGETS="... capture")
#
# For every run it records tps, latency and the CPU time (utime+stime from
# /proc/PID/stat) and context switches of the pgbouncer / lethe-proxy process,
# plus the CPU of pgbench and of all PostgreSQL processes and the share of the
# host's CPU used by anything else (other_cpu_pct, to spot noisy runs), then
# prints medians, ratios and CPU µs per transaction. Everything runs on
# loopback; PgBouncer and lethe-proxy are started here and stopped on exit.
#
# Usage (as root, test cluster running: scripts/testdb.sh start):
#   bench/pgbench.sh
#   R=5 D=30 bench/pgbench.sh
#   LETHE_PROXY_ENV="GOMAXPROCS=1" bench/pgbench.sh
#
# Environment (defaults in brackets):
#   R                rounds [3]        D        seconds per run [10]
#   CLIENTS          pgbench -c [8]    THREADS  pgbench -j [2]
#   SCALE            pgbench -i -s [10]
#   MODES            query modes ["simple prepared"]
#   TARGETS          ["direct pgbouncer proxy"] (order = order within a round); add
#                    capture for a capture-on proxy (its ratio to proxy is printed)
#   CAPTURE_PORT     capture-on lethe-proxy port on 127.0.0.1 [16434]
#   WARMUP           seconds of unrecorded warm-up per target before round 1 [3], 0 = none
#   INIT             1 = run pgbench -i once [1]; 0 = reuse existing tables
#   BENCH_DB         database (created if missing) [lethe_bench]
#   PGB_PORT         PgBouncer port on 127.0.0.1 [16432]
#   PROXY_PORT       lethe-proxy port on 127.0.0.1 [16433]
#   LETHE_PROXY_ENV  extra "K=V K=V" environment for lethe-proxy only, e.g. "GOMAXPROCS=1 GOGC=400"
#   QUIET_PCT        before each run, wait until the host was at most this % busy over
#                    1s (others' builds and tests skew a 2-core box) [20]; 0 = don't wait
#   QUIET_MAX        give up waiting after this many seconds and run anyway [90]
#   OTHER_MAX        a run during which other processes used more than this % of the
#                    host's CPU is marked "noisy" and repeated [10]; 0 = never repeat
#   RETRIES          repeats per run at most; the last attempt counts whatever its noise [2]
#   PERF             1 = also count context switches / migrations with `perf stat -p` [0]
#   RESULTS_DIR      [bench/results]; each invocation writes RESULTS_DIR/<UTC stamp>/
#   LETHE_TEST_PG_HOST/PORT/USER/PASSWORD  server and superuser (default: scripts/testdb.sh env)
#
# All connections use sslmode=disable: the test server has ssl=on, and
# neither PgBouncer nor the proxy is configured for TLS here, so this keeps
# the three targets comparable (plaintext everywhere).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ROUNDS=${R:-3}
DURATION=${D:-10}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
SCALE=${SCALE:-10}
MODES=${MODES:-simple prepared}
TARGETS=${TARGETS:-direct pgbouncer proxy}
WARMUP=${WARMUP:-3}
INIT=${INIT:-1}
BENCH_DB=${BENCH_DB:-lethe_bench}
PGB_PORT=${PGB_PORT:-16432}
PROXY_PORT=${PROXY_PORT:-16433}
CAPTURE_PORT=${CAPTURE_PORT:-16434}
LETHE_PROXY_ENV=${LETHE_PROXY_ENV:-}
PERF=${PERF:-0}
QUIET_PCT=${QUIET_PCT:-20}
QUIET_MAX=${QUIET_MAX:-90}
OTHER_MAX=${OTHER_MAX:-10}
RETRIES=${RETRIES:-2}
RESULTS_DIR=${RESULTS_DIR:-$REPO/bench/results}

BENCH_NAME=bench
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

for v in ROUNDS DURATION CLIENTS THREADS SCALE WARMUP PGB_PORT PROXY_PORT CAPTURE_PORT QUIET_PCT QUIET_MAX OTHER_MAX RETRIES; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((ROUNDS >= 1 && DURATION >= 1)) || die "R and D must be >= 1"
for t in $TARGETS; do [[ $t == direct || $t == pgbouncer || $t == proxy || $t == capture ]] || die "unknown target '$t'"; done
for m in $MODES; do [[ $m == simple || $m == extended || $m == prepared ]] || die "unknown mode '$m'"; done

# --- server connection ----------------------------------------------------------

connect_env lethe-bench
require_bins pgbench psql pgbouncer go getconf
CLK_TCK=$(getconf CLK_TCK)

# --- lifecycle -------------------------------------------------------------------

WORK=$(mktemp -d /tmp/lethe-bench.XXXXXX)
chmod 0755 "$WORK"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="$RESULTS_DIR/$STAMP"
PGB_PID="" PROXY_PID="" CAPTURE_PID="" PERF_PID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    # shellcheck disable=SC2086 # each is empty or one pid
    stop_pids 50 $PERF_PID $CAPTURE_PID $PROXY_PID $PGB_PID
    if [[ -d $OUT ]]; then
        cp "$WORK"/*.log "$WORK"/*.ini "$WORK"/*.yaml "$OUT"/ 2>/dev/null || true
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- preflight -------------------------------------------------------------------

psql_direct -d postgres -c 'select 1' >/dev/null || die "cannot reach PostgreSQL at $PG_HOST:$PG_PORT as $PG_USER (scripts/testdb.sh start?)"
for p in $PGB_PORT $PROXY_PORT $CAPTURE_PORT; do port_free "$p" || die "port 127.0.0.1:$p is in use (set PGB_PORT / PROXY_PORT)"; done

mkdir -p "$OUT"
log "results → $OUT"

log "building lethe-proxy from $REPO"
(cd "$REPO" && go build -o "$WORK/lethe-proxy" ./cmd/lethe-proxy) || die "go build failed"

if [[ $(psql_direct -d postgres -c "select 1 from pg_database where datname = '$BENCH_DB'") != 1 ]]; then
    log "creating database $BENCH_DB"
    psql_direct -d postgres -c "create database \"$BENCH_DB\""
fi
if [[ $INIT == 1 ]]; then
    log "pgbench -i -s $SCALE $BENCH_DB"
    pgbench -i -q -s "$SCALE" -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$BENCH_DB" >"$WORK/init.log" 2>&1 ||
        { cat "$WORK/init.log" >&2; die "pgbench -i failed"; }
fi

# --- PgBouncer -------------------------------------------------------------------
# Auth: SCRAM passthrough. The userlist holds the role's SCRAM secret copied
# from pg_authid, so PgBouncer verifies the client's SCRAM exchange itself and
# then logs in to the server with the client's derived keys; no cleartext
# password is stored. pgbench keeps one connection per client for the whole
# run, so authentication cost is outside the measured window anyway.

SECRET=$(psql_direct -d postgres -c "select rolpassword from pg_authid where rolname = '$PG_USER'")
[[ $SECRET == SCRAM-SHA-256\$* ]] || die "role $PG_USER has no SCRAM secret in pg_authid"
printf '"%s" "%s"\n' "$PG_USER" "$SECRET" >"$WORK/userlist.txt"
cat >"$WORK/pgbouncer.ini" <<EOF
[databases]
$BENCH_DB = host=$PG_HOST port=$PG_PORT dbname=$BENCH_DB

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGB_PORT
unix_socket_dir =
pool_mode = session
auth_type = scram-sha-256
auth_file = $WORK/userlist.txt
max_client_conn = 100
default_pool_size = $((CLIENTS + 4))
server_tls_sslmode = disable
client_tls_sslmode = disable
ignore_startup_parameters = extra_float_digits
logfile = $WORK/pgbouncer.log
log_connections = 0
log_disconnections = 0
EOF

PGB_RUN=()
if [[ $(id -u) -eq 0 ]]; then
    # PgBouncer refuses to run as root; setpriv execs, so $! is pgbouncer itself.
    chown postgres: "$WORK/userlist.txt" "$WORK/pgbouncer.ini"
    touch "$WORK/pgbouncer.log" && chown postgres: "$WORK/pgbouncer.log"
    PGB_RUN=(setpriv --reuid=postgres --regid=postgres --init-groups --)
fi
chmod 0600 "$WORK/userlist.txt"

if [[ " $TARGETS " == *" pgbouncer "* ]]; then
    log "starting pgbouncer on 127.0.0.1:$PGB_PORT"
    "${PGB_RUN[@]}" pgbouncer "$WORK/pgbouncer.ini" >>"$WORK/pgbouncer.stderr.log" 2>&1 </dev/null &
    PGB_PID=$!
    wait_listening "$PGB_PID" "$PGB_PORT" pgbouncer "$WORK/pgbouncer.log"
fi

# --- lethe-proxy -----------------------------------------------------------------

cat >"$WORK/proxy.yaml" <<EOF
postgres:
  listen: 127.0.0.1:$PROXY_PORT
  upstream: $PG_HOST:$PG_PORT
  upstream_tls: disable
log:
  level: warn
shutdown_timeout: 2s
EOF
if [[ " $TARGETS " == *" proxy "* ]]; then
    log "starting lethe-proxy on 127.0.0.1:$PROXY_PORT${LETHE_PROXY_ENV:+ with env: $LETHE_PROXY_ENV}"
    # shellcheck disable=SC2086 # LETHE_PROXY_ENV is a list of K=V words
    env $LETHE_PROXY_ENV "$WORK/lethe-proxy" serve --config "$WORK/proxy.yaml" >"$WORK/proxy.log" 2>&1 </dev/null &
    PROXY_PID=$!
    wait_listening "$PROXY_PID" "$PROXY_PORT" proxy "$WORK/proxy.log"
fi

# The capture-on proxy: six rules, three of them on the tables pgbench -S
# reads (so every SELECT names a configured table) and three on vector-store
# shaped tables it never touches; a SQLite ledger in $WORK, no WAL follower.
if [[ " $TARGETS " == *" capture "* ]]; then
    for i in 1 2 3; do
        psql_direct -d "$BENCH_DB" -c "create table if not exists lethe_bench_docs_$i (id text primary key, user_id text, metadata jsonb)" >/dev/null
    done
    cat >"$WORK/capture.yaml" <<EOF
postgres:
  listen: 127.0.0.1:$CAPTURE_PORT
  upstream: $PG_HOST:$PG_PORT
  upstream_tls: disable
capture:
  mode: strict
  ledger:
    sqlite: $WORK/capture-ledger.db
  database: $BENCH_DB
  wal: off
  tables:
    - {table: pgbench_accounts, id: aid, subjects: [bid]}
    - {table: pgbench_branches, id: bid, subjects: [bbalance]}
    - {table: pgbench_tellers, id: tid, subjects: [bid]}
    - {table: lethe_bench_docs_1, id: id, subjects: [user_id]}
    - {table: lethe_bench_docs_2, id: id, subjects: ["metadata->>'user_id'"]}
    - {table: lethe_bench_docs_3, id: id, subjects: [user_id]}
log:
  level: warn
shutdown_timeout: 2s
EOF
    log "starting capture-on lethe-proxy on 127.0.0.1:$CAPTURE_PORT${LETHE_PROXY_ENV:+ with env: $LETHE_PROXY_ENV}"
    # shellcheck disable=SC2086 # LETHE_PROXY_ENV is a list of K=V words
    env $LETHE_PROXY_ENV LETHE_SUBJECT_SALT="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
        "$WORK/lethe-proxy" serve --config "$WORK/capture.yaml" >"$WORK/capture.log" 2>&1 </dev/null &
    CAPTURE_PID=$!
    wait_listening "$CAPTURE_PID" "$CAPTURE_PORT" capture "$WORK/capture.log"
fi

target_port() {
    case $1 in direct) echo "$PG_PORT" ;; pgbouncer) echo "$PGB_PORT" ;; proxy) echo "$PROXY_PORT" ;; capture) echo "$CAPTURE_PORT" ;; esac
}
target_pid() {
    case $1 in direct) echo "" ;; pgbouncer) echo "$PGB_PID" ;; proxy) echo "$PROXY_PID" ;; capture) echo "$CAPTURE_PID" ;; esac
}

for t in $TARGETS; do
    got=$(psql -X -q -At -h 127.0.0.1 -p "$(target_port "$t")" -U "$PG_USER" -d "$BENCH_DB" \
        -c 'select count(*) from pgbench_branches') || die "sanity query through $t failed"
    [[ $got == "$SCALE" || $INIT == 0 ]] || die "through $t: pgbench_branches has $got rows, expected $SCALE"
done

# --- measurement helpers ---------------------------------------------------------

cpu_ticks() { # utime+stime of the whole process (all threads, live and exited)
    local s
    s=$(<"/proc/$1/stat") || return 1
    s=${s##*) }
    # shellcheck disable=SC2086
    set -- $s
    echo $((${12} + ${13}))
}

ctx_switches() { # voluntary nonvoluntary, summed over the process's live threads
    awk '/^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2} END {print v + 0, n + 0}' \
        /proc/"$1"/task/*/status 2>/dev/null
}

# PostgreSQL's CPU: the postmaster's own ticks, its reaped children (cutime +
# cstime: backends that exited) and its live children (backends, aux
# processes). The difference of two snapshots is the CPU all PostgreSQL
# processes used in between, whether a backend lived through the window
# (PgBouncer's pooled server connections), ended in it or started in it.
PM_PID=""
if [[ -r ${LETHE_TEST_PG_DATA:-/nonexistent}/postmaster.pid ]]; then
    read -r PM_PID <"$LETHE_TEST_PG_DATA/postmaster.pid" || true
    [[ $(cat "/proc/$PM_PID/comm" 2>/dev/null) == postgres* ]] || PM_PID=""
fi
[[ -n $PM_PID ]] || log "postmaster pid unknown (LETHE_TEST_PG_DATA): no PostgreSQL CPU / other-load columns"

pg_ticks() {
    [[ -n $PM_PID ]] || { echo 0; return; }
    local f line pid sum=0
    for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        pid=${line%% *}
        line=${line##*) }
        # shellcheck disable=SC2086
        set -- $line # $2 ppid, $12 utime, $13 stime, $14 cutime, $15 cstime
        if [[ $pid == "$PM_PID" ]]; then
            sum=$((sum + ${12} + ${13} + ${14} + ${15}))
        elif [[ $2 == "$PM_PID" ]]; then
            sum=$((sum + ${12} + ${13}))
        fi
    done
    echo "$sum"
}

children_ticks() { # cutime+cstime of this script: its reaped children, i.e. pgbench
    local line
    read -r line <"/proc/$$/stat"
    line=${line##*) }
    # shellcheck disable=SC2086
    set -- $line
    echo $((${14} + ${15}))
}

host_cpu() { # total busy steal, in ticks, from /proc/stat
    local _cpu user nice system idle iowait irq softirq steal rest
    read -r _cpu user nice system idle iowait irq softirq steal rest </proc/stat
    echo "$((user + nice + system + idle + iowait + irq + softirq + steal)) $((user + nice + system + irq + softirq + steal)) $steal"
}

PERF_OK=0
if [[ $PERF == 1 ]]; then
    if command -v perf >/dev/null && perf stat -x, -e context-switches true >/dev/null 2>&1; then
        PERF_OK=1
    else
        log "PERF=1 but 'perf stat -e context-switches' does not work here; skipping perf"
    fi
fi

CSV="$OUT/runs.csv"
echo "round,mode,target,duration_s,status,tps,latency_ms,transactions,proc_cpu_s,proc_cpu_us_per_tx,proc_vcsw,proc_ivcsw,proc_csw_per_tx,perf_csw,perf_migrations,pgbench_cpu_us_per_tx,pg_cpu_us_per_tx,total_cpu_us_per_tx,host_busy_pct,host_steal_pct,other_cpu_pct,quiet_wait_s" >"$CSV"

# wait_quiet: block (at most QUIET_MAX s) until the host's busy % over one
# second is <= QUIET_PCT, i.e. nobody else is compiling or testing. Prints the
# seconds waited.
wait_quiet() {
    local start=$SECONDS a b pct
    ((QUIET_PCT > 0)) || { echo 0; return; }
    while :; do
        a=$(host_cpu)
        sleep 1
        b=$(host_cpu)
        pct=$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[1] - x[1]; print (t > 0 ? int(100 * (y[2] - x[2]) / t) : 0) }')
        ((pct <= QUIET_PCT)) && break
        if ((SECONDS - start >= QUIET_MAX)); then
            log "host still ${pct}% busy after ${QUIET_MAX}s; running anyway"
            break
        fi
        sleep 1
    done
    echo $((SECONDS - start))
}

# run_one ROUND MODE TARGET SECONDS RECORD(0|1) FINAL(0|1)
# Returns 1 when the run was noisy (other_cpu_pct > OTHER_MAX) and not FINAL,
# i.e. the caller should repeat it.
run_one() {
    local round=$1 mode=$2 target=$3 secs=$4 record=$5 final=${6:-1}
    local port pid rlog c0=0 c1=0 v0=0 n0=0 v1=0 n1=0 h0 h1 g0 g1 k0 k1 perf_out="" rc=0
    port=$(target_port "$target")
    pid=$(target_pid "$target")
    rlog="$WORK/run-$round-$mode-$target.log"
    local waited=0
    if ((record)); then waited=$(wait_quiet); fi
    if [[ -n $pid ]]; then
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$WORK/$target.log" >&2 || true; die "$target (pid $pid) is no longer running"; }
        if ((PERF_OK && record)); then
            perf_out="$WORK/perf-$round-$mode-$target.csv"
            perf stat -x, -e context-switches,cpu-migrations -p "$pid" -o "$perf_out" &
            PERF_PID=$!
            sleep 0.2
        fi
        c0=$(cpu_ticks "$pid")
        read -r v0 n0 < <(ctx_switches "$pid")
    fi
    g0=$(pg_ticks)
    k0=$(children_ticks)
    h0=$(host_cpu)
    timeout -k 5 $((secs + 60)) pgbench -n -S -M "$mode" -c "$CLIENTS" -j "$THREADS" -T "$secs" \
        -h 127.0.0.1 -p "$port" -U "$PG_USER" "$BENCH_DB" >"$rlog" 2>&1 || rc=$?
    h1=$(host_cpu)
    k1=$(children_ticks)
    sleep 0.3 # let direct/proxied backends exit and be reaped into the postmaster's cutime
    g1=$(pg_ticks)
    if [[ -n $pid ]]; then
        c1=$(cpu_ticks "$pid")
        read -r v1 n1 < <(ctx_switches "$pid")
        if [[ -n $PERF_PID ]]; then
            kill -INT "$PERF_PID" 2>/dev/null || true
            wait "$PERF_PID" 2>/dev/null || true
            PERF_PID=""
        fi
    fi
    ((record)) || { ((rc == 0)) || { tail -n 5 "$rlog" >&2; log "warm-up through $target failed"; }; return 0; }

    local tps lat tx status=ok
    tps=$(awk '/^tps = / {print $3; exit}' "$rlog")
    lat=$(awk '/^latency average = / {print $4; exit}' "$rlog")
    tx=$(awk -F': ' '/^number of transactions actually processed/ {split($2, a, "/"); print a[1]; exit}' "$rlog")
    if ((rc != 0)) || [[ -z $tps || -z $tx ]] || grep -q '^number of failed transactions: [1-9]' "$rlog"; then
        status=fail
        log "run failed: round $round $mode $target (rc=$rc):"
        tail -n 5 "$rlog" >&2
    fi
    local pcs="" pmig=""
    if [[ -n $perf_out && -s $perf_out ]]; then
        pcs=$(awk -F, '$3 == "context-switches" {print $1}' "$perf_out")
        pmig=$(awk -F, '$3 == "cpu-migrations" {print $1}' "$perf_out")
    fi
    # shellcheck disable=SC2086
    awk -v round="$round" -v mode="$mode" -v target="$target" -v secs="$secs" -v status="$status" \
        -v tps="${tps:-}" -v lat="${lat:-}" -v tx="${tx:-0}" -v haspid="${pid:+1}" \
        -v dticks=$((c1 - c0)) -v hz="$CLK_TCK" -v dv=$((v1 - v0)) -v dn=$((n1 - n0)) \
        -v pcs="$pcs" -v pmig="$pmig" -v h0="$h0" -v h1="$h1" \
        -v dpg=$((g1 - g0)) -v dcli=$((k1 - k0)) -v haspg="${PM_PID:+1}" -v waited="$waited" 'BEGIN {
            split(h0, a, " "); split(h1, b, " ")
            tot = b[1] - a[1]; busy = b[2] - a[2]; steal = b[3] - a[3]
            us = 1e6 / hz
            cli = tx > 0 ? sprintf("%.2f", dcli * us / tx) : ""
            pg = ""; all = ""; other = ""
            if (haspg) {
                ours = dcli + dpg + (haspid ? dticks : 0)
                if (tx > 0) { pg = sprintf("%.2f", dpg * us / tx); all = sprintf("%.2f", ours * us / tx) }
                other = tot > 0 ? sprintf("%.1f", 100 * (busy - ours) / tot) : ""
            }
            cpu = ""; cpt = ""; v = ""; n = ""; cst = ""
            if (haspid) {
                cpu = sprintf("%.2f", dticks / hz)
                v = dv; n = dn
                if (tx > 0) { cpt = sprintf("%.2f", dticks / hz * 1e6 / tx); cst = sprintf("%.3f", (dv + dn) / tx) }
            }
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.1f,%.1f,%s,%s\n", round, mode, target, secs, status,
                tps, lat, tx, cpu, cpt, v, n, cst, pcs, pmig, cli, pg, all,
                (tot > 0 ? 100 * busy / tot : 0), (tot > 0 ? 100 * steal / tot : 0), other, waited
        }' >>"$CSV"
    local other
    other=$(tail -n 1 "$CSV" | cut -d, -f21)
    if [[ $status == ok && -n $other && $final == 0 && $OTHER_MAX -gt 0 ]] &&
        awk -v o="$other" -v m="$OTHER_MAX" 'BEGIN { exit !(o > m) }'; then
        sed -i '$ s/^\([^,]*,[^,]*,[^,]*,[^,]*\),ok,/\1,noisy,/' "$CSV"
        status=noisy
    fi
    tail -n 1 "$CSV" | awk -F, '{printf "[bench] round %s %-8s %-9s tps=%-8.0f proc_us/tx=%-6s total_us/tx=%-6s other_cpu=%s%% (waited %ss)%s\n", $1, $2, $3, $6, ($10 == "" ? "-" : $10), ($18 == "" ? "-" : $18), ($21 == "" ? "-" : $21), $22, ($5 == "noisy" ? "  NOISY, repeating" : ($5 == "fail" ? "  FAILED" : ""))}' >&2
    [[ $status != noisy ]]
}

# --- metadata --------------------------------------------------------------------

{
    host_meta # the proxy is built from the working tree: git_changes lists what differs from HEAD
    echo "pgbench=$(pgbench --version)"
    echo "pgbouncer=$(pgbouncer --version 2>&1 | head -n 1)"
    echo "go=$(go version)"
    echo "rounds=$ROUNDS duration_s=$DURATION clients=$CLIENTS threads=$THREADS scale=$SCALE warmup_s=$WARMUP"
    echo "modes=$MODES"
    echo "targets=$TARGETS"
    echo "lethe_proxy_env=$LETHE_PROXY_ENV"
    echo "perf=$PERF_OK quiet_pct=$QUIET_PCT quiet_max_s=$QUIET_MAX other_max_pct=$OTHER_MAX retries=$RETRIES"
} >"$OUT/meta.txt"

# --- run -------------------------------------------------------------------------

total=$((ROUNDS * $(wc -w <<<"$MODES") * $(wc -w <<<"$TARGETS") * DURATION))
log "rounds=$ROUNDS D=${DURATION}s clients=$CLIENTS threads=$THREADS modes=[$MODES] targets=[$TARGETS]: ~${total}s of measurement"

if ((WARMUP > 0)); then
    log "warm-up: ${WARMUP}s per target (not recorded)"
    for t in $TARGETS; do run_one 0 simple "$t" "$WARMUP" 0; done
fi

for ((round = 1; round <= ROUNDS; round++)); do
    for mode in $MODES; do
        for t in $TARGETS; do
            for ((attempt = 0; attempt <= RETRIES; attempt++)); do
                run_one "$round" "$mode" "$t" "$DURATION" 1 $((attempt == RETRIES)) && break
            done
        done
    done
done

# --- summary ---------------------------------------------------------------------
# Medians over rounds of tps and of per-run CPU µs/tx (failed runs excluded).

awk -F, -v modes="$MODES" -v summary="$OUT/summary.csv" '
    function median(list,    a, n, i, j, t) {
        n = split(list, a, " ")
        if (n == 0) return ""
        for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function ratio(x, y) { return (x == "" || y == "" || y == 0) ? "" : sprintf("%.3f", x / y) }
    function f(x, fmt) { return x == "" ? "-" : sprintf(fmt, x) }
    NR > 1 && $5 == "ok" {
        k = $2 SUBSEP $3
        tps[k] = tps[k] " " $6; n[k]++
        if ($10 != "") cpu[k] = cpu[k] " " $10
        if ($13 != "") csw[k] = csw[k] " " $13
        if ($18 != "") tot[k] = tot[k] " " $18
        if ($21 != "") oth[k] = oth[k] " " $21
        if (!(k in lo) || $6 + 0 < lo[k]) lo[k] = $6 + 0
        if (!(k in hi) || $6 + 0 > hi[k]) hi[k] = $6 + 0
    }
    END {
        print "mode,direct_tps,pgbouncer_tps,proxy_tps,proxy_over_direct,pgbouncer_over_direct,proxy_over_pgbouncer,pgbouncer_cpu_us_per_tx,proxy_cpu_us_per_tx,pgbouncer_csw_per_tx,proxy_csw_per_tx,direct_total_cpu_us_per_tx,pgbouncer_total_cpu_us_per_tx,proxy_total_cpu_us_per_tx,capture_tps,capture_over_proxy,capture_cpu_us_per_tx" > summary
        printf "%-9s %11s %11s %11s %8s %8s %8s %10s %10s\n", "mode", "direct", "pgbouncer", "proxy", "prx/dir", "pgb/dir", "prx/pgb", "pgb us/tx", "prx us/tx"
        nm = split(modes, M, " ")
        for (i = 1; i <= nm; i++) {
            m = M[i]
            d = median(tps[m SUBSEP "direct"]); b = median(tps[m SUBSEP "pgbouncer"]); p = median(tps[m SUBSEP "proxy"])
            bc = median(cpu[m SUBSEP "pgbouncer"]); pc = median(cpu[m SUBSEP "proxy"])
            bs = median(csw[m SUBSEP "pgbouncer"]); ps = median(csw[m SUBSEP "proxy"])
            printf "%-9s %11s %11s %11s %8s %8s %8s %10s %10s\n", m, f(d, "%.0f"), f(b, "%.0f"), f(p, "%.0f"),
                f(ratio(p, d), "%s"), f(ratio(b, d), "%s"), f(ratio(p, b), "%s"), f(bc, "%.1f"), f(pc, "%.1f")
            dt = median(tot[m SUBSEP "direct"]); bt = median(tot[m SUBSEP "pgbouncer"]); pt = median(tot[m SUBSEP "proxy"])
            c = median(tps[m SUBSEP "capture"]); cc = median(cpu[m SUBSEP "capture"])
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", m, d, b, p, ratio(p, d), ratio(b, d), ratio(p, b), bc, pc, bs, ps, dt, bt, pt, c, ratio(c, p), cc > summary
            if (c != "") capline[m] = sprintf("%-9s %11s %11s %8s %10s %10s", m, f(p, "%.0f"), f(c, "%.0f"), f(ratio(c, p), "%s"), f(pc, "%.1f"), f(cc, "%.1f"))
        }
        if (length(capline) > 0) {
            print ""
            printf "%-9s %11s %11s %8s %10s %10s\n", "mode", "proxy", "capture", "cap/prx", "prx us/tx", "cap us/tx"
            for (i = 1; i <= nm; i++) if (M[i] in capline) print capline[M[i]]
        }
        print ""
        print "per target: tps min..max over rounds; medians of: context switches of pgbouncer/proxy per tx,"
        print "total CPU µs/tx (pgbench + PostgreSQL + pgbouncer/proxy), CPU % used by other processes on the host"
        for (i = 1; i <= nm; i++) {
            m = M[i]
            split("direct pgbouncer proxy capture", T, " ")
            for (j = 1; j <= 4; j++) {
                k = m SUBSEP T[j]
                if (!(k in n)) continue
                printf "  %-9s %-9s n=%d  tps %6.0f..%-6.0f  csw/tx=%-6s  total_us/tx=%-6s  other_cpu=%s%%\n", m, T[j], n[k], lo[k], hi[k],
                    f(median(csw[k]), "%.2f"), f(median(tot[k]), "%.1f"), f(median(oth[k]), "%.1f")
            }
        }
    }' "$CSV" | tee "$OUT/table.txt"

fails=$(awk -F, 'NR > 1 && $5 == "fail"' "$CSV" | wc -l)
noisy=$(awk -F, 'NR > 1 && $5 == "noisy"' "$CSV" | wc -l)
((fails == 0)) || log "WARNING: $fails failed run(s); see $CSV"
((noisy == 0)) || log "$noisy noisy run(s) (other_cpu_pct > $OTHER_MAX) were repeated and are left out of the medians"
echo
echo "Per-run data: $CSV"
echo "Medians:      $OUT/summary.csv"
echo "Metadata:     $OUT/meta.txt"
