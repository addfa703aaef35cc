package capture

import (
	"context"
	"path/filepath"
	"testing"

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

func TestRecover_DecidesPendingIntentsByAskingTheStore(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	require.NoError(t, err)
	defer l.Close()
	h, err := ledger.NewHasher(make([]byte, 32))
	require.NoError(t, err)
	entry := func(table, id string) ledger.Entry {
		return ledger.Entry{Store: ledger.StorePostgres, Table: table, RecordID: id, Subject: h.Hash("ann")}
	}
	intend := func(es ...ledger.Entry) ledger.IntentID {
		id, err := l.Intend(ctx, es)
		require.NoError(t, err)
		return id
	}
	committed := intend(entry("public.docs", "a"), entry("public.docs", "b"))
	rolledBack := intend(entry("public.docs", "c"))
	generated := intend(entry("public.docs", ""))
	unconfigured := intend(entry("public.other", "z"))

	st, err := Recover(ctx, l, map[string]string{"public.docs": "id"}, rowsInStore{"public.docs/b": true, "public.other/z": true})
	require.NoError(t, err)
	assert.Equal(t, RecoveryStats{Confirmed: 1, Dropped: 1, LeftPending: 2}, st)

	pending, err := l.Pending(ctx)
	require.NoError(t, err)
	var ids []ledger.IntentID
	for _, in := range pending {
		ids = append(ids, in.ID)
	}
	assert.ElementsMatch(t, []ledger.IntentID{generated, unconfigured}, ids)
	recs, err := l.BySubject(ctx, h.Hash("ann"))
	require.NoError(t, err)
	states := map[string]ledger.State{}
	for _, r := range recs {
		states[r.Table+"/"+r.RecordID] = r.State
	}
	assert.Equal(t, ledger.StateConfirmed, states["public.docs/a"], "intent %d confirmed", committed)
	assert.NotContains(t, states, "public.docs/c", "intent %d dropped", rolledBack)
}
