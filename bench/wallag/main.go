// Command wallag measures how long a committed row takes to reach the
// ledger through the WAL follower while a load runs: every -interval it
// commits a marker row into a configured table, straight to the server,
// and notes when the row shows up in the proxy's SQLite ledger (read-only,
// beside the running proxy). The lag of a marker is the time from its
// commit to its entry in the ledger, so it includes the follower's wait
// for transactions committed before it, decoding, and the durable ledger
// commit. It runs until SIGINT or SIGTERM, then prints the median, p99 and
// maximum, and the markers never seen. With -csv it also writes each
// seen marker's commit time and lag, to show when the stalls happened.
//
//	wallag -dsn "host=127.0.0.1 port=55432 user=lethe dbname=lethe_bench" \
//	       -table public.lethe_wallag_marker -ledger /tmp/x/ledger.db
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/mattn/go-sqlite3"
)

func main() {
	dsn := flag.String("dsn", "", "libpq connection string of the server")
	table := flag.String("table", "", "a configured table (id text primary key, user_id text) for the marker rows")
	ledgerPath := flag.String("ledger", "", "the proxy's SQLite ledger file")
	interval := flag.Duration("interval", 100*time.Millisecond, "how often a marker is committed")
	poll := flag.Duration("poll", 10*time.Millisecond, "how often the ledger is read")
	csvPath := flag.String("csv", "", "write committed_unix_ms,lag_ms for each marker seen to this file")
	flag.Parse()
	if *dsn == "" || *table == "" || *ledgerPath == "" {
		fmt.Fprintln(os.Stderr, "wallag: -dsn, -table and -ledger are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	conn, err := pgx.Connect(context.Background(), *dsn)
	check(err)
	defer conn.Close(context.Background())
	db, err := sql.Open("sqlite3", "file:"+*ledgerPath+"?mode=ro&_busy_timeout=5000")
	check(err)
	defer db.Close()
	insert := fmt.Sprintf("INSERT INTO %s (id, user_id) VALUES ($1, 'wallag@bench')", pgx.Identifier(strings.Split(*table, ".")).Sanitize())

	committed := map[string]time.Time{} // marker id → commit time, until seen
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
			id := fmt.Sprintf("wallag-%d-%09d", os.Getpid(), seq) // ids sort as they were committed
			_, err := conn.Exec(context.Background(), insert, id)
			check(err)
			committed[id] = time.Now()
			next = time.Now().Add(*interval)
		}
		if len(committed) == 0 {
			continue
		}
		// Only the range of markers not yet seen, through the primary key:
		// the poll must cost next to nothing beside the load it measures,
		// however big the ledger grows.
		unseen := slices.Sorted(maps.Keys(committed))
		rows, err := db.Query(`SELECT record_id FROM entries WHERE store = 'postgres' AND tbl = ? AND record_id BETWEEN ? AND ?`,
			*table, unseen[0], unseen[len(unseen)-1])
		check(err)
		now := time.Now()
		for rows.Next() {
			var id string
			check(rows.Scan(&id))
			if at, ok := committed[id]; ok {
				lags = append(lags, now.Sub(at))
				trace = append(trace, fmt.Sprintf("%d,%.0f", at.UnixMilli(), ms(now.Sub(at))))
				delete(committed, id)
			}
		}
		check(rows.Err())
		rows.Close()
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
		len(lags), ms(pct(0.5)), ms(pct(0.99)), ms(pct(1)), len(committed))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "wallag:", err)
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
