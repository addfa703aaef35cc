package ledger

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSQLite_StoreMarksContract(t *testing.T) { runStoreMarksContract(t, sqliteBackend) }
func TestPostgres_StoreMarksContract(t *testing.T) {
	testPGConnString(t)
	runStoreMarksContract(t, pgBackend)
}

// runStoreMarksContract pins what both backends do with what a proxy saw
// of a store: a mark survives a restart, holds any LSN, and replay clears
// every restore it names.
func runStoreMarksContract(t *testing.T, b backend) {
	ctx := context.Background()
	open, _ := b.newStore(t)
	l := open(t)
	marks := l.(StoreMarks)
	_, ok, err := marks.StoreSeen(ctx, "postgres://db:5432/app")
	require.NoError(t, err)
	require.False(t, ok, "a new ledger has seen no store")

	seen := StoreSeen{System: "7716019556505652694", Timeline: 2, WAL: math.MaxUint64 - 1, Restore: "the timeline changed"}
	require.NoError(t, marks.RecordStoreSeen(ctx, "postgres://db:5432/app", seen))
	require.NoError(t, marks.RecordStoreSeen(ctx, "postgres://other:5432/app", StoreSeen{WAL: 7}))
	require.NoError(t, l.Close())

	l = open(t)
	defer l.Close()
	marks = l.(StoreMarks)
	got, ok, err := marks.StoreSeen(ctx, "postgres://db:5432/app")
	require.NoError(t, err)
	require.True(t, ok, "the mark survives a restart")
	assert.Equal(t, seen.System, got.System)
	assert.Equal(t, seen.Timeline, got.Timeline)
	assert.Equal(t, seen.WAL, got.WAL, "an LSN past int64 is kept")
	assert.Equal(t, seen.Restore, got.Restore)
	assert.False(t, got.UpdatedAt.IsZero())

	n, err := marks.ClearRestores(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	got, _, err = marks.StoreSeen(ctx, "postgres://db:5432/app")
	require.NoError(t, err)
	assert.Empty(t, got.Restore)
	assert.Equal(t, seen.WAL, got.WAL, "clearing keeps what was seen")
}
