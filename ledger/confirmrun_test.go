package ledger

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBatch_ConfirmationsAreWrittenAsInOrder commits confirmations, a
// drop and a deletion in one transaction, as the committer gathers them,
// through each backend's batch writer: a record several confirmations
// name ends with the last of them, and a deletion between confirmations
// falls between them, as if each request had committed alone.
func TestBatch_ConfirmationsAreWrittenAsInOrder(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
		require.NoError(t, err)
		defer l.Close()
		testBatchInOrder(t, l, l.writeDecisions)
	})
	t.Run("postgres", func(t *testing.T) {
		conn := testPGConnString(t)
		l, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(t, conn)})
		require.NoError(t, err)
		defer l.Close()
		testBatchInOrder(t, l, l.writeBatch)
	})
}

func testBatchInOrder(t *testing.T, l Ledger, write batchWriter) {
	ctx := context.Background()
	a := intend(t, l, entry("t", "w", "alice"), entry("t", "x", "alice"), entry("t", "y", "alice"))
	b := intend(t, l, entry("t", "w", "alice"), entry("t", "x", "alice"), entry("t", "x", "alice"))
	c := intend(t, l, entry("t", "x", "alice"), entry("t", "z", "bob"))
	d := intend(t, l, entry("t", "v", "bob"))
	e := intend(t, l, entry("t", "u", "bob"))
	f := intend(t, l, entry("t", "s", "bob"))
	batch := []*request{
		{ctx: ctx, kind: opConfirm, intent: a},
		{ctx: ctx, kind: opConfirm, intent: b},
		{ctx: ctx, kind: opDrop, intent: d},
		{ctx: ctx, kind: opMarkDeleted, store: StorePostgres, table: "t", recordIDs: []string{"x", "y"}},
		{ctx: ctx, kind: opConfirm, intent: c},
		{ctx: ctx, kind: opConfirm, intent: a},   // confirmed already: writes nothing again
		{ctx: ctx, kind: opConfirm, intent: d},   // dropped above: unknown
		{ctx: ctx, kind: opConfirm, intent: 999}, // never made: unknown
		{ctx: ctx, kind: opConfirm, intent: e},
		{ctx: ctx, kind: opDrop, intent: f},
		{ctx: ctx, kind: opConfirm, intent: f}, // dropped just before: unknown
	}
	require.NoError(t, write(ctx, time.Now(), batch))
	for i, r := range batch {
		switch i {
		case 6, 7, 10:
			require.ErrorIs(t, r.opErr, ErrUnknownIntent, "request %d", i)
		default:
			require.NoError(t, r.opErr, "request %d", i)
		}
	}

	require.ElementsMatch(t, []key{
		{"t", "w", StateConfirmed, b}, // a, then b: b's
		{"t", "x", StateConfirmed, c}, // a and b, deleted, then c
		{"t", "y", StateDeleted, a},   // a, then deleted
	}, bySubject(t, l, "alice"))
	require.ElementsMatch(t, []key{{"t", "z", StateConfirmed, c}, {"t", "u", StateConfirmed, e}}, bySubject(t, l, "bob"))
	require.Empty(t, pendingIDs(t, l))
}
