package capture

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// rowsInStore answers Existing from a fixed set of "table/id" keys.
type rowsInStore map[string]bool

func (r rowsInStore) Existing(_ context.Context, table, _ string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		if r[table+"/"+id] {
			out[id] = true
		}
	}
	return out, nil
}

var recoverHasher = func() *ledger.Hasher {
	h, err := ledger.NewHasher(make([]byte, 32))
	if err != nil {
		panic(err)
	}
	return h
}()

func docEntry(table, id string) ledger.Entry {
	return ledger.Entry{Store: ledger.StorePostgres, Table: table, RecordID: id, Subject: recoverHasher.Hash("ann")}
}

func openSQLite(t *testing.T, path string) *ledger.SQLite {
	t.Helper()
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	require.NoError(t, err)
	return l
}

func intendIn(t *testing.T, l ledger.Ledger, es ...ledger.Entry) ledger.IntentID {
	t.Helper()
	id, err := l.Intend(context.Background(), es)
	require.NoError(t, err)
	return id
}

func pendingIDs(t *testing.T, l ledger.Ledger) []ledger.IntentID {
	t.Helper()
	pending, err := l.Pending(context.Background())
	require.NoError(t, err)
	var ids []ledger.IntentID
	for _, in := range pending {
		ids = append(ids, in.ID)
	}
	return ids
}

// states maps "table/id" to the state of ann's record.
func states(t *testing.T, l ledger.Ledger) map[string]ledger.State {
	t.Helper()
	recs, err := l.BySubject(context.Background(), recoverHasher.Hash("ann"))
	require.NoError(t, err)
	out := map[string]ledger.State{}
	for _, r := range recs {
		if out[r.Table+"/"+r.RecordID] != ledger.StateConfirmed {
			out[r.Table+"/"+r.RecordID] = r.State
		}
	}
	return out
}

func TestRecover_DecidesOrphanedIntentsByAskingTheStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	crashed := openSQLite(t, path)
	committed := intendIn(t, crashed, docEntry("public.docs", "a"), docEntry("public.docs", "b"))
	rolledBack := intendIn(t, crashed, docEntry("public.docs", "c"))
	generated := intendIn(t, crashed, docEntry("public.docs", ""))
	unconfigured := intendIn(t, crashed, docEntry("public.other", "z"))
	require.NoError(t, crashed.Close())

	l := openSQLite(t, path) // the proxy's next run
	defer l.Close()
	inFlight := intendIn(t, l, docEntry("public.docs", "d")) // this run's own: not an orphan

	st, err := Recover(ctx, l, map[string]string{"public.docs": "id"}, rowsInStore{"public.docs/b": true, "public.other/z": true})
	require.NoError(t, err)
	assert.Equal(t, RecoveryStats{Confirmed: 1, Dropped: 1, LeftPending: 2}, st)

	assert.ElementsMatch(t, []ledger.IntentID{generated, unconfigured, inFlight}, pendingIDs(t, l))
	got := states(t, l)
	assert.Equal(t, ledger.StateConfirmed, got["public.docs/a"], "intent %d confirmed", committed)
	assert.NotContains(t, got, "public.docs/c", "intent %d dropped", rolledBack)
	assert.Equal(t, ledger.StatePending, got["public.docs/d"], "the live handle's intent %d is left alone", inFlight)
}

// racingLedger is a ledger where another proxy's recovery resolves some
// orphans, the other way, between this one listing them and deciding.
type racingLedger struct {
	ledger.Ledger
	confirmFirst, dropFirst ledger.IntentID
}

func (r racingLedger) PendingOrphans(ctx context.Context) ([]ledger.Intent, error) {
	orphans, err := r.Ledger.PendingOrphans(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.Confirm(ctx, r.confirmFirst); err != nil {
		return nil, err
	}
	return orphans, r.Drop(ctx, r.dropFirst)
}

func TestRecover_KeepsRecordsTrackedWhenAnotherProxyRaced(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	crashed := openSQLite(t, path)
	appeared := intendIn(t, crashed, docEntry("public.docs", "a")) // the other proxy found no row, this one does
	vanished := intendIn(t, crashed, docEntry("public.docs", "b")) // the other proxy found the row, this one does not
	require.NoError(t, crashed.Close())
	l := openSQLite(t, path)
	defer l.Close()

	st, err := Recover(ctx, racingLedger{Ledger: l, dropFirst: appeared, confirmFirst: vanished},
		map[string]string{"public.docs": "id"}, rowsInStore{"public.docs/a": true})
	require.NoError(t, err)
	assert.Equal(t, RecoveryStats{Confirmed: 2, Raced: 2}, st)
	assert.Empty(t, pendingIDs(t, l))
	assert.Equal(t, map[string]ledger.State{"public.docs/a": ledger.StateConfirmed, "public.docs/b": ledger.StateConfirmed}, states(t, l),
		"a record either proxy saw stays tracked")
}

func TestRecoverEvery_ResolvesLaterOrphansAndStopsWithTheLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.db")
	crashed := openSQLite(t, path)
	intendIn(t, crashed, docEntry("public.docs", "a"))
	require.NoError(t, crashed.Close())
	l := openSQLite(t, path)
	inFlight := intendIn(t, l, docEntry("public.docs", "b"))

	done := make(chan struct{})
	go func() {
		defer close(done)
		RecoverEvery(context.Background(), 10*time.Millisecond, l, map[string]string{"public.docs": "id"}, rowsInStore{"public.docs/a": true},
			slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	require.Eventually(t, func() bool { return states(t, l)["public.docs/a"] == ledger.StateConfirmed }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // a few more runs
	assert.Equal(t, []ledger.IntentID{inFlight}, pendingIDs(t, l), "the live handle's intent is never an orphan")

	require.NoError(t, l.Close())
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RecoverEvery did not stop when the ledger closed")
	}
}

// RecoverFrom decides only the intents of its store, and drops an intent
// whose records are absent only once it is older than AbsentAfter: a
// store whose reads lag its writes may not show an applied write yet.
func TestRecoverFrom_OneStoreAndAbsenceOnlyAfterAbsentAfter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	crashed := openSQLite(t, path)
	vec := func(id string) ledger.Entry {
		return ledger.Entry{Store: ledger.StorePinecone, Table: "ix/ns", RecordID: id, Subject: recoverHasher.Hash("ann")}
	}
	present := intendIn(t, crashed, vec("p"))
	absent := intendIn(t, crashed, vec("a"))
	pg := intendIn(t, crashed, docEntry("public.docs", "x"))
	require.NoError(t, crashed.Close())
	l := openSQLite(t, path)
	defer l.Close()

	check := StoreCheck{Store: ledger.StorePinecone, Checker: rowsInStore{"ix/ns/p": true, "public.docs/x": true},
		IDColumn: func(string) (string, bool) { return "", true }, AbsentAfter: time.Hour}
	st, err := RecoverFrom(ctx, l, check)
	require.NoError(t, err)
	assert.Equal(t, RecoveryStats{Confirmed: 1, LeftPending: 2}, st, "the absent intent is younger than an hour; the PostgreSQL one is not this store's")
	assert.ElementsMatch(t, []ledger.IntentID{absent, pg}, pendingIDs(t, l), "intent %d confirmed", present)

	check.AbsentAfter = 0
	st, err = RecoverFrom(ctx, l, check)
	require.NoError(t, err)
	assert.Equal(t, RecoveryStats{Dropped: 1, LeftPending: 1}, st)
	assert.Equal(t, []ledger.IntentID{pg}, pendingIDs(t, l))
}
