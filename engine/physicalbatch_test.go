package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// batchFake is a rescanFake whose physical steps wait for a batch every
// window: RescanBatch records the subjects of each call and answers each
// with its pages still holding the bytes in holding, or an error for a
// subject holding does not name (its bytes are gone).
type batchFake struct {
	*rescanFake
	window time.Duration
	every  time.Duration

	batchMu sync.Mutex
	batches [][]string
	holding map[string]int64
}

func (b *batchFake) PhysicalWindow() time.Duration { return b.window }
func (b *batchFake) RescanEvery() time.Duration    { return b.every }

func (b *batchFake) RescanBatch(_ context.Context, subjects []string, each func(string, *connector.Physical, error)) {
	b.batchMu.Lock()
	b.batches = append(b.batches, append([]string(nil), subjects...))
	b.batchMu.Unlock()
	for _, s := range subjects {
		h, ok := b.holding[s]
		if !ok {
			each(s, nil, errors.New("the bytes are gone"))
			continue
		}
		each(s, &connector.Physical{Status: connector.PhysicalScanned, Method: "fake batch", At: time.Now().UTC(),
			Relations: []connector.RelationPages{{Relation: "docs", Kind: "heap", Pages: 4, Scanned: 4, Holding: h, HoldingVector: h, Coverage: "all"}}}, nil)
	}
}

func (b *batchFake) batchCalls() [][]string {
	b.batchMu.Lock()
	defer b.batchMu.Unlock()
	return append([][]string(nil), b.batches...)
}

// present puts records for the next forget to delete.
func (b *batchFake) present(ids ...string) {
	b.fakeLayer.mu.Lock()
	b.fakeLayer.present = ids
	b.fakeLayer.mu.Unlock()
}

func newBatchFake(window, every time.Duration, holding map[string]int64) *batchFake {
	return &batchFake{rescanFake: newRescanFake(), window: window, every: every, holding: holding}
}

// latest is the request's latest physical addendum of its one layer.
func latest(t *testing.T, te testEngine, id string) *PhysicalAddendum {
	t.Helper()
	st, err := te.Status(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, st.Layers, 1)
	return st.Layers[0].PhysicalLatest
}

// TestBatch_TwoForgetsInOneWindowShareOneStep: two forgets of one table
// within its window are certified at once, each scan's method naming the
// batch they both wait for; at the window's end, and not before, the
// layer runs one batch for both, and each request gets its own logged
// forget.physical report. A forget whose batch scan still finds the bytes
// is re-scanned on its own every physical_rescan afterwards.
func TestBatch_TwoForgetsInOneWindowShareOneStep(t *testing.T) {
	ctx := context.Background()
	layer := newBatchFake(time.Hour, 10*time.Minute, map[string]int64{"alice": 0, "bob": 2})
	layer.rescanFake.holding = []int64{0}
	te := newTestEngine(t, 30*24*time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	te.record(t, "bob", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "b"})
	opened := te.cfg.Now()
	due := opened.Add(time.Hour).UTC().Format(time.RFC3339)

	first := te.forget(t, "alice")
	te.advance(20 * time.Minute)
	layer.present("b")
	second := te.forget(t, "bob")
	for _, id := range []string{first, second} {
		st, err := te.Status(ctx, id)
		require.NoError(t, err)
		require.Equal(t, ledger.ForgetCompleted, st.Status, "certified at once, before the batch")
		require.Contains(t, st.Layers[0].Physical.Method, "this forget's batch is due at "+due)
		require.Len(t, st.PhysicalAddenda, 1)
		require.Equal(t, ledger.AddendumCertified, st.PhysicalAddenda[0].Kind)
		require.WithinDuration(t, opened.Add(time.Hour), *st.PhysicalAddenda[0].NextAt, time.Millisecond, "the ledger keeps microseconds")
		require.Contains(t, st.PhysicalAddenda[0].Note, "the physical steps wait for the table's batch due at "+due)
		cert, err := te.Certificate(ctx, id)
		require.NoError(t, err)
		payload, _ := payloadOf(t, cert)
		require.Contains(t, payload.Layers[0].Physical.Method, "batch is due at "+due)
	}

	te.advance(39 * time.Minute)
	te.RescanDue(ctx)
	require.Empty(t, layer.batchCalls(), "not before the window's end")

	te.advance(time.Minute)
	te.RescanDue(ctx)
	calls := layer.batchCalls()
	require.Len(t, calls, 1, "one batch for both forgets")
	require.ElementsMatch(t, []string{"alice", "bob"}, calls[0])
	require.Zero(t, layer.count(), "no forget ran steps of its own")

	clean := latest(t, te, first)
	require.Equal(t, ledger.AddendumBatch, clean.Kind)
	require.Contains(t, clean.Note, "re-scan 1, the batch's: the table's physical steps ran once for the 2 forgets deferred to it: clean")
	require.Nil(t, clean.NextAt)
	held := latest(t, te, second)
	require.Equal(t, ledger.AddendumBatch, held.Kind)
	require.Equal(t, int64(2), held.Physical.Holding())
	require.NotNil(t, held.NextAt)
	require.WithinDuration(t, te.cfg.Now().Add(10*time.Minute), *held.NextAt, time.Millisecond)
	for _, a := range []*PhysicalAddendum{clean, held} {
		report, err := certificate.VerifyReport(a.Report, te.cfg.Certifier.keys)
		require.NoError(t, err)
		require.Equal(t, certificate.EventPhysical, report.Kind)
		require.Equal(t, a.Physical.Holding(), report.Layers[0].Residual)
	}
	require.Len(t, physicalEvents(t, te), 2, "one report per forget")

	te.advance(10 * time.Minute)
	te.RescanDue(ctx)
	require.Len(t, layer.batchCalls(), 1, "after its batch a forget is re-scanned on its own")
	require.Equal(t, 1, layer.count())
	require.Equal(t, ledger.AddendumRescan, latest(t, te, second).Kind)
}

// TestBatch_AForgetAfterTheWindowOpensTheNext: a forget that comes once
// the open batch is due waits for a new one, a window later.
func TestBatch_AForgetAfterTheWindowOpensTheNext(t *testing.T) {
	ctx := context.Background()
	layer := newBatchFake(time.Hour, 10*time.Minute, map[string]int64{"alice": 0, "bob": 0})
	te := newTestEngine(t, 30*24*time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	te.record(t, "bob", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "b"})
	first := te.forget(t, "alice")
	te.advance(time.Hour)
	layer.present("b")
	second := te.forget(t, "bob")
	st, err := te.Status(ctx, second)
	require.NoError(t, err)
	require.WithinDuration(t, te.cfg.Now().Add(time.Hour), *st.PhysicalAddenda[0].NextAt, time.Millisecond)

	te.RescanDue(ctx)
	require.Equal(t, [][]string{{"alice"}}, layer.batchCalls())
	require.Equal(t, ledger.AddendumBatch, latest(t, te, first).Kind)
	require.Nil(t, latest(t, te, second), "bob's batch is not due")
	te.advance(time.Hour)
	te.RescanDue(ctx)
	require.Equal(t, [][]string{{"alice"}, {"bob"}}, layer.batchCalls())
}

// TestBatch_LostBytesAndNoRescans: a forget whose bytes the layer no
// longer holds at the batch is stated lost; with physical_rescan 0 a
// batch scan that still finds the bytes is the last look, and says so.
func TestBatch_LostBytesAndNoRescans(t *testing.T) {
	ctx := context.Background()
	layer := newBatchFake(time.Hour, 0, map[string]int64{"bob": 3})
	te := newTestEngine(t, 30*24*time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	te.record(t, "bob", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "b"})
	first := te.forget(t, "alice")
	layer.present("b")
	second := te.forget(t, "bob")
	st, err := te.Status(ctx, second)
	require.NoError(t, err)
	require.Contains(t, st.PhysicalAddenda[0].Note, "whose scan is the last (physical_rescan 0)")

	te.advance(time.Hour)
	te.RescanDue(ctx)
	lost := latest(t, te, first)
	require.Equal(t, ledger.AddendumLost, lost.Kind)
	require.Equal(t, connector.PhysicalNotPossible, lost.Physical.Status)
	require.Contains(t, lost.Note, "the bytes are gone; no later re-scan")
	last := latest(t, te, second)
	require.Equal(t, ledger.AddendumBatch, last.Kind)
	require.Nil(t, last.NextAt)
	require.Contains(t, last.Note, "still in 3 of 4 pages scanned, and stay stated so; no later re-scan (physical_rescan 0)")

	te.advance(24 * time.Hour)
	te.RescanDue(ctx)
	require.Len(t, layer.batchCalls(), 1)
	require.Zero(t, layer.count())
}
