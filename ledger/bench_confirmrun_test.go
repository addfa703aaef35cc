package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkConfirmAll64 confirms 64 intents of 100 entries together, as
// the capture core hands the ledger its held confirmations: with the same
// 100 records in every intent (a re-ingest) and with new ones (a first
// ingest). One op is the 64 confirmations; the intents are made outside
// the timer.
//
//	go test -run '^$' -bench ConfirmAll64 -benchtime 50x ./ledger/
func BenchmarkConfirmAll64(b *testing.B) {
	backends := map[string]func(b *testing.B) Ledger{
		"sqlite": func(b *testing.B) Ledger {
			l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			return l
		},
		"postgres": func(b *testing.B) Ledger {
			conn := testPGConnString(b)
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(b, conn)})
			if err != nil {
				b.Fatal(err)
			}
			return l
		},
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, same := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/same-ids=%v", backend, same), func(b *testing.B) {
				l := backends[backend](b)
				defer l.Close()
				ctx := context.Background()
				entries := make([]Entry, 100)
				ids := make([]IntentID, 64)
				n := 0
				for range b.N {
					b.StopTimer()
					for k := range ids {
						for j := range entries {
							if !same {
								n++
							}
							entries[j] = entry("docs", fmt.Sprintf("doc-%d-%d", n, j), fmt.Sprintf("user-%d", j%7))
						}
						id, err := l.Intend(ctx, entries)
						if err != nil {
							b.Fatal(err)
						}
						ids[k] = id
					}
					b.StartTimer()
					for _, err := range l.ConfirmAll(ctx, ids) {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
