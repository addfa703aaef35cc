//go:build lethe_bench_intent_nosync

package main

import "github.com/lethe-privacy/lethe/ledger"

// A build for bench/small.sh's nosync target only: the proxy's ledger
// makes intents without waiting for fsync (ledger.IntentNoSync) even with
// capture.wal off, so that the cost of the durable intent can be measured
// side by side.
func init() { benchIntentSync = ledger.IntentNoSync }
