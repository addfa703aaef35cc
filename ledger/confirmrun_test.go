package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// TestBatch_OneTransactionEqualsOneEach draws random sequences of
// confirmations, drops and deletions over a few records and writes each
// sequence to one ledger as one batch and to another one request per
// transaction: the records, their states and intents, and each request's
// answer must agree.
func TestBatch_OneTransactionEqualsOneEach(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		open := func() *SQLite {
			l, err := OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), Options{})
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			return l
		}
		batched, single := open(), open()
		testOneTransactionEqualsOneEach(t, 40, batched, batched.writeDecisions, single, single.writeDecisions)
	})
	t.Run("postgres", func(t *testing.T) {
		conn := testPGConnString(t)
		open := func() *Postgres {
			l, err := OpenPostgres(context.Background(), conn, Options{Schema: freshPGSchema(t, conn)})
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			return l
		}
		batched, single := open(), open()
		testOneTransactionEqualsOneEach(t, 15, batched, batched.writeBatch, single, single.writeBatch)
	})
}

func testOneTransactionEqualsOneEach(t *testing.T, rounds int, batched Ledger, writeBatched batchWriter, single Ledger, writeSingle batchWriter) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	subjects := []string{"ann", "bo", "cy"}
	for round := range rounds {
		tables := []string{fmt.Sprintf("r%d.a", round), fmt.Sprintf("r%d.b", round)}
		record := func() Entry {
			return entry(tables[rng.IntN(2)], fmt.Sprintf("id%d", rng.IntN(5)), subjects[rng.IntN(len(subjects))])
		}
		var intents []IntentID
		for range 1 + rng.IntN(6) {
			entries := make([]Entry, 1+rng.IntN(4))
			for i := range entries {
				entries[i] = record()
			}
			id := intend(t, batched, entries...)
			require.Equal(t, id, intend(t, single, entries...), "both ledgers number intents alike")
			intents = append(intents, id)
		}
		var requests []request
		for range 1 + rng.IntN(12) {
			r := request{ctx: ctx}
			switch k := rng.IntN(10); {
			case k < 6:
				r.kind, r.intent = opConfirm, intents[rng.IntN(len(intents))]
			case k < 8:
				r.kind, r.intent = opDrop, intents[rng.IntN(len(intents))]
			case k < 9:
				r.kind, r.store, r.table = opMarkDeleted, StorePostgres, tables[rng.IntN(2)]
				r.recordIDs = []string{fmt.Sprintf("id%d", rng.IntN(5)), fmt.Sprintf("id%d", rng.IntN(5))}
			default:
				r.kind, r.store, r.table = opMarkTableDeleted, StorePostgres, tables[rng.IntN(2)]
			}
			requests = append(requests, r)
		}

		var batch []*request
		for i := range requests {
			r := requests[i]
			batch = append(batch, &r)
		}
		require.NoError(t, writeBatched(ctx, time.Now(), batch))
		for i := range requests {
			r := requests[i]
			require.NoError(t, writeSingle(ctx, time.Now(), []*request{&r}))
			require.Equal(t, r.opErr, batch[i].opErr, "round %d, request %d (kind %d)", round, i, r.kind)
		}
		for _, s := range subjects {
			require.ElementsMatch(t, bySubject(t, single, s), bySubject(t, batched, s), "round %d, subject %s", round, s)
		}
	}
}
