package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runAddendaContract checks a backend's PhysicalAddenda: entries come back
// in order with what was written, the pending list holds each layer's
// latest entry only while it names a next re-scan, and entries survive a
// reopen.
func runAddendaContract(t *testing.T, b backend) {
	ctx := context.Background()
	open, _ := b.newStore(t)
	l := open(t)
	pa := l.(PhysicalAddenda)
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	pending, err := pa.PendingPhysicalAddenda(ctx)
	require.NoError(t, err)
	require.Empty(t, pending, "an empty ledger has none, its table created on first use")

	add := func(req, table, kind string, at, next time.Time, index int64) {
		require.NoError(t, pa.AddPhysicalAddendum(ctx, PhysicalAddendum{RequestID: req, At: at, Store: StorePostgres, Table: table,
			Kind: kind, Physical: []byte(`{"status":"scanned"}`), NextAt: next, Note: kind + " note", Owner: "engine-a", LogIndex: index,
			Report: map[bool][]byte{true: []byte(`{"lethe_report":1}`)}[index >= 0]}))
	}
	add("r1", "public.a", AddendumCertified, at, at.Add(10*time.Minute), -1)
	add("r1", "public.b", AddendumCertified, at, at.Add(10*time.Minute), -1)
	add("r2", "public.a", AddendumCertified, at, at.Add(10*time.Minute), -1)
	add("r1", "public.a", AddendumRescan, at.Add(10*time.Minute), time.Time{}, 7) // clean: no next

	got, err := pa.PhysicalAddenda(ctx, "r1")
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, PhysicalAddendum{RequestID: "r1", At: at.Add(10 * time.Minute), Store: StorePostgres, Table: "public.a", Kind: AddendumRescan,
		Physical: []byte(`{"status":"scanned"}`), Note: "rescan note", Owner: "engine-a", LogIndex: 7, Report: []byte(`{"lethe_report":1}`)}, got[2])
	require.Equal(t, at.Add(10*time.Minute), got[0].NextAt)
	require.Nil(t, got[0].Report)

	pending, err = pa.PendingPhysicalAddenda(ctx)
	require.NoError(t, err)
	var names []string
	for _, p := range pending {
		names = append(names, p.RequestID+" "+p.Table)
	}
	require.Equal(t, []string{"r1 public.b", "r2 public.a"}, names, "r1 public.a's latest entry names no next re-scan")

	require.NoError(t, l.Close())
	l = open(t)
	defer l.Close()
	got, err = l.(PhysicalAddenda).PhysicalAddenda(ctx, "r2")
	require.NoError(t, err)
	require.Len(t, got, 1, "entries are durable")
}

func TestSQLite_PhysicalAddenda(t *testing.T) { runAddendaContract(t, sqliteBackend) }

func TestPostgres_PhysicalAddenda(t *testing.T) {
	testPGConnString(t)
	runAddendaContract(t, pgBackend)
}
