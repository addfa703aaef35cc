package walfollow

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// looseRows writes n rows about alice to the fixture's table loose: l0,
// l1, …
func (f *fixture) looseRows(from, n int) {
	f.t.Helper()
	for i := from; i < from+n; i++ {
		f.exec(`INSERT INTO `+f.schema+`.loose VALUES ($1, 'alice')`, fmt.Sprintf("l%d", i))
	}
}

// looseRecords are the records of loose rows from, …, from+n-1 about
// alice, as records returns them.
func looseRecords(from, n int) []record {
	var out []record
	for i := from; i < from+n; i++ {
		out = append(out, record{"loose", fmt.Sprintf("l%d", i), ledger.StateConfirmed})
	}
	slices.SortFunc(out, func(a, b record) int { return compare(a.ID, b.ID) })
	return out
}

// marked reports whether l holds the fixture's slot's initial read.
func (f *fixture) marked(l ledger.InitialReads) bool {
	f.t.Helper()
	key, err := slotKey(context.Background(), f.conn, f.name)
	require.NoError(f.t, err)
	done, err := l.InitialReadDone(context.Background(), key)
	require.NoError(f.t, err)
	return done
}

func (f *fixture) follower(l ledger.Observer, connStr string) *Follower {
	f.t.Helper()
	fl, err := New(Config{ConnString: connStr, Name: f.name, Rules: f.rules, Ledger: l, Core: &testCore{observer: l},
		FlushInterval: 20 * time.Millisecond, MaxBatch: 2})
	require.NoError(f.t, err)
	return fl
}

// A start killed during its initial read leaves the slot made and its
// rows half recorded; the next start reads them all again, in a fresh
// slot's snapshot, rows committed meanwhile too, each once.
func TestPrepare_ReadsAgainTheRowsOfASlotWhoseInitialReadWasKilled(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	f.looseRows(0, 5)
	// What kill -9 does to the follower's connections: the server ends
	// them, and nothing of the follower's runs after (its drop fails).
	const app = "walf_killed"
	kill := &counting{Observer: f.ledger, during: func() {
		_, err := f.conn.Exec(context.Background(), `SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = $1`, app)
		require.NoError(t, err)
	}}
	require.Error(t, f.follower(kill, f.connStr+" application_name="+app).Prepare(context.Background()))
	exists, err := slotExists(context.Background(), f.conn, f.name)
	require.NoError(t, err)
	require.True(t, exists, "the killed start left its slot")
	require.False(t, f.marked(f.ledger))
	require.Less(t, len(f.records("alice")), 5, "the killed start recorded part of the rows at most")
	f.looseRows(5, 1) // committed after the killed slot, streamed by nobody

	again := &counting{Observer: f.ledger}
	fl := f.follower(again, f.connStr)
	require.NoError(t, fl.Prepare(context.Background()))
	f.await("alice", looseRecords(0, 6)...)
	for i := range 6 {
		require.Equal(t, 1, again.writesOf(f.schema+".loose", fmt.Sprintf("l%d", i)), "l%d is read once", i)
	}
	require.True(t, f.marked(f.ledger))

	// And the slot made again streams what comes after.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	f.looseRows(6, 1)
	wait, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	require.NoError(t, AwaitCommitted(wait, f.conn, f.name, f.ledger))
	f.await("alice", looseRecords(0, 7)...)
}

// A new ledger (a file replaced, or another ledger) pointed at a slot that
// exists holds none of the rows committed before the slot: its start
// makes the slot again and reads them.
func TestPrepare_ANewLedgerOnAnExistingSlotRecordsTheRowsBeforeIt(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	f.looseRows(0, 2)
	require.NoError(t, f.follower(f.ledger, f.connStr).Prepare(context.Background()))
	f.await("alice", looseRecords(0, 2)...)
	f.looseRows(2, 1) // in the slot's stream, which nobody reads

	fresh, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "new.db"), ledger.Options{})
	require.NoError(t, err)
	defer fresh.Close()
	require.NoError(t, f.follower(fresh, f.connStr).Prepare(context.Background()))
	recs, err := fresh.BySubject(context.Background(), hasher.Hash("alice"))
	require.NoError(t, err)
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.RecordID)
	}
	slices.Sort(ids)
	require.Equal(t, []string{"l0", "l1", "l2"}, ids)
	require.True(t, f.marked(fresh))
}

// A slot without this ledger's mark that another process streams (a
// proxy of another ledger) is neither dropped nor streamed: the start
// goes on, and the follower waits for the slot.
func TestPrepare_LeavesAnUnmarkedSlotAnotherProcessStreams(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	f.looseRows(0, 1)
	f.start(nil, nil)
	awaitActive(t, f.conn, f.name)

	other, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "other.db"), ledger.Options{})
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, f.follower(other, f.connStr).Prepare(context.Background()))
	s, err := SlotStatus(context.Background(), f.conn, f.name)
	require.NoError(t, err)
	require.True(t, s.Active, "the slot the other follower streams is left to it")
	require.False(t, f.marked(other))
	f.looseRows(1, 1)
	wait, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	require.NoError(t, AwaitCommitted(wait, f.conn, f.name, f.ledger))
	f.await("alice", looseRecords(0, 2)...)
}

// Proxies sharing a ledger make the slot one at a time: while another
// holds the slot's lock (making it and reading its rows), a start makes
// no slot and the follower waits.
func TestPrepare_WaitsWhileAnotherProxyMakesTheSlot(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	f.looseRows(0, 1)
	holder, err := pgx.Connect(context.Background(), f.connStr)
	require.NoError(t, err)
	defer holder.Close(context.Background())
	_, err = holder.Exec(context.Background(), `SELECT pg_advisory_lock($1)`, slotLockKey(f.name))
	require.NoError(t, err)

	fl := f.follower(f.ledger, f.connStr)
	require.NoError(t, fl.Prepare(context.Background()))
	exists, err := slotExists(context.Background(), f.conn, f.name)
	require.NoError(t, err)
	require.False(t, exists, "no slot is made under another's lock")

	_, err = holder.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, slotLockKey(f.name))
	require.NoError(t, err)
	require.NoError(t, fl.Prepare(context.Background()))
	f.await("alice", looseRecords(0, 1)...)
	require.True(t, f.marked(f.ledger))
}

// A slot just made is confirmed up to the server's position before its
// initial rows are durable: a wait for the follower (forget's preview,
// lethe-proxy ledger subject) must not end then.
func TestAwaitCommitted_WaitsForTheInitialReadOfANewSlot(t *testing.T) {
	f := newFixture(t, docsDDL, docsRules()...)
	f.looseRows(0, 3)
	reading, release := make(chan struct{}), make(chan struct{})
	held := &counting{Observer: f.ledger, during: func() { close(reading); <-release }}
	fl := f.follower(held, f.connStr)
	prepared := make(chan error, 1)
	go func() { prepared <- fl.Prepare(context.Background()) }()
	<-reading
	released := false
	defer func() {
		if !released { // a failed assertion: let the read end before the fixture drops its tables
			close(release)
			<-prepared
		}
	}()

	// Its own connection: a wait that times out mid-query closes it.
	conn, err := pgx.Connect(context.Background(), f.connStr)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	early, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err = AwaitCommitted(early, conn, f.name, f.ledger)
	cancel()
	require.Error(t, err, "the wait does not end while the rows before the slot are read")

	close(release)
	released = true
	require.NoError(t, <-prepared)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fl.Run(ctx) }()
	defer func() { stop(); <-done }()
	wait, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, AwaitCommitted(wait, f.conn, f.name, f.ledger))
	require.Equal(t, looseRecords(0, 3), f.records("alice"), "the rows are in the ledger when the wait ends")
}

// awaitActive waits until a follower streams slot name.
func awaitActive(t *testing.T, conn *pgx.Conn, name string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		s, err := SlotStatus(context.Background(), conn, name)
		require.NoError(t, err)
		if s.Active {
			return
		}
		require.False(t, time.Now().After(deadline), "slot %s is not streamed", name)
		time.Sleep(20 * time.Millisecond)
	}
}
