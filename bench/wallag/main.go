// Command wallag measures how long a committed row takes to reach the
// ledger through the WAL follower while a load runs: every -interval it
// commits a marker row into a configured table, straight to the server,
// and notes when the follower's replication slot is confirmed past the
// marker's commit. The follower confirms a position only once every
// change before it is durable in the ledger, so the lag of a marker is
// the time from its commit until it is durably in the ledger: it includes
// the follower's wait for transactions committed before it, decoding, and
// the durable ledger commit. It runs until SIGINT or SIGTERM, then prints
// the median, p99 and maximum, and the markers never seen. With -csv it
// also writes each seen marker's commit time and lag, to show when the
// stalls happened.
//
//	wallag -dsn "host=127.0.0.1 port=55432 user=lethe dbname=lethe_bench" \
//	       -table public.lethe_wallag_marker -slot lethe_ingest_bench
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
)

func main() {
	dsn := flag.String("dsn", "", "libpq connection string of the server")
	table := flag.String("table", "", "a configured table (id text primary key, user_id text) for the marker rows")
	slot := flag.String("slot", "", "the follower's replication slot")
	interval := flag.Duration("interval", 100*time.Millisecond, "how often a marker is committed")
	poll := flag.Duration("poll", 10*time.Millisecond, "how often the slot is read")
	csvPath := flag.String("csv", "", "write committed_unix_ms,lag_ms for each marker seen to this file")
	flag.Parse()
	if *dsn == "" || *table == "" || *slot == "" {
		fmt.Fprintln(os.Stderr, "wallag: -dsn, -table and -slot are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	conn, err := pgx.Connect(context.Background(), *dsn)
	check(err)
	defer conn.Close(context.Background())
	insert := fmt.Sprintf("INSERT INTO %s (id, user_id) VALUES ($1, 'wallag@bench')", pgx.Identifier(strings.Split(*table, ".")).Sanitize())

	// Markers in commit order, each with its commit time and a position
	// past its commit, until the slot is confirmed past that.
	type marker struct {
		at  time.Time
		end pglogrepl.LSN
	}
	var unseen []marker
	var lags []time.Duration
	var trace []string // committed_unix_ms,lag_ms lines for -csv
	next, seq := time.Now(), 0
	tick := time.NewTicker(*poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		if !time.Now().Before(next) {
			seq++
			_, err := conn.Exec(context.Background(), insert, fmt.Sprintf("wallag-%d-%09d", os.Getpid(), seq))
			check(err)
			at := time.Now()
			var end pglogrepl.LSN
			check(conn.QueryRow(context.Background(), "SELECT pg_current_wal_insert_lsn()").Scan(&end))
			unseen = append(unseen, marker{at: at, end: end})
			next = time.Now().Add(*interval)
		}
		if len(unseen) == 0 {
			continue
		}
		var confirmed pglogrepl.LSN
		check(conn.QueryRow(context.Background(), "SELECT coalesce(confirmed_flush_lsn, '0/0') FROM pg_replication_slots WHERE slot_name = $1", *slot).Scan(&confirmed))
		now := time.Now()
		for len(unseen) > 0 && unseen[0].end <= confirmed {
			m := unseen[0]
			lags = append(lags, now.Sub(m.at))
			trace = append(trace, fmt.Sprintf("%d,%.0f", m.at.UnixMilli(), ms(now.Sub(m.at))))
			unseen = unseen[1:]
		}
	}
	if *csvPath != "" {
		check(os.WriteFile(*csvPath, []byte("committed_unix_ms,lag_ms\n"+strings.Join(trace, "\n")+"\n"), 0o644))
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[min(len(lags)-1, int(p*float64(len(lags))))]
	}
	fmt.Printf("wal_lag_markers=%d wal_lag_p50_ms=%.0f wal_lag_p99_ms=%.0f wal_lag_max_ms=%.0f wal_lag_unseen_at_end=%d\n",
		len(lags), ms(pct(0.5)), ms(pct(0.99)), ms(pct(1)), len(unseen))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "wallag:", err)
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
