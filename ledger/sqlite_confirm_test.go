package ledger

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSQLite_ABatchWritesConfirmationsAsInOrder commits confirmations and
// a deletion in one transaction, as the committer gathers them: a record
// several confirmations name ends with the last of them, and a deletion
// between confirmations falls between them, as if each request had
// committed alone.
func TestSQLite_ABatchWritesConfirmationsAsInOrder(t *testing.T) {
	l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()

	a := intend(t, l, entry("t", "w", "alice"), entry("t", "x", "alice"), entry("t", "y", "alice"))
	b := intend(t, l, entry("t", "w", "alice"), entry("t", "x", "alice"), entry("t", "x", "alice"))
	c := intend(t, l, entry("t", "x", "alice"), entry("t", "z", "bob"))
	d := intend(t, l, entry("t", "v", "bob"))
	batch := []*request{
		{ctx: ctx, kind: opConfirm, intent: a},
		{ctx: ctx, kind: opConfirm, intent: b},
		{ctx: ctx, kind: opDrop, intent: d},
		{ctx: ctx, kind: opMarkDeleted, store: StorePostgres, table: "t", recordIDs: []string{"x", "y"}},
		{ctx: ctx, kind: opConfirm, intent: c},
		{ctx: ctx, kind: opConfirm, intent: a}, // confirmed already: writes nothing again
	}
	require.NoError(t, l.writeDecisions(ctx, time.Now(), batch))
	for _, r := range batch {
		require.NoError(t, r.opErr)
	}

	require.ElementsMatch(t, []key{
		{"t", "w", StateConfirmed, b}, // a, then b: b's
		{"t", "x", StateConfirmed, c}, // a and b, deleted, then c
		{"t", "y", StateDeleted, a},   // a, then deleted
	}, bySubject(t, l, "alice"))
	require.ElementsMatch(t, []key{{"t", "z", StateConfirmed, c}}, bySubject(t, l, "bob"))
	require.Empty(t, pendingIDs(t, l))
}
