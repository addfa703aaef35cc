package main

import (
	"os"
	"testing"

	"github.com/lethe-privacy/lethe/ledger"
)

// benchNoSyncEnv makes this package's test binary (go test -c) run as
// lethe-proxy whose ledger makes intents without waiting for fsync
// (ledger.IntentNoSync) even with capture.wal off: bench/small.sh's
// nosync target, which measures the cost of the durable intent side by
// side. The shipped command has no such switch.
const benchNoSyncEnv = "LETHE_BENCH_PROXY_NOSYNC"

func TestMain(m *testing.M) {
	if os.Getenv(benchNoSyncEnv) == "1" {
		coreOptions.UnfollowedSync = ledger.IntentNoSync
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
