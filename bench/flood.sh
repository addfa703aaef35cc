#!/usr/bin/env bash
# bench/flood.sh — the proxy's memory under one session that floods a
# captured table with Bind/Execute pairs and no Sync, as no library does.
# It prints, per scenario, the proxy's peak VmRSS (sampled every 50 ms) and
# its VmRSS 10 s after the client closed.
#
#   read-sync     reads the answers, ends with a Sync (commits, or is refused)
#   noread-close  never reads, disconnects without a Sync
#
# Usage (test cluster running: scripts/testdb.sh start):
#   bench/flood.sh                       # N=1000000 pairs per scenario
#   N=200000 BASELINE=911d78a bench/flood.sh   # also the proxy built at that commit, side by side
#
# Environment: N [1000000], SCENARIOS ["read-sync noread-close"],
# BASELINE (a commit to compare with) [none], BENCH_DB [lethe_bench],
# LETHE_PROXY_ENV (extra "K=V" for the proxy).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
N=${N:-1000000}
SCENARIOS=${SCENARIOS:-read-sync noread-close}
BENCH_DB=${BENCH_DB:-lethe_bench}
TABLE=public.lethe_flood_bench
LETHE_PROXY_ENV=${LETHE_PROXY_ENV:-}
BASELINE=${BASELINE:-}

log() { printf '[flood %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[flood] ERROR: %s\n' "$*" >&2; exit 1; }
[[ $N =~ ^[0-9]+$ ]] || die "N must be a number"

if [[ -z ${LETHE_TEST_PG_PORT:-} ]]; then eval "$("$REPO/scripts/testdb.sh" env)"; fi
PG_HOST=${LETHE_TEST_PG_HOST:-127.0.0.1} PG_PORT=${LETHE_TEST_PG_PORT:?} PG_USER=${LETHE_TEST_PG_USER:?}
export PGPASSWORD=${LETHE_TEST_PG_PASSWORD:?} PGSSLMODE=disable
case $PG_HOST in 127.* | localhost | ::1) ;; *) die "refusing non-loopback server $PG_HOST" ;; esac
psql_direct() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$@"; }

WORK=$(mktemp -d /tmp/lethe-flood.XXXXXX)
PROXY_PID=""
cleanup() {
    local rc=$?
    if [[ -n $PROXY_PID ]]; then kill -TERM "$PROXY_PID" 2>/dev/null || true; wait "$PROXY_PID" 2>/dev/null || true; fi
    if [[ -n $BASELINE ]]; then git -C "$REPO" worktree remove --force "$WORK/baseline" 2>/dev/null || true; fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

if [[ $(psql_direct -d postgres -c "select 1 from pg_database where datname = '$BENCH_DB'") != 1 ]]; then
    psql_direct -d postgres -c "create database \"$BENCH_DB\""
fi
psql_direct -d "$BENCH_DB" -c "drop table if exists $TABLE; create table $TABLE (id text primary key, user_id text)"

(cd "$REPO" && go build -o "$WORK/lethe-proxy" ./cmd/lethe-proxy && go build -o "$WORK/flood" ./bench/flood) || die "go build failed"
BUILDS=current
if [[ -n $BASELINE ]]; then
    git -C "$REPO" worktree add --detach "$WORK/baseline" "$BASELINE" >/dev/null || die "cannot check out $BASELINE"
    (cd "$WORK/baseline" && go build -o "$WORK/lethe-proxy-baseline" ./cmd/lethe-proxy) || die "go build of $BASELINE failed"
    BUILDS="baseline current"
fi
PROXY_PORT=$((20000 + RANDOM % 20000))
cat >"$WORK/proxy.yaml" <<YAML
postgres:
  listen: 127.0.0.1:$PROXY_PORT
  upstream: $PG_HOST:$PG_PORT
capture:
  ledger:
    sqlite: $WORK/ledger.db
  database: $BENCH_DB
  wal: off # the relay's own memory is measured
  tables:
    - table: $TABLE
      id: id
      subjects: [user_id]
log:
  level: warn
YAML
# Builds before capture.database (911d78a and older) do not know the key.
grep -v '^  database:' "$WORK/proxy.yaml" >"$WORK/proxy-baseline.yaml"

for scenario in $SCENARIOS; do
  for build in $BUILDS; do
    binary=$WORK/lethe-proxy config=$WORK/proxy.yaml
    [[ $build == baseline ]] && binary=$WORK/lethe-proxy-baseline config=$WORK/proxy-baseline.yaml
    case $scenario in
    read-sync) READ=1 SYNC=1 ;;
    noread-close) READ=0 SYNC=0 ;;
    *) die "unknown scenario $scenario" ;;
    esac
    psql_direct -d "$BENCH_DB" -c "truncate $TABLE"
    rm -f "$WORK"/ledger.db*
    # shellcheck disable=SC2086 # LETHE_PROXY_ENV is a list of K=V words
    env $LETHE_PROXY_ENV LETHE_SUBJECT_SALT="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
        "$binary" serve --config "$config" >"$WORK/proxy.log" 2>&1 </dev/null &
    PROXY_PID=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null && break; sleep 0.1; done
    idle=$(awk '/^VmRSS/ {print $2}' "/proc/$PROXY_PID/status")
    log "$build, $scenario: $N pairs (proxy idle at $((idle / 1024)) MiB)"
    result=$(FLOOD_DSN="host=127.0.0.1 port=$PROXY_PORT user=$PG_USER dbname=$BENCH_DB sslmode=disable" \
        FLOOD_PROXY_PID=$PROXY_PID FLOOD_TABLE=$TABLE FLOOD_N=$N FLOOD_READ=$READ FLOOD_SYNC=$SYNC "$WORK/flood")
    echo "build=$build scenario=$scenario idle_rss_mib=$((idle / 1024)) $result"
    kill -TERM "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true; PROXY_PID=""
  done
done
