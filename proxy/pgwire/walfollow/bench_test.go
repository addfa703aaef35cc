package walfollow

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// BenchmarkFollower_100000RowTransaction is the follower's part of the lag
// behind a big transaction: one op is an INSERT of 100,000 small rows
// (no vectors, so the server decodes little) in one transaction, timed
// from its commit until the slot is confirmed past it, that is until
// every row is durable in the ledger; and, with an SQLite ledger, a
// one-row transaction committed right after it, timed until its row is
// in the ledger. With ledger=none the follower records nothing: what is
// left is the server decoding and sending the rows (over TLS when the
// test cluster offers it) and the follower reading them. Needs the test
// cluster.
//
//	go test -run XXX -bench Follower_100000 -benchtime 3x ./proxy/pgwire/walfollow/
func BenchmarkFollower_100000RowTransaction(b *testing.B) {
	if os.Getenv("LETHE_TEST_PG_PORT") == "" {
		b.Skip(`LETHE_TEST_PG_PORT is not set: start the test cluster (scripts/testdb.sh start; eval "$(scripts/testdb.sh env)")`)
	}
	b.Run("ledger=sqlite", func(b *testing.B) { benchmarkBigTransaction(b, true) })
	b.Run("ledger=none", func(b *testing.B) { benchmarkBigTransaction(b, false) })
}

func benchmarkBigTransaction(b *testing.B, sqlite bool) {
	ctx := context.Background()
	connStr := testConnString(b)
	conn, err := pgx.Connect(ctx, connStr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("walf_bench_%d", os.Getpid())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name+"; CREATE TABLE "+name+".docs (id text PRIMARY KEY, owner text)"); err != nil {
		b.Fatal(err)
	}
	defer conn.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
	s, err := extract.ParseSubject("owner")
	if err != nil {
		b.Fatal(err)
	}
	rules, err := extract.NewRules([]extract.Rule{{Table: name + ".docs", ID: "id", Subjects: []extract.Subject{s}}})
	if err != nil {
		b.Fatal(err)
	}
	var l *ledger.SQLite
	var observer ledger.Observer = discard{}
	if sqlite {
		if l, err = ledger.OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{}); err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		observer = l
	}
	fl, err := New(Config{ConnString: connStr, Name: name, Rules: rules, Ledger: observer, Hasher: hasher,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	if err := fl.Prepare(ctx); err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fl.Run(runCtx) }()
	defer func() {
		cancel()
		<-done
		for i := 0; i < 50 && Drop(context.Background(), conn, name) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()

	var waited, later time.Duration
	for i := range b.N {
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.docs SELECT 'r%d-' || g, 'user' || (g %% 1000) FROM generate_series(1, 100000) g`,
			name, i)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if l != nil {
			marker := fmt.Sprint("marker", i)
			if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.docs VALUES ($1, $1)`, name), marker); err != nil {
				b.Fatal(err)
			}
			awaitSubject(b, l, marker, start)
			later += time.Since(start)
		}
		wait, stop := context.WithTimeout(ctx, 5*time.Minute)
		err := AwaitCommitted(wait, conn, name)
		stop()
		if err != nil {
			b.Fatal(err)
		}
		waited += time.Since(start)
	}
	b.ReportMetric(float64(waited.Milliseconds())/float64(b.N), "ms/commit-to-durable")
	if l != nil {
		b.ReportMetric(float64(later.Milliseconds())/float64(b.N), "ms/next-commit-recorded")
	}
	b.ReportMetric(0, "ns/op")
}

// awaitSubject polls the ledger until it has a record of subject.
func awaitSubject(b *testing.B, l *ledger.SQLite, subject string, since time.Time) {
	for {
		recs, err := l.BySubject(context.Background(), hasher.Hash(subject))
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) > 0 {
			return
		}
		if time.Since(since) > 5*time.Minute {
			b.Fatal("the row committed after the big transaction is not in the ledger after 5 minutes")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// discard is a ledger that records nothing.
type discard struct{}

func (discard) Observe(context.Context, []ledger.Change) error       { return nil }
func (discard) ObserveNoSync(context.Context, []ledger.Change) error { return nil }
