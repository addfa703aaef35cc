package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Benchmarks. Results, the machine and the exact commands are recorded in
// the report that introduced them (and belong in docs/benchmarks.md):
//
//	go test -run '^$' -bench 'Intend' -benchtime 3s ./ledger/
//	LETHE_BENCH_ROWS=1000000 go test -run '^$' -bench 'BySubject' -benchtime 20000x -timeout 30m ./ledger/
//
// LETHE_BENCH_ROWS (default 100000) is the number of (record, subject)
// rows in the lookup benchmarks; the loaded SQLite file is kept in
// LETHE_BENCH_DIR (default the system temp dir) and reused by later runs,
// the PostgreSQL schema lethe_ledger_bench_<rows> likewise.

func benchRows(b *testing.B) int {
	s := os.Getenv("LETHE_BENCH_ROWS")
	if s == "" {
		return 100_000
	}
	n, err := strconv.ParseFloat(s, 64) // accepts 1e7
	if err != nil || n < 10 {
		b.Fatalf("LETHE_BENCH_ROWS=%q: want a row count of at least 10", s)
	}
	return int(n)
}

// benchIntend measures Intend throughput from many connections at once:
// the case group commit is for.
func benchIntend(b *testing.B, l Ledger) {
	var n atomic.Int64
	b.SetParallelism(16) // 16 × GOMAXPROCS proxied connections writing at once
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			_, err := l.Intend(context.Background(), []Entry{
				{Store: StorePostgres, Table: "public.docs", RecordID: strconv.FormatInt(i, 10), Subject: testHasher.Hash(strconv.FormatInt(i%1000, 10))},
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkIntend(b *testing.B) {
	windows := []struct {
		name   string
		window time.Duration
	}{{"window=none", 0}, {"window=1ms", time.Millisecond}}
	for _, w := range windows {
		b.Run("SQLite/parallel/"+w.name, func(b *testing.B) {
			l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{CommitWindow: w.window})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			benchIntend(b, l)
			b.ReportMetric(float64(l.pendingFile.requests.Load())/float64(l.pendingFile.batches.Load()), "intents/commit")
		})
		b.Run("SQLite/serial/"+w.name, func(b *testing.B) {
			l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{CommitWindow: w.window})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			for i := range b.N {
				if _, err := l.Intend(context.Background(), []Entry{entry("public.docs", strconv.Itoa(i), "alice")}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Postgres/parallel/"+w.name, func(b *testing.B) {
			conn := testPGConnString(b)
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(b, conn), CommitWindow: w.window})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			benchIntend(b, l)
			b.ReportMetric(float64(l.decisions.requests.Load())/float64(l.decisions.batches.Load()), "intents/commit")
		})
	}
}

// BenchmarkIntendSync compares durable intents with IntentNoSync: one
// caller at a time (how long a lone insert waits for its intent) and many
// at once (group commit). The PostgreSQL rows mean something only when the
// test cluster runs with fsync on (bench/small.sh turns it on for its
// runs; scripts/testdb.sh starts it with fsync off).
func BenchmarkIntendSync(b *testing.B) {
	serial := func(b *testing.B, l Ledger) {
		for i := range b.N {
			if _, err := l.Intend(context.Background(), []Entry{entry("public.docs", strconv.Itoa(i), "alice")}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, mode := range []IntentSync{IntentDurable, IntentNoSync} {
		b.Run("SQLite/serial/"+mode.String(), func(b *testing.B) {
			l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{IntentSync: mode})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			serial(b, l)
		})
		b.Run("SQLite/parallel/"+mode.String(), func(b *testing.B) {
			l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{IntentSync: mode})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			benchIntend(b, l)
			b.ReportMetric(float64(l.pendingFile.requests.Load())/float64(l.pendingFile.batches.Load()), "intents/commit")
		})
		b.Run("Postgres/serial/"+mode.String(), func(b *testing.B) {
			conn := testPGConnString(b)
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(b, conn), IntentSync: mode})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			serial(b, l)
		})
	}
}

// benchRow is row i of the lookup data set: rows/10 subjects with ten
// records each, spread over four tables, as chunks of users' documents.
func benchRow(i, rows int) (table, recordID string, subject SubjectHash) {
	s := i % (rows / 10)
	return "public.docs_" + strconv.Itoa(i%4), fmt.Sprintf("%012d", i), testHasher.Hash("subject-" + strconv.Itoa(s))
}

// benchLookups runs b.N lookups of random subjects and reports the
// latency percentiles.
func benchLookups(b *testing.B, l Ledger, rows int) {
	lat := make([]time.Duration, 0, b.N)
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		subject := testHasher.Hash("subject-" + strconv.Itoa(r.IntN(rows/10)))
		t0 := time.Now()
		recs, err := l.BySubject(ctx, subject)
		lat = append(lat, time.Since(t0))
		if err != nil || len(recs) != 10 {
			b.Fatalf("BySubject: %d records, %v; want 10", len(recs), err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}

func BenchmarkBySubject(b *testing.B) {
	rows := benchRows(b)
	b.Run(fmt.Sprintf("SQLite/rows=%d", rows), func(b *testing.B) {
		dir := os.Getenv("LETHE_BENCH_DIR")
		if dir == "" {
			dir = os.TempDir()
		}
		path := filepath.Join(dir, fmt.Sprintf("lethe-ledger-bench-%d.db", rows))
		l, err := OpenSQLite(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		loadSQLiteBench(b, l, rows)
		benchLookups(b, l, rows)
	})
	b.Run(fmt.Sprintf("Postgres/rows=%d", rows), func(b *testing.B) {
		conn := testPGConnString(b)
		l, err := OpenPostgres(context.Background(), conn, Options{Schema: fmt.Sprintf("lethe_ledger_bench_%d", rows)})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		loadPostgresBench(b, l, rows)
		benchLookups(b, l, rows)
	})
}

// loadSQLiteBench fills an empty bench ledger with rows confirmed entries,
// straight into the table (going through Intend and Confirm would
// measure those, not lookups). A ledger already full is reused.
func loadSQLiteBench(b *testing.B, l *SQLite, rows int) {
	ctx := context.Background()
	var have int
	if err := l.writer.QueryRowContext(ctx, `SELECT count(*) FROM entries`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == rows {
		return
	}
	if have != 0 {
		b.Fatalf("bench ledger has %d rows, want 0 or %d: delete it", have, rows)
	}
	start := time.Now()
	conn, err := l.writer.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	// Without the subject index while loading, then one sorted index
	// build: inserting random hashes into a B-tree row by row is what
	// makes a big load slow. 1 GiB of page cache while at it.
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -1048576; DROP INDEX entries_subject`); err != nil {
		b.Fatal(err)
	}
	const chunk = 100_000
	for lo := 0; lo < rows; lo += chunk {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO entries (store, tbl, record_id, subject, unattributed, state, intent_id, updated_at) VALUES ('postgres', ?, ?, ?, 0, 'confirmed', ?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		for i := lo; i < min(lo+chunk, rows); i++ {
			tbl, id, s := benchRow(i, rows)
			if _, err := stmt.ExecContext(ctx, tbl, id, s[:], i/100+1, time.Now().UnixMicro()); err != nil {
				b.Fatal(err)
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, `CREATE INDEX entries_subject ON entries (subject); PRAGMA cache_size = -2000; ANALYZE; PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d rows into %s in %s", rows, filepath.Base(l.path), time.Since(start).Round(time.Millisecond))
}

// loadPostgresBench is loadSQLiteBench for PostgreSQL, with COPY.
func loadPostgresBench(b *testing.B, l *Postgres, rows int) {
	ctx := context.Background()
	var have int
	if err := l.pool.QueryRow(ctx, l.q(`SELECT count(*) FROM ledger.entries`)).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have == rows {
		return
	}
	if have != 0 {
		b.Fatalf("bench ledger has %d rows, want 0 or %d: drop schema %s", have, rows, l.schema)
	}
	start := time.Now()
	now := time.Now()
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == rows {
			return nil, nil
		}
		tbl, id, s := benchRow(i, rows)
		i++
		return []any{"postgres", tbl, id, s[:], false, "confirmed", int64(i/100 + 1), now}, nil
	})
	if _, err := l.pool.Exec(ctx, l.q(`DROP INDEX ledger.entries_subject`)); err != nil {
		b.Fatal(err)
	}
	if _, err := l.pool.CopyFrom(ctx, pgx.Identifier{l.schemaName, "entries"},
		[]string{"store", "tbl", "record_id", "subject", "unattributed", "state", "intent_id", "updated_at"}, src); err != nil {
		b.Fatal(err)
	}
	if _, err := l.pool.Exec(ctx, l.q(`CREATE INDEX entries_subject ON ledger.entries (subject); ANALYZE ledger.entries`)); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d rows into %s in %s", rows, l.schema, time.Since(start).Round(time.Millisecond))
}

// BenchmarkIntend100Entries is the proxy's hot path for a 100-row INSERT:
// one caller, one intent of 100 entries, waiting for it to be durable.
func BenchmarkIntend100Entries(b *testing.B) { benchmarkIntend100(b, false) }

// BenchmarkIntendConfirm100Entries is one 100-row statement's whole life in
// the ledger: the intent before forwarding, then its confirmation.
func BenchmarkIntendConfirm100Entries(b *testing.B) { benchmarkIntend100(b, true) }

// benchmarkIntend100 makes one 100-entry intent per op (one caller, SQLite)
// and, with confirm, confirms it.
func benchmarkIntend100(b *testing.B, confirm bool) {
	l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	entries := make([]Entry, 100)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for j := range entries {
			entries[j] = Entry{Store: StorePostgres, Table: "public.docs", RecordID: strconv.Itoa(i*100 + j), Subject: testHasher.Hash(strconv.Itoa(j % 10))}
		}
		id, err := l.Intend(ctx, entries)
		if err != nil {
			b.Fatal(err)
		}
		if confirm {
			if err := l.Confirm(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkHasherHash is capture's cost per subject of a row.
func BenchmarkHasherHash(b *testing.B) {
	h, err := NewHasher(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h.Hash("user123@example.com")
	}
}

// BenchmarkObserve1000Rows is the WAL follower's ledger write for a batch
// of 1000 committed rows: the ceiling of rows per second it can record.
// durable is Observe (fsynced at commit), nosync ObserveNoSync (the
// follower's batches in the middle of a transaction). The Postgres ones
// need the test cluster, whose fsync is off unless turned on (see
// BenchmarkIntendSync): there durable and nosync differ only in that.
//
//	go test -run XXX -bench 'Observe1000Rows/SQLite' -benchtime 30x ./ledger/
func BenchmarkObserve1000Rows(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) (observer Observer, close func() error)
	}{
		{"SQLite", func(b *testing.B) (Observer, func() error) {
			l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			return l, l.Close
		}},
		{"Postgres", func(b *testing.B) (Observer, func() error) {
			conn := testPGConnString(b)
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(b, conn)})
			if err != nil {
				b.Fatal(err)
			}
			return l, l.Close
		}},
	}
	modes := []struct {
		name    string
		observe func(Observer) func(context.Context, []Change) error
	}{
		{"durable", func(o Observer) func(context.Context, []Change) error { return o.Observe }},
		{"nosync", func(o Observer) func(context.Context, []Change) error { return o.ObserveNoSync }},
	}
	for _, backend := range backends {
		for _, mode := range modes {
			b.Run(backend.name+"/"+mode.name, func(b *testing.B) {
				l, closeLedger := backend.open(b)
				defer closeLedger()
				observe := mode.observe(l)
				changes := make([]Change, 1000)
				// As the follower's: go-sqlite3 runs each statement under a
				// context that can end on a goroutine of its own.
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					for j := range changes {
						changes[j] = Change{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: strconv.Itoa(i*1000 + j),
							Subjects: []SubjectHash{testHasher.Hash(strconv.Itoa(j % 1000))}}
					}
					if err := observe(ctx, changes); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer() // not the Close, whose checkpoint copies the WAL back
				b.ReportMetric(float64(b.N*len(changes))/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkObserve1000Deletes is the WAL follower's ledger write for 1000
// committed deletes in one batch (SQLite, without a fsync), such as a
// forget's or an application's DELETE of many rows; the rows were
// recorded first, outside the timing.
//
//	go test -run XXX -bench Observe1000Deletes -benchtime 30x -count 3 ./ledger/
func BenchmarkObserve1000Deletes(b *testing.B) {
	l, err := OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	// Cancellable, as the follower's is (see BenchmarkObserve1000Rows).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writes, deletes := make([]Change, 1000), make([]Change, 1000)
	for i := range b.N {
		b.StopTimer()
		for j := range writes {
			id := strconv.Itoa(i*1000 + j)
			writes[j] = Change{Kind: ChangeWrite, Store: StorePostgres, Table: "public.docs", RecordID: id,
				Subjects: []SubjectHash{testHasher.Hash(strconv.Itoa(j))}}
			deletes[j] = Change{Kind: ChangeDelete, Store: StorePostgres, Table: "public.docs", RecordID: id}
		}
		if err := l.ObserveNoSync(ctx, writes); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := l.ObserveNoSync(ctx, deletes); err != nil {
			b.Fatal(err)
		}
	}
}
