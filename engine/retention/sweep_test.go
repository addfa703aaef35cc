package retention

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/engine/enginetest"
	"github.com/lethe-privacy/lethe/ledger"
)

// fakeRetainer is a table whose records carry a time (nil: unreadable).
type fakeRetainer struct {
	name string
	// keep, when set, makes deletes skip the ids it names (a store that
	// leaves records behind); failDelete fails every delete.
	keep       map[string]bool
	failDelete error

	mu      sync.Mutex
	records map[string]*time.Time
	batches [][]string // ids per delete statement
}

func (f *fakeRetainer) Store() ledger.Store { return ledger.StorePostgres }
func (f *fakeRetainer) Name() string        { return f.name }

func (f *fakeRetainer) expired(cutoff time.Time) []string {
	var ids []string
	for id, at := range f.records {
		if at != nil && at.Before(cutoff) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (f *fakeRetainer) Expired(_ context.Context, cutoff time.Time) (connector.Expiry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := connector.Expiry{Expired: int64(len(f.expired(cutoff)))}
	for _, at := range f.records {
		if at == nil {
			e.Unreadable++
		}
	}
	return e, nil
}

func (f *fakeRetainer) DeleteExpired(_ context.Context, cutoff time.Time, batch int, beforeCommit func(string, []string) error) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failDelete != nil {
		return 0, f.failDelete
	}
	ids := slices.DeleteFunc(f.expired(cutoff), func(id string) bool { return f.keep[id] })
	var n int64
	for chunk := range slices.Chunk(ids, batch) {
		if err := beforeCommit(f.name, chunk); err != nil {
			return n, err
		}
		for _, id := range chunk {
			delete(f.records, id)
		}
		f.batches = append(f.batches, chunk)
		n += int64(len(chunk))
	}
	return n, nil
}

func (f *fakeRetainer) ResidualExpired(_ context.Context, cutoff time.Time) (connector.Absence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connector.Absence{Residual: int64(len(f.expired(cutoff))), Method: "fake count", Queries: []string{"SELECT count(*) FROM t WHERE at < $1"}}, nil
}

func (f *fakeRetainer) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.records {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// aged returns records named old-N (100 days old), new-N (1 day old) and
// null-N (no time), n of each kind.
func aged(now time.Time, old, fresh, null int) map[string]*time.Time {
	out := map[string]*time.Time{}
	for i := range old {
		at := now.Add(-100 * 24 * time.Hour)
		out[idOf("old", i)] = &at
	}
	for i := range fresh {
		at := now.Add(-24 * time.Hour)
		out[idOf("new", i)] = &at
	}
	for i := range null {
		out[idOf("null", i)] = nil
	}
	return out
}

func idOf(kind string, i int) string { return kind + "-" + string(rune('a'+i)) }

func sweep(t *testing.T, te enginetest.Rig, dryRun bool, layers ...Expiring) Result {
	t.Helper()
	res, err := Sweep(context.Background(), Config{
		Layers: layers, Ledger: te.Ledger, Certifier: te.Certifier, Batch: 2, DryRun: dryRun, Now: te.Now,
	})
	require.NoError(t, err)
	return res
}

func TestSweep_DeletesOnlyExpiredRecordsMarksThemInTheLedgerAndLogsASignedReport(t *testing.T) {
	ctx := context.Background()
	te := enginetest.New(t, time.Hour)
	now := te.Now()
	docs := &fakeRetainer{name: "public.docs", records: aged(now, 5, 2, 1)}
	for _, id := range docs.ids() {
		te.Record(t, "alice", ledger.Entry{Store: ledger.StorePostgres, Table: "public.docs", RecordID: id})
	}

	res := sweep(t, te, false, Expiring{Retainer: docs, Retain: 90 * 24 * time.Hour, RetainBy: "created_at"})
	require.True(t, res.Clean())
	assert.Equal(t, []string{"new-a", "new-b", "null-a"}, docs.ids(), "only the expired records are deleted; unreadable ones are kept")
	assert.Equal(t, [][]string{{"old-a", "old-b"}, {"old-c", "old-d"}, {"old-e"}}, docs.batches, "in batches of Batch")
	require.Len(t, res.Layers, 1)
	l := res.Layers[0]
	assert.Equal(t, Layer{Store: ledger.StorePostgres, Table: "public.docs", Cutoff: now.UTC().Add(-90 * 24 * time.Hour),
		Expired: 5, Deleted: 5, Residual: 0, Unreadable: 1, Method: l.Method}, l)
	assert.Contains(t, l.Method, "retain_by (created_at) is before the cutoff (now minus 90d)")
	assert.Contains(t, l.Method, "SELECT count(*) FROM t WHERE at < $1")
	assert.Contains(t, l.Method, "1 records whose created_at is missing or not a time were kept")

	recs, err := te.Ledger.BySubject(ctx, te.Hasher.Hash("alice"))
	require.NoError(t, err)
	for _, r := range recs {
		want := ledger.StateConfirmed
		if r.RecordID[:3] == "old" {
			want = ledger.StateDeleted
		}
		assert.Equal(t, want, r.State, r.RecordID)
	}

	r, err := certificate.VerifyReport(res.Report, te.Keys)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventRetentionSwept, r.Kind)
	assert.Equal(t, res.RunID, r.RunID)
	require.Len(t, r.Layers, 1)
	assert.Equal(t, int64(5), r.Layers[0].Found)
	assert.Equal(t, int64(5), r.Layers[0].Done)
	assert.True(t, l.Cutoff.Equal(*r.Layers[0].Cutoff))
	size, err := te.Log.Size(ctx)
	require.NoError(t, err)
	last, err := te.Log.Record(ctx, size-1)
	require.NoError(t, err)
	ev, err := certificate.ParseEvent(last)
	require.NoError(t, err)
	assert.Equal(t, certificate.EventRetentionSwept, ev.Event)
	assert.Equal(t, res.RunID, ev.RequestID)

	again := sweep(t, te, false, Expiring{Retainer: docs, Retain: 90 * 24 * time.Hour, RetainBy: "created_at"})
	assert.True(t, again.Clean())
	assert.Equal(t, int64(0), again.Layers[0].Expired, "a second sweep finds nothing")
	assert.NotEqual(t, res.RunID, again.RunID)
}

func TestSweep_DryRunCountsAndDeletesMarksAndLogsNothing(t *testing.T) {
	ctx := context.Background()
	te := enginetest.New(t, time.Hour)
	docs := &fakeRetainer{name: "public.docs", records: aged(te.Now(), 3, 1, 1)}
	res, err := Sweep(ctx, Config{Layers: []Expiring{{Retainer: docs, Retain: 90 * 24 * time.Hour}}, DryRun: true})
	require.NoError(t, err, "a dry run needs neither ledger nor certifier")
	assert.Nil(t, res.Report)
	assert.Equal(t, int64(3), res.Layers[0].Expired)
	assert.Equal(t, int64(1), res.Layers[0].Unreadable)
	assert.Equal(t, int64(0), res.Layers[0].Deleted)
	assert.Len(t, docs.ids(), 5, "nothing deleted")
	size, err := te.Log.Size(ctx)
	require.NoError(t, err)
	assert.Zero(t, size, "nothing logged")
}

func TestSweep_ALayerThatFailsOrLeavesRecordsIsReportedAndTheOthersAreSwept(t *testing.T) {
	te := enginetest.New(t, time.Hour)
	now := te.Now()
	broken := &fakeRetainer{name: "public.broken", records: aged(now, 2, 0, 0), failDelete: errors.New("pgvector store: deleting: permission denied")}
	sticky := &fakeRetainer{name: "public.sticky", records: aged(now, 2, 0, 0), keep: map[string]bool{"old-b": true}}
	fine := &fakeRetainer{name: "public.fine", records: aged(now, 2, 0, 0)}
	ret := 90 * 24 * time.Hour
	res := sweep(t, te, false, Expiring{Retainer: broken, Retain: ret}, Expiring{Retainer: sticky, Retain: ret}, Expiring{Retainer: fine, Retain: ret})
	assert.False(t, res.Clean())
	require.Len(t, res.Layers, 3)
	assert.ErrorContains(t, res.Layers[0].Err, "permission denied")
	assert.Equal(t, int64(2), res.Layers[0].Residual)
	assert.Contains(t, res.Layers[0].Method, "the sweep of this layer failed")
	assert.NoError(t, res.Layers[1].Err)
	assert.Equal(t, int64(1), res.Layers[1].Residual, "the record the store kept is counted")
	assert.Equal(t, int64(2), res.Layers[2].Deleted)
	assert.Empty(t, fine.ids())

	r, err := certificate.VerifyReport(res.Report, te.Keys)
	require.NoError(t, err, "the report of a sweep with failures is still signed and logged")
	assert.Equal(t, int64(1), r.Layers[1].Residual)
}

func TestSweep_ADeletingSweepWithoutACertifierIsRefused(t *testing.T) {
	_, err := Sweep(context.Background(), Config{Layers: []Expiring{{Retainer: &fakeRetainer{name: "public.docs"}, Retain: time.Hour}}})
	require.ErrorContains(t, err, "forget.signing_key")
}
