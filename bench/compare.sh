#!/usr/bin/env bash
# bench/compare.sh — one bench script at two commits, alternated, for a
# before/after table measured in one sitting on one machine:
#
#   before, after, before, after, ...   (ROUNDS pairs)
#
# Each commit is cloned from this checkout into a temp dir and its own
# bench/SCRIPT runs there with the environment given here (R, D, ROWS, ...),
# so each side builds and measures its own lethe-proxy with the workload as
# that commit defined it. Every run's summary is copied to
# RESULTS_DIR/compare-<UTC stamp>/<n>-<before|after>-<rev>/ and the end of
# each run's output (its medians and ratios) is printed at the end; compare each run's ratios (to
# direct, to the relay), never absolute rates across runs.
#
# Usage (test cluster running: scripts/testdb.sh start):
#   bench/compare.sh 5c2b288 HEAD pgbench.sh
#   ROUNDS=2 R=2 D=8 bench/compare.sh 5c2b288 HEAD pinecone.sh
#   ROWS=10000 BIG_MB=0 PAIRED_ROWS=0 bench/compare.sh 5c2b288 HEAD ingest.sh
#
# Environment (defaults in brackets):
#   ROUNDS       before/after pairs [1]
#   RESULTS_DIR  [bench/results]
#   TAIL         lines of each run's output printed at the end [40]
#   SCRIPT_FROM  after = run the after commit's bench/SCRIPT and bench/lib.sh on
#                both sides (for a target the before commit's script lacks, e.g.
#                pgbench.sh's capture); each side still builds its own
#                lethe-proxy []
set -euo pipefail

if (($# != 3)); then
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
fi
before=$1 after=$2 script=$3
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-1}
RESULTS_DIR=${RESULTS_DIR:-$REPO/bench/results}

before_rev=$(git -C "$REPO" rev-parse --short "$before")
after_rev=$(git -C "$REPO" rev-parse --short "$after")
WORK=$(mktemp -d /tmp/lethe-compare.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
out="$RESULTS_DIR/compare-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"

for side in before after; do
    rev=${side}_rev
    git clone -q --no-checkout "$REPO" "$WORK/$side"
    git -C "$WORK/$side" checkout -q --detach "${!rev}"
    [[ -x "$WORK/$side/bench/$script" ]] || { echo "compare: ${!rev} has no bench/$script" >&2; exit 2; }
done

if [[ "${SCRIPT_FROM:-}" == after ]]; then
    cp "$WORK/after/bench/$script" "$WORK/after/bench/lib.sh" "$WORK/before/bench/"
fi

n=0
for ((round = 1; round <= ROUNDS; round++)); do
    for side in before after; do
        rev=${side}_rev
        n=$((n + 1))
        dest="$out/$n-$side-${!rev}"
        echo "== round $round: $side (${!rev}) bench/$script" >&2
        mkdir -p "$dest"
        RESULTS_DIR="$dest" "$WORK/$side/bench/$script" > "$dest/stdout.txt" 2> "$dest/stderr.txt" ||
            { echo "compare: bench/$script at ${!rev} failed; see $dest/stderr.txt" >&2; exit 1; }
    done
done

for dir in "$out"/*/; do
    echo "===== $(basename "$dir")"
    tail -n "${TAIL:-40}" "$dir/stdout.txt"
done | tee "$out/summaries.txt"
echo "compare: results in $out" >&2
