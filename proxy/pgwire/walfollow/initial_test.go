package walfollow

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// counting passes changes on to a ledger and counts the writes of each
// record; during its first call it runs during once.
type counting struct {
	ledger.Observer
	mu     sync.Mutex
	writes map[string]int // "table id" → ChangeWrite count
	during func()
}

func (c *counting) count(changes []ledger.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writes == nil {
		c.writes = map[string]int{}
	}
	for _, ch := range changes {
		if ch.Kind == ledger.ChangeWrite {
			c.writes[ch.Table+" "+ch.RecordID]++
		}
	}
	if c.during != nil {
		during := c.during
		c.during = nil
		during()
	}
}

func (c *counting) Observe(ctx context.Context, changes []ledger.Change) error {
	c.count(changes)
	return c.Observer.Observe(ctx, changes)
}

func (c *counting) ObserveNoSync(ctx context.Context, changes []ledger.Change) error {
	c.count(changes)
	return c.Observer.ObserveNoSync(ctx, changes)
}

func (c *counting) writesOf(table, id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes[table+" "+id]
}

// Rows committed before the slot exists are in the ledger from the first
// start, under the subjects they store, read in the snapshot the slot
// exports: rows committed while that read runs come from the stream
// alone, so no row is recorded twice and none is missed.
func TestPrepare_RecordsTheRowsCommittedBeforeTheSlotOnceEach(t *testing.T) {
	f := newFixture(t, `
CREATE TABLE docs (id text PRIMARY KEY, metadata jsonb, owner text);
CREATE TABLE notes (id text PRIMARY KEY, user_id text);`,
		extract.Rule{Table: "docs", ID: "id", Subjects: subjects("metadata->>'user_id'", "owner")},
		extract.Rule{Table: "notes", ID: "id", Subjects: subjects("user_id")})
	f.exec(`INSERT INTO ` + f.schema + `.docs VALUES ('d1', '{"user_id": "alice"}', NULL), ('d2', NULL, 'bob'), ('d3', '{"user_id": "alice"}', 'carol'), ('d4', NULL, 'alice')`)
	f.exec(`INSERT INTO ` + f.schema + `.notes VALUES ('n1', 'alice'), ('n2', 'gone')`)
	// The first batch of the read lands while the rest is still being
	// read: commits then are after the slot's start, in the stream.
	writer, err := pgx.Connect(context.Background(), f.connStr)
	require.NoError(t, err)
	defer writer.Close(context.Background())
	c := &counting{Observer: f.ledger, during: func() {
		for _, sql := range []string{
			`INSERT INTO ` + f.schema + `.notes VALUES ('n3', 'alice')`,
			`INSERT INTO ` + f.schema + `.docs VALUES ('d5', NULL, 'alice')`,
			`UPDATE ` + f.schema + `.notes SET user_id = 'bob' WHERE id = 'n1'`,
		} {
			_, err := writer.Exec(context.Background(), sql)
			require.NoError(t, err, sql)
		}
	}}
	gone := hasher.Hash("gone")
	var late []string
	var lateMu sync.Mutex
	fl, err := New(Config{ConnString: f.connStr, Name: f.name, Rules: f.rules, Ledger: c,
		FlushInterval: 20 * time.Millisecond, MaxBatch: 2, Core: &testCore{
			observer:  c,
			forgotten: func(s ledger.SubjectHash) bool { return s == gone },
			lateWrite: func(_ context.Context, table, subject string) error {
				lateMu.Lock()
				defer lateMu.Unlock()
				late = append(late, table+" "+subject)
				return nil
			}}})
	require.NoError(t, err)
	require.NoError(t, fl.Prepare(context.Background()))
	require.Equal(t, []string{f.schema + ".notes gone"}, late, "a row about a forgotten subject is a late write, as when streamed")
	f.await("carol", record{"docs", "d3", ledger.StateConfirmed})
	f.await("alice", record{"docs", "d1", ledger.StateConfirmed}, record{"docs", "d3", ledger.StateConfirmed},
		record{"docs", "d4", ledger.StateConfirmed}, record{"notes", "n1", ledger.StateConfirmed})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	require.NoError(t, AwaitCommitted(wait, f.conn, f.name, f.ledger))
	f.await("alice", record{"docs", "d1", ledger.StateConfirmed}, record{"docs", "d3", ledger.StateConfirmed},
		record{"docs", "d4", ledger.StateConfirmed}, record{"docs", "d5", ledger.StateConfirmed},
		record{"notes", "n1", ledger.StateConfirmed}, record{"notes", "n3", ledger.StateConfirmed})
	f.await("bob", record{"docs", "d2", ledger.StateConfirmed}, record{"notes", "n1", ledger.StateConfirmed})
	for _, id := range []string{"docs d1", "docs d2", "docs d3", "docs d4", "docs d5", "notes n2", "notes n3"} {
		var table, rec string
		fmt.Sscan(id, &table, &rec)
		require.Equal(t, 1, c.writesOf(f.schema+"."+table, rec), "%s is recorded once", id)
	}
	require.Equal(t, 2, c.writesOf(f.schema+".notes", "n1"), "n1: once as the snapshot holds it, once as updated in the stream")
}

// A slot whose earlier rows cannot be recorded is dropped again: it would
// keep the server's WAL, and the next start would stream from it without
// those rows.
func TestPrepare_DropsTheSlotWhenTheRowsBeforeItCannotBeRecorded(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	f.exec(`INSERT INTO ` + f.schema + `.loose VALUES ('l1', 'alice')`)
	down := &failing{Observer: f.ledger}
	down.fail.Store(true)
	fl, err := New(Config{ConnString: f.connStr, Name: f.name, Rules: f.rules, Ledger: down, Core: &testCore{observer: down}})
	require.NoError(t, err)
	require.ErrorIs(t, fl.Prepare(context.Background()), ledger.ErrUnavailable)
	exists, err := slotExists(context.Background(), f.conn, f.name)
	require.NoError(t, err)
	require.False(t, exists, "no slot is left behind")

	down.fail.Store(false)
	require.NoError(t, fl.Prepare(context.Background()))
	f.await("alice", record{"loose", "l1", ledger.StateConfirmed})
}

// A table dropped between the plan and its read holds nothing to record;
// the tables read after it are still read, in the same snapshot.
func TestPrepare_ATableDroppedDuringTheInitialReadLeavesTheOthersRead(t *testing.T) {
	f := newFixture(t, `
CREATE TABLE a_first (id text PRIMARY KEY, user_id text);
CREATE TABLE b_gone (id text PRIMARY KEY, user_id text);
CREATE TABLE c_last (id text PRIMARY KEY, user_id text);`,
		extract.Rule{Table: "a_first", ID: "id", Subjects: subjects("user_id")},
		extract.Rule{Table: "b_gone", ID: "id", Subjects: subjects("user_id")},
		extract.Rule{Table: "c_last", ID: "id", Subjects: subjects("user_id")})
	f.exec(`INSERT INTO ` + f.schema + `.a_first VALUES ('a1', 'alice'), ('a2', 'alice'), ('a3', 'alice')`)
	f.exec(`INSERT INTO ` + f.schema + `.b_gone VALUES ('b1', 'alice')`)
	f.exec(`INSERT INTO ` + f.schema + `.c_last VALUES ('c1', 'alice')`)
	// The first batch is recorded while a_first is read (MaxBatch 2):
	// b_gone, not yet read, is dropped then.
	c := &counting{Observer: f.ledger, during: func() { f.exec(`DROP TABLE ` + f.schema + `.b_gone`) }}
	require.NoError(t, f.follower(c, f.connStr).Prepare(context.Background()))
	f.await("alice",
		record{"a_first", "a1", ledger.StateConfirmed}, record{"a_first", "a2", ledger.StateConfirmed},
		record{"a_first", "a3", ledger.StateConfirmed}, record{"c_last", "c1", ledger.StateConfirmed})
}
