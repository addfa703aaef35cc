package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return fi.Size()
}

// TestSQLite_IntentsOnlyWriteThePendingFile: an intent's commit writes the
// pending file alone, so its fsync flushes no confirmation's pages; the
// confirmations write the ledger file.
func TestSQLite_IntentsOnlyWriteThePendingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()
	ledgerWAL, pendingWAL := walSize(t, path), walSize(t, path+"-pending")

	var ids []IntentID
	for i := range 50 {
		ids = append(ids, intend(t, l, entry("public.docs", strconv.Itoa(i), "alice")))
	}
	require.Equal(t, ledgerWAL, walSize(t, path), "intents wrote the ledger file")
	require.Greater(t, walSize(t, path+"-pending"), pendingWAL, "intents are in the pending file")

	for _, id := range ids {
		require.NoError(t, l.Confirm(ctx, id))
	}
	require.Greater(t, walSize(t, path), ledgerWAL, "confirmations write the ledger file")
	require.Empty(t, pendingIDs(t, l))
	require.Len(t, bySubject(t, l, "alice"), 50)
	var left int
	require.NoError(t, l.pendingReaders.QueryRow(`SELECT count(*) FROM pending`).Scan(&left))
	require.Zero(t, left, "resolved intents leave the pending file")
}

// TestSQLite_ResolvedPendingRowIsSkippedThenCleared: a crash between a
// resolution's commit in the ledger file and the deletion of its pending
// row leaves the row behind. Readers must not report it pending, deciding
// it again must answer as for a resolved intent, and the next open must
// delete it.
func TestSQLite_ResolvedPendingRowIsSkippedThenCleared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	ctx := context.Background()
	confirmed := intend(t, l, entry("public.docs", "1", "alice"), entry("public.docs", "2", "bob"))
	dropped := intend(t, l, entry("public.docs", "3", "alice"))
	open := intend(t, l, entry("public.docs", "4", "alice"))
	rows, err := l.pendingReaders.QueryContext(ctx, `SELECT id, created_at, entries, owner_id FROM pending`)
	require.NoError(t, err)
	before, err := scanPending(rows)
	require.NoError(t, err)
	require.NoError(t, l.Confirm(ctx, confirmed))
	require.NoError(t, l.Drop(ctx, dropped))
	for _, p := range before { // the crash: the rows are back
		_, err := l.pendingWriter.Exec(`INSERT OR IGNORE INTO pending (id, created_at, entries, owner_id) VALUES (?, ?, ?, ?)`, int64(p.id), p.created, p.blob, p.owner)
		require.NoError(t, err)
	}

	require.Equal(t, []IntentID{open}, pendingIDs(t, l))
	require.Equal(t, []key{{"public.docs", "1", StateConfirmed, confirmed}, {"public.docs", "4", StatePending, open}}, bySubject(t, l, "alice"))
	counts, err := l.Counts(ctx)
	require.NoError(t, err)
	require.Equal(t, []TableCount{
		{Store: StorePostgres, Table: "public.docs", State: StateConfirmed, Count: 2},
		{Store: StorePostgres, Table: "public.docs", State: StatePending, Count: 1},
	}, counts)
	require.NoError(t, l.Confirm(ctx, confirmed), "confirming again is idempotent")
	require.ErrorIs(t, l.Confirm(ctx, dropped), ErrUnknownIntent)
	require.ErrorIs(t, l.Drop(ctx, confirmed), ErrIntentConfirmed)

	for _, p := range before { // deciding them again cleared them: put them back once more
		_, err := l.pendingWriter.Exec(`INSERT OR IGNORE INTO pending (id, created_at, entries, owner_id) VALUES (?, ?, ?, ?)`, int64(p.id), p.created, p.blob, p.owner)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	l, err = OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	var left []int64
	rows, err = l.pendingReaders.QueryContext(ctx, `SELECT id FROM pending ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []int64{int64(open)}, left, "open deletes the rows of resolved intents")
}

// TestSQLite_IntentIDsAreNeverReused: ids continue past every id the
// ledger file has seen, even when the pending file is new (a ledger from
// before it, or a pending file lost).
func TestSQLite_IntentIDsAreNeverReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	var last IntentID
	for i := range 5 {
		last = intend(t, l, entry("public.docs", strconv.Itoa(i), "alice"))
		require.NoError(t, l.Confirm(context.Background(), last))
	}
	require.NoError(t, l.Close())
	for _, suffix := range []string{"-pending", "-pending-wal", "-pending-shm"} {
		os.Remove(path + suffix)
	}
	l, err = OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	next := intend(t, l, entry("public.docs", "6", "alice"))
	require.Greater(t, next, last)
}
