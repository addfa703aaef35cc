//go:build lethe_bench_intent_nosync

package main

import "github.com/lethe-privacy/lethe/ledger"

// A build for bench/small.sh's nosync target only: the proxy's ledger
// makes intents without waiting for fsync (ledger.IntentNoSync), so that
// the cost of the durable intent can be measured side by side. It is no
// configuration: capture.ledger has no key for it yet.
func init() { benchIntentSync = ledger.IntentNoSync }
