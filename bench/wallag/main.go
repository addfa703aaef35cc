// Command wallag measures how far the WAL follower trails the server while
// a load runs: every -interval it notes the server's WAL position and the
// time, and the lag of that sample is how long the follower's slot takes
// to confirm it (pg_replication_slots.confirmed_flush_lsn, which moves only
// once the rows are durable in the ledger). It runs until SIGINT or
// SIGTERM, then prints the lag's median, p99 and maximum, and how many
// samples the slot never reached (still pending at the end).
//
//	wallag -dsn "host=127.0.0.1 port=55432 user=lethe dbname=lethe_bench" -slot lethe_ingest_bench
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

type sample struct {
	lsn uint64
	at  time.Time
}

func main() {
	dsn := flag.String("dsn", "", "libpq connection string of the server")
	slot := flag.String("slot", "", "the follower's replication slot")
	interval := flag.Duration("interval", 100*time.Millisecond, "how often a WAL position is sampled")
	poll := flag.Duration("poll", 10*time.Millisecond, "how often the slot is read")
	flag.Parse()
	if *dsn == "" || *slot == "" {
		fmt.Fprintln(os.Stderr, "wallag: -dsn and -slot are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	conn, err := pgx.Connect(context.Background(), *dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wallag:", err)
		os.Exit(1)
	}
	defer conn.Close(context.Background())

	var pending []sample
	var lags []time.Duration
	nextSample := time.Now()
	tick := time.NewTicker(*poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		now := time.Now()
		var current, confirmed uint64
		err := conn.QueryRow(context.Background(), `
			SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, coalesce(confirmed_flush_lsn - '0/0'::pg_lsn, 0)
			FROM pg_replication_slots WHERE slot_name = $1`, *slot).Scan(&current, &confirmed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wallag:", err)
			os.Exit(1)
		}
		for len(pending) > 0 && pending[0].lsn <= confirmed {
			lags = append(lags, now.Sub(pending[0].at))
			pending = pending[1:]
		}
		if !now.Before(nextSample) {
			pending = append(pending, sample{current, now})
			nextSample = now.Add(*interval)
		}
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(p*float64(len(lags))))]
	}
	fmt.Printf("wal_lag_samples=%d wal_lag_p50_ms=%.0f wal_lag_p99_ms=%.0f wal_lag_max_ms=%.0f wal_lag_unconfirmed_at_end=%d\n",
		len(lags), ms(pct(0.5)), ms(pct(0.99)), ms(pct(1)), len(pending))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
