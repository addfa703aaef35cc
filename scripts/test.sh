#!/usr/bin/env bash
# The test command from README.md: prepares this machine (packages,
# pgvector, npm modules), starts the throwaway test cluster and runs every
# check and test: gofmt, go vet and staticcheck, unit tests with the race detector,
# the fuzz seed corpora, and the integration tests against real PostgreSQL
# and real client libraries.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/testdb.sh start
eval "$(scripts/testdb.sh env)"

echo "[test] gofmt, go vet, staticcheck"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './test/integration/node/*'))
if [[ -n "$unformatted" ]]; then
    echo "[test] gofmt would change these files (run gofmt -w on them):" >&2
    echo "$unformatted" >&2
    exit 1
fi
go vet ./...
go vet -tags integration ./test/integration/
staticcheck="go run honnef.co/go/tools/cmd/staticcheck@v0.8.2"
$staticcheck ./...
$staticcheck -tags integration ./test/integration/

echo "[test] unit tests (race detector)"
# The Node certificate verifier, the browser verifier (headless Chromium) and the
# spec-only Python verifier (test/specverify) run too.
LETHE_REQUIRE_NODE=1 LETHE_REQUIRE_CHROMIUM=1 LETHE_REQUIRE_PYTHON=1 go test -race -count=1 ./...

echo "[test] integration tests (race detector: the relay and capture run in-process)"
go test -race -tags integration -count=1 -timeout 20m ./test/integration/ "$@"

echo "[test] all passed"
