package walfollow

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// TestFollower_LedgerMatchesTheTablesAfterRandomConcurrentWrites is a
// load no application makes: workers commit, side by side, transactions
// of random shapes over two tables (big inserts the follower holds and
// later commits overtake, upserts and deletes of the same few records,
// subject changes, key changes, truncates, several statements in one
// transaction), while the ledger lags and, in one variant, fails twice
// mid-stream. Once the slot is confirmed past the last commit, the ledger
// must agree with the tables: every row is confirmed under its subject,
// and every record confirmed in the ledger is a row. A change applied out
// of its record's order (an insert overtaking its delete, a delete
// overtaking a later insert) breaks one of the two.
func TestFollower_LedgerMatchesTheTablesAfterRandomConcurrentWrites(t *testing.T) {
	for _, failures := range []int{0, 2} {
		t.Run(fmt.Sprintf("ledger failures=%d", failures), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			f := newFixture(t, `
CREATE TABLE a (id text PRIMARY KEY, owner text);
CREATE TABLE b (id int PRIMARY KEY, meta jsonb);`,
				extract.Rule{Table: "a", ID: "id", Subjects: subjects("owner")},
				extract.Rule{Table: "b", ID: "id", Subjects: subjects("meta->>'user_id'")})
			lagging := &laggingLedger{Observer: f.ledger, rng: rand.New(rand.NewPCG(seed, 1))}
			for len(lagging.failAt) < failures { // distinct calls: two equal numbers would fail once
				if at := 10 + lagging.rng.IntN(50); !slices.Contains(lagging.failAt, at) {
					lagging.failAt = append(lagging.failAt, at)
				}
			}
			fl, err := New(Config{ConnString: f.connStr, Name: f.name, Rules: f.rules, Ledger: lagging, Core: &testCore{observer: lagging},
				FlushInterval: 20 * time.Millisecond, MaxBatch: 40, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			require.NoError(t, fl.Prepare(context.Background()))
			ctx, cancel := context.WithCancel(context.Background())
			var running sync.WaitGroup
			running.Add(1)
			go func() { defer running.Done(); fl.Run(ctx) }()
			t.Cleanup(func() { cancel(); running.Wait() })

			var workers sync.WaitGroup
			var committed atomic.Int64
			for w := range 4 {
				workers.Add(1)
				go func() {
					defer workers.Done()
					randomWrites(t, f, w, rand.New(rand.NewPCG(seed, uint64(w)+2)), &committed)
				}()
			}
			workers.Wait()
			wait, stop := context.WithTimeout(context.Background(), 90*time.Second)
			defer stop()
			require.NoError(t, AwaitCommitted(wait, f.conn, f.name, f.ledger))
			t.Logf("%d transactions committed; ledger calls %d, failed %d", committed.Load(), lagging.calls.Load(), lagging.failed.Load())
			require.Equal(t, int64(failures), lagging.failed.Load(), "the ledger refused as many writes as planned")
			requireLedgerMatchesTables(t, f)
		})
	}
}

// laggingLedger passes changes on after a random delay of up to 8 ms,
// and refuses the calls whose numbers failAt lists.
type laggingLedger struct {
	ledger.Observer
	mu     sync.Mutex
	rng    *rand.Rand
	failAt []int
	calls  atomic.Int64
	failed atomic.Int64
}

func (l *laggingLedger) wait() error {
	n := int(l.calls.Add(1))
	l.mu.Lock()
	delay := time.Duration(l.rng.IntN(8)) * time.Millisecond
	fail := false
	for _, at := range l.failAt {
		fail = fail || at == n
	}
	l.mu.Unlock()
	if fail {
		l.failed.Add(1)
		return fmt.Errorf("%w: test ledger down", ledger.ErrUnavailable)
	}
	time.Sleep(delay)
	return nil
}

func (l *laggingLedger) Observe(ctx context.Context, c []ledger.Change) error {
	if err := l.wait(); err != nil {
		return err
	}
	return l.Observer.Observe(ctx, c)
}

func (l *laggingLedger) ObserveNoSync(ctx context.Context, c []ledger.Change) error {
	if err := l.wait(); err != nil {
		return err
	}
	return l.Observer.ObserveNoSync(ctx, c)
}

// randomSubjects is the set every row's subject comes from.
const randomSubjects = 8

// randomWrites commits 40 transactions of random shapes on a connection
// of its own. Statements the server refuses (a key change onto an
// existing key, a deadlock between workers) roll their transaction back.
func randomWrites(t *testing.T, f *fixture, worker int, rng *rand.Rand, committed *atomic.Int64) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.connStr)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	a, b := f.schema+".a", f.schema+".b"
	subject := func() string { return fmt.Sprint("s", rng.IntN(randomSubjects)) }
	poolID := func() string { return fmt.Sprint("p", rng.IntN(30)) }
	upsertA := func() string {
		return fmt.Sprintf("INSERT INTO %s VALUES ('%s', '%s') ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner", a, poolID(), subject())
	}
	lastB := 0 // the id this worker last upserted in b
	upsertB := func() string {
		lastB = rng.IntN(100)
		return fmt.Sprintf(`INSERT INTO %s VALUES (%d, '{"user_id": "%s"}') ON CONFLICT (id) DO UPDATE SET meta = EXCLUDED.meta`, b, lastB, subject())
	}
	lastBig := "" // id prefix of this worker's last big insert
	for k := range 40 {
		var statements []string
		switch p := rng.IntN(100); {
		case p < 15: // held by the follower: more than one batch
			statements = []string{fmt.Sprintf("INSERT INTO %s SELECT 'w%d-%d-' || g, 's' || (g %% %d) FROM generate_series(1, %d) g",
				a, worker, k, randomSubjects, 100+rng.IntN(300))}
			lastBig = fmt.Sprintf("w%d-%d-", worker, k)
		case p < 22 && lastBig != "": // rows of a transaction the follower may still hold
			statements = []string{fmt.Sprintf("DELETE FROM %s WHERE id LIKE '%s%d%%'", a, lastBig, rng.IntN(10))}
		case p < 28 && lastBig != "":
			statements = []string{fmt.Sprintf("UPDATE %s SET owner = '%s' WHERE id LIKE '%s%d%%'", a, subject(), lastBig, rng.IntN(10))}
		case p < 40:
			statements = []string{upsertA()}
		case p < 48:
			statements = []string{fmt.Sprintf("UPDATE %s SET owner = '%s' WHERE id = '%s' OR id LIKE 'w%d-%d-1%%'", a, subject(), poolID(), rng.IntN(4), rng.IntN(k+1))}
		case p < 56: // another worker's big insert, perhaps not yet recorded
			statements = []string{fmt.Sprintf("DELETE FROM %s WHERE id LIKE 'w%d-%d-%%'", a, rng.IntN(4), rng.IntN(k+1))}
		case p < 63:
			statements = []string{fmt.Sprintf("DELETE FROM %s WHERE id IN ('%s', '%s')", a, poolID(), poolID())}
		case p < 78:
			statements = []string{upsertB()}
		case p < 88:
			// Onto a key of its own, which upserts do not use.
			statements = []string{fmt.Sprintf("UPDATE %s SET id = id + %d WHERE id = %d", b, 1000*(1+worker*100+k), lastB)}
		case p < 89: // waits for a held transaction of a
			statements = []string{"TRUNCATE " + a}
		case p < 90:
			statements = []string{"TRUNCATE " + b}
		default:
			statements = []string{upsertA(), fmt.Sprintf("DELETE FROM %s WHERE id = '%s'", a, poolID()), upsertB(), upsertA()}
			if lastBig != "" { // waits for the held transaction, and so must every commit after it
				statements = append(statements, fmt.Sprintf("DELETE FROM %s WHERE id LIKE '%s%d%%'", a, lastBig, rng.IntN(10)))
			}
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		failed := false
		for _, s := range statements {
			if _, err := tx.Exec(ctx, s); err != nil {
				failed = true
				break
			}
		}
		if failed {
			tx.Rollback(ctx)
			continue
		}
		if tx.Commit(ctx) == nil {
			committed.Add(1)
		}
	}
}

// requireLedgerMatchesTables checks both directions between the tables'
// rows and the records the ledger holds confirmed for the subjects.
func requireLedgerMatchesTables(t *testing.T, f *fixture) {
	t.Helper()
	type key struct{ table, id string }
	rows := map[key]string{} // subject
	res, err := f.conn.Query(context.Background(), fmt.Sprintf(
		"SELECT 'a', id, owner FROM %[1]s.a UNION ALL SELECT 'b', id::text, meta->>'user_id' FROM %[1]s.b", f.schema))
	require.NoError(t, err)
	for res.Next() {
		var k key
		var subject string
		require.NoError(t, res.Scan(&k.table, &k.id, &subject))
		rows[k] = subject
	}
	require.NoError(t, res.Err())
	confirmed := map[key]map[string]bool{} // subjects
	for i := range randomSubjects {
		subject := fmt.Sprint("s", i)
		for _, r := range f.records(subject) {
			if r.State != ledger.StateConfirmed {
				continue
			}
			k := key{r.Table, r.ID}
			if confirmed[k] == nil {
				confirmed[k] = map[string]bool{}
			}
			confirmed[k][subject] = true
		}
	}
	var problems []string
	for k, subject := range rows {
		if !confirmed[k][subject] {
			problems = append(problems, fmt.Sprintf("row %s/%s of %s is not confirmed in the ledger", k.table, k.id, subject))
		}
	}
	for k := range confirmed {
		if _, ok := rows[k]; !ok {
			problems = append(problems, fmt.Sprintf("record %s/%s is confirmed in the ledger but not in its table", k.table, k.id))
		}
	}
	t.Logf("%d rows, %d records confirmed", len(rows), len(confirmed))
	require.Empty(t, problems[:min(len(problems), 20)], "%d disagreements", len(problems))
}
