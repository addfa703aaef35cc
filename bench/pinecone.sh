#!/usr/bin/env bash
# bench/pinecone.sh — Pinecone upserts through lethe-proxy, against a plain
# httputil.ReverseProxy (the floor for any relay) and direct to the
# emulator, in one run:
#
#   direct  pineconeload → emulator (test/pinecone/emulator)
#   plain   pineconeload → bench/pineconerelay (httputil.ReverseProxy) → emulator
#   proxy   pineconeload → lethe-proxy serve → emulator
#
# Each upsert is 100 vectors × 1536 dimensions with metadata (a subject field
# user_id, a source and ~500 bytes of text): a ~1.8 MB JSON body over REST
# (HTTP/1.1, keep-alive) or a ~0.7 MB UpsertRequest over gRPC (grpc-go, the
# stack go-pinecone uses, h2c). CLIENTS clients send them back to back. The
# targets are interleaved within each round (rest: direct, plain, proxy;
# then grpc: the same; each round starting one target later than the last)
# so that machine noise falls on all of them alike;
# medians over the rounds are reported, with the ratios proxy/plain and
# proxy/direct and the p99 latency lethe-proxy adds over the plain relay.
# lethe-proxy's VmRSS is sampled throughout; DURATION > 0 adds a long run
# through lethe-proxy alone (REST and gRPC clients together) that reports
# its VmRSS minute by minute: the issue's "memory flat over 10 minutes" is
# DURATION=600.
#
# lethe-proxy runs from this checkout with one index (the emulator) whose
# namespace "bench" has the rule `subjects: [user_id]`, an SQLite ledger in a
# temp dir, a random subject salt and `log.level: warn`, and no PostgreSQL
# side (a proxy for Pinecone alone). RULES=0 leaves the namespace rule out:
# lethe-proxy is then the relay alone, no capture and no ledger, which
# separates the relay's own cost from capture's.
#
# Usage:
#   bench/pinecone.sh                      # R=3 rounds, D=8 s per run: ~2.5 minutes
#   R=5 D=10 bench/pinecone.sh             # ~5.5 minutes
#   DURATION=600 bench/pinecone.sh         # + 10 minutes through lethe-proxy alone
#
# Environment (defaults in brackets):
#   R [3] rounds   D [8] seconds per run   WARMUP [2] seconds per target, before round 1
#   CLIENTS [8]    PROTOCOLS [rest,grpc]   DURATION [0] seconds of the long run
#   RSS_EVERY [5] seconds between VmRSS samples
#   RULES [1]      0: lethe-proxy without namespace rules (the relay alone)
#   IDS [same]     same: every upsert sends the same 100 ids (a re-ingest of one
#                  document set); fresh: every upsert new ids (first ingest)
#   PIN [0]        1: the emulator and the clients on CPU 0, the relays on CPU 1
#                  (taskset), so that a relay's latency is measured with a CPU of
#                  its own: the added p50 "where the CPUs are not saturated"
#   LETHE_PROXY_ENV  extra "K=V" words for lethe-proxy's environment
#   RESULTS_DIR      [bench/results]; each invocation writes RESULTS_DIR/pinecone-<UTC stamp>/
#                    (summary.txt, runs.csv, meta.txt, the proxy's config and the logs)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
R=${R:-3} D=${D:-8} WARMUP=${WARMUP:-2} CLIENTS=${CLIENTS:-8} DURATION=${DURATION:-0} RSS_EVERY=${RSS_EVERY:-5}
PROTOCOLS=${PROTOCOLS:-rest,grpc}
LETHE_PROXY_ENV=${LETHE_PROXY_ENV:-}
RESULTS_DIR=${RESULTS_DIR:-$REPO/bench/results}
RULES=${RULES:-1}
IDS=${IDS:-same}
PIN=${PIN:-0}

log() { printf '[pinecone-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[pinecone-bench] ERROR: %s\n' "$*" >&2; exit 1; }
for v in R D WARMUP CLIENTS DURATION RSS_EVERY RULES PIN; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((R >= 1 && D >= 1 && CLIENTS >= 1 && RSS_EVERY >= 1)) || die "R, D, CLIENTS and RSS_EVERY must be >= 1"
[[ $IDS == same || $IDS == fresh ]] || die "IDS must be same or fresh (got '$IDS')"
PIN_LOAD=() PIN_RELAY=()
if ((PIN)); then
    (($(nproc) >= 2)) || die "PIN=1 needs 2 CPUs (this machine has $(nproc))"
    command -v taskset >/dev/null || die "PIN=1 needs taskset (util-linux)"
    PIN_LOAD=(taskset -c 0) PIN_RELAY=(taskset -c 1)
fi

WORK=$(mktemp -d /tmp/lethe-pcbench.XXXXXX)
OUT=$RESULTS_DIR/pinecone-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
PIDS=()
cleanup() {
    local rc=$?
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    cp "$WORK"/*.log "$WORK"/proxy.yaml "$OUT"/ 2>/dev/null || true
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building into $WORK"
(cd "$REPO" &&
    go build -o "$WORK/lethe-proxy" ./cmd/lethe-proxy &&
    go build -o "$WORK/pinecone-emulator" ./test/pinecone/emulator/cmd/pinecone-emulator &&
    go build -o "$WORK/pineconerelay" ./bench/pineconerelay &&
    go build -o "$WORK/pineconeload" ./bench/pineconeload) || die "go build failed"

BASE=$((20000 + RANDOM % 20000))
EMU_PORT=$BASE PLAIN_PORT=$((BASE + 1)) PROXY_PORT=$((BASE + 2))

# wait_port PORT PID: until something accepts on 127.0.0.1:PORT, or PID died.
wait_port() {
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || die "process $2 exited before listening on $1 (logs in $OUT after exit)"
        sleep 0.05
    done
    die "nothing listens on 127.0.0.1:$1 after 10 s"
}

"${PIN_LOAD[@]}" "$WORK/pinecone-emulator" -listen "127.0.0.1:$EMU_PORT" -index-name bench >"$WORK/emulator.log" 2>&1 </dev/null &
EMU_PID=$!
PIDS+=("$EMU_PID")
"${PIN_RELAY[@]}" "$WORK/pineconerelay" -listen "127.0.0.1:$PLAIN_PORT" -upstream "http://127.0.0.1:$EMU_PORT" >"$WORK/pineconerelay.log" 2>&1 </dev/null &
PLAIN_PID=$!
PIDS+=("$PLAIN_PID")

namespaces="      namespaces:
        - namespace: bench
          subjects: [user_id]"
((RULES)) || namespaces=""
cat >"$WORK/proxy.yaml" <<YAML
pinecone:
  listen: 127.0.0.1:$PROXY_PORT
  indexes:
    - name: bench
      host: http://127.0.0.1:$EMU_PORT
$namespaces
capture:
  ledger:
    sqlite: $WORK/ledger.db
log:
  level: warn
YAML
# shellcheck disable=SC2086 # LETHE_PROXY_ENV is a list of K=V words
env $LETHE_PROXY_ENV LETHE_SUBJECT_SALT="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
    "${PIN_RELAY[@]}" "$WORK/lethe-proxy" serve --config "$WORK/proxy.yaml" >"$WORK/lethe-proxy.log" 2>&1 </dev/null &
PROXY_PID=$!
PIDS+=("$PROXY_PID")

wait_port "$EMU_PORT" "$EMU_PID"
wait_port "$PLAIN_PORT" "$PLAIN_PID"
wait_port "$PROXY_PORT" "$PROXY_PID"
log "emulator :$EMU_PORT, plain relay :$PLAIN_PORT, lethe-proxy :$PROXY_PORT (idle VmRSS $(awk '/^VmRSS/ {print $2, $3}' "/proc/$PROXY_PID/status"))"

{
    echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "git_rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "git_changes=$(git -C "$REPO" status --porcelain -- . ':!bench' 2>/dev/null | awk '{print $1 ":" $2}' | paste -sd' ')"
    echo "nproc=$(nproc)"
    echo "cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "kernel=$(uname -r)"
    echo "go=$(go version)"
    echo "rounds=$R run_s=$D warmup_s=$WARMUP clients=$CLIENTS protocols=$PROTOCOLS duration_s=$DURATION rss_every_s=$RSS_EVERY rules=$RULES ids=$IDS pin=$PIN"
    echo "lethe_proxy_env=$LETHE_PROXY_ENV"
    echo "loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/meta.txt"

nproto=$(tr ',' '\n' <<<"$PROTOCOLS" | wc -l)
budget=$(((R * D + WARMUP) * 3 * nproto + DURATION + 120))
# With fresh ids the emulator keeps every vector it is sent, and slows as
# it grows: allow the runs twice their time.
[[ $IDS == fresh ]] && budget=$((2 * budget))
log "results → $OUT (at most $budget s)"
timeout "$budget" "${PIN_LOAD[@]}" "$WORK/pineconeload" \
    -direct "http://127.0.0.1:$EMU_PORT" -plain "http://127.0.0.1:$PLAIN_PORT" -proxy "http://127.0.0.1:$PROXY_PORT" \
    -plain-pid "$PLAIN_PID" -proxy-pid "$PROXY_PID" -protocols "$PROTOCOLS" \
    -rounds "$R" -run "${D}s" -warmup "${WARMUP}s" -clients "$CLIENTS" \
    -duration "${DURATION}s" -rss-every "${RSS_EVERY}s" -fresh-ids="$([[ $IDS == fresh ]] && echo true || echo false)" -out "$OUT"
echo "loadavg_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/meta.txt"
for pid in "$EMU_PID" "$PLAIN_PID" "$PROXY_PID"; do
    kill -0 "$pid" 2>/dev/null || die "process $pid exited during the run (logs in $OUT)"
done
log "done: $OUT"
