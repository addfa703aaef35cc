package ledger

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSQLite_InitialReadsContract(t *testing.T) { runInitialReadsContract(t, sqliteBackend) }
func TestPostgres_InitialReadsContract(t *testing.T) {
	testPGConnString(t)
	runInitialReadsContract(t, pgBackend)
}

// runInitialReadsContract pins what both backends do with the marks of
// slots whose initial read is durable: a mark names one slot of one
// database on one server, survives a restart, and is gone once cleared.
func runInitialReadsContract(t *testing.T, b backend) {
	ctx := context.Background()
	open, _ := b.newStore(t)
	l := open(t)
	reads := l.(InitialReads)
	key := SlotKey{System: "7716019556505652694", Database: "app", Slot: "lethe_app"}
	done, err := reads.InitialReadDone(ctx, key)
	require.NoError(t, err)
	require.False(t, done, "a new ledger has read no slot")

	require.NoError(t, reads.MarkInitialRead(ctx, key))
	require.NoError(t, reads.MarkInitialRead(ctx, key), "marking twice is marking once")
	require.NoError(t, l.Close())

	l = open(t)
	defer l.Close()
	reads = l.(InitialReads)
	done, err = reads.InitialReadDone(ctx, key)
	require.NoError(t, err)
	require.True(t, done, "the mark survives a restart")
	for _, other := range []SlotKey{
		{System: "1", Database: key.Database, Slot: key.Slot},
		{System: key.System, Database: "other", Slot: key.Slot},
		{System: key.System, Database: key.Database, Slot: "lethe_other"},
	} {
		done, err = reads.InitialReadDone(ctx, other)
		require.NoError(t, err)
		require.False(t, done, "%v is another slot", other)
	}

	require.NoError(t, reads.ClearInitialRead(ctx, key))
	require.NoError(t, reads.ClearInitialRead(ctx, key), "clearing no mark does nothing")
	done, err = reads.InitialReadDone(ctx, key)
	require.NoError(t, err)
	require.False(t, done)
}
