package walfollow

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// BenchmarkFollower_100000RowTransaction is the lag behind a big
// transaction, and how much of it is the follower's. One op is an INSERT
// of 100,000 rows in one transaction; the clock starts when it has
// committed. Row shapes:
//
//   - rows=plain: an id and an owner, so the server decodes little;
//   - rows=vector: also a 1536-dimension vector, which the publication
//     leaves out but the server still decodes (it is TOASTed); the
//     replication connections get logical_decoding_work_mem 1GB, as
//     docs/wal.md advises for big transactions.
//
// Readers of the stream, each in its own sub-benchmark:
//
//   - ledger=sqlite: the follower with an SQLite ledger;
//   - ledger=none: the follower recording nothing;
//   - reader=pg_recvlogical: PostgreSQL's own client, writing the stream
//     to a file: the server's part alone.
//
// ms/commit-to-all-read is until the reader has every row of the
// transaction; ms/commit-to-durable (the follower) until the slot is
// confirmed past it, when every row is durably in the ledger. Connections are TLS when the test cluster offers it,
// unless PGSSLMODE=disable. Needs the test cluster (and pg_recvlogical).
//
//	PGSSLMODE=disable go test -run XXX -bench Follower_100000 -benchtime 3x ./proxy/pgwire/walfollow/
func BenchmarkFollower_100000RowTransaction(b *testing.B) {
	if os.Getenv("LETHE_TEST_PG_PORT") == "" {
		b.Skip(`LETHE_TEST_PG_PORT is not set: start the test cluster (scripts/testdb.sh start; eval "$(scripts/testdb.sh env)")`)
	}
	for _, rows := range []string{"plain", "vector"} {
		for _, reader := range []string{"ledger=sqlite", "ledger=none", "reader=pg_recvlogical"} {
			b.Run("rows="+rows+"/"+reader, func(b *testing.B) { benchmarkBigTransaction(b, rows == "vector", reader) })
		}
	}
}

// bigTxRows is the size of the benchmark's transaction.
const bigTxRows = 100000

func benchmarkBigTransaction(b *testing.B, vector bool, reader string) {
	ctx := context.Background()
	connStr := testConnString(b)
	conn, err := pgx.Connect(ctx, connStr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("walf_bench_%d", os.Getpid())
	table, embedding, decodingMemKB := "id text PRIMARY KEY, owner text", "", int64(0)
	if vector {
		table += ", embedding vector(1536)"
		embedding = ", array_fill(0.5::real, ARRAY[1536])::vector"
		decodingMemKB = 1 << 20
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name+"; CREATE TABLE "+name+".docs ("+table+")"); err != nil {
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
	if reader == "ledger=sqlite" {
		if l, err = ledger.OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{}); err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		observer = l
	}
	fl, err := New(Config{ConnString: connStr, Name: name, Rules: rules, Ledger: observer, Core: &testCore{observer: observer},
		DecodingMemKB: decodingMemKB, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	if err := fl.Prepare(ctx); err != nil { // the slot and the publications
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var readAll func(b *testing.B, i int, before pglogrepl.LSN, start time.Time)
	if reader == "reader=pg_recvlogical" {
		readAll = startRecvlogical(b, runCtx, done, connStr, name, decodingMemKB)
	} else {
		go func() { defer close(done); fl.Run(runCtx) }()
		readAll = func(b *testing.B, i int, _ pglogrepl.LSN, start time.Time) {
			for fl.Stats.Rows.Load() < int64(i+1)*bigTxRows {
				deadlineCheck(b, start, "the follower has not read the transaction's rows")
				time.Sleep(time.Millisecond)
			}
		}
	}
	defer func() {
		cancel()
		<-done
		for i := 0; i < 50 && Drop(context.Background(), conn, name) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}()
	awaitStreaming(b, conn, name)

	var read, waited time.Duration
	for i := range b.N {
		var before pglogrepl.LSN
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()").Scan(&before); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.docs SELECT 'r%d-' || g, 'user' || (g %% 1000)%s FROM generate_series(1, %d) g`,
			name, i, embedding, bigTxRows)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		readAll(b, i, before, start)
		read += time.Since(start)
		if reader == "reader=pg_recvlogical" {
			continue
		}
		wait, stop := context.WithTimeout(ctx, 5*time.Minute)
		err := AwaitCommitted(wait, conn, name, nil) // the ledger discards everything
		stop()
		if err != nil {
			b.Fatal(err)
		}
		waited += time.Since(start)
	}
	perOp := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(perOp(read), "ms/commit-to-all-read")
	if reader != "reader=pg_recvlogical" {
		b.ReportMetric(perOp(waited), "ms/commit-to-durable")
	}
	b.ReportMetric(0, "ns/op")
}

// startRecvlogical streams the slot with pg_recvlogical into a file, and
// returns a wait for the file to end with the commit of a transaction
// that ended after before. pg_recvlogical writes each message as it
// arrives, followed by a newline; pgoutput's commit message is 'C', a
// flag byte, the commit LSN, the end LSN and a timestamp.
func startRecvlogical(b *testing.B, ctx context.Context, done chan struct{}, connStr, name string, decodingMemKB int64) func(*testing.B, int, pglogrepl.LSN, time.Time) {
	bin, err := exec.LookPath("pg_recvlogical")
	if err != nil {
		b.Skip("pg_recvlogical is not installed (postgresql-client)")
	}
	if decodingMemKB > 0 {
		connStr += fmt.Sprintf(" options='-c logical_decoding_work_mem=%dkB'", decodingMemKB)
	}
	out := filepath.Join(b.TempDir(), "stream")
	cmd := exec.CommandContext(ctx, bin, "-d", connStr, "-S", name, "--start", "-F", "0", "-f", out,
		"-o", "proto_version=1", "-o", "publication_names="+name+","+insertsOnly(name))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { defer close(done); cmd.Wait() }()
	const commitLen = 1 + 1 + 8 + 8 + 8 + 1 // and the newline
	return func(b *testing.B, _ int, before pglogrepl.LSN, start time.Time) {
		tail := make([]byte, commitLen)
		for {
			deadlineCheck(b, start, "pg_recvlogical has not received the transaction's commit")
			if f, err := os.Open(out); err == nil {
				st, _ := f.Stat()
				n, _ := f.ReadAt(tail, st.Size()-commitLen)
				f.Close()
				if n == commitLen && tail[0] == 'C' && tail[commitLen-1] == '\n' &&
					pglogrepl.LSN(binary.BigEndian.Uint64(tail[10:18])) > before {
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// awaitStreaming waits until a reader streams the slot.
func awaitStreaming(b *testing.B, conn *pgx.Conn, name string) {
	start := time.Now()
	for {
		var active bool
		if err := conn.QueryRow(context.Background(), "SELECT active FROM pg_replication_slots WHERE slot_name = $1", name).Scan(&active); err != nil {
			b.Fatal(err)
		}
		if active {
			return
		}
		deadlineCheck(b, start, "nothing streams the slot")
		time.Sleep(10 * time.Millisecond)
	}
}

func deadlineCheck(b *testing.B, start time.Time, what string) {
	if time.Since(start) > 5*time.Minute {
		b.Fatal(what + " after 5 minutes")
	}
}

// discard is a ledger that records nothing.
type discard struct{}

func (discard) Observe(context.Context, []ledger.Change) error                { return nil }
func (discard) ObserveNoSync(context.Context, []ledger.Change) error          { return nil }
func (discard) InitialReadDone(context.Context, ledger.SlotKey) (bool, error) { return true, nil }
func (discard) MarkInitialRead(context.Context, ledger.SlotKey) error         { return nil }
func (discard) ClearInitialRead(context.Context, ledger.SlotKey) error        { return nil }
