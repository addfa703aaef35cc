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

// rescanFake is a physicalFake that re-scans every 10 minutes: each
// Rescan returns the next of holding (pages still holding the bytes), or
// lost's error once holding runs out.
type rescanFake struct {
	*physicalFake
	mu       sync.Mutex
	holding  []int64
	lost     error
	rescans  int
	released []string
}

func (r *rescanFake) RescanEvery() time.Duration { return 10 * time.Minute }

func (r *rescanFake) Rescan(_ context.Context, subject string) (*connector.Physical, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rescans++
	if len(r.holding) == 0 {
		return nil, r.lost
	}
	h := r.holding[0]
	r.holding = r.holding[1:]
	return &connector.Physical{Status: connector.PhysicalScanned, Method: "fake pages", At: time.Now().UTC(),
		Relations: []connector.RelationPages{{Relation: "docs", Kind: "heap", Pages: 4, Scanned: 4, Holding: h, Coverage: "all"}}}, nil
}

func (r *rescanFake) Release(subject string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = append(r.released, subject)
}

func (r *rescanFake) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rescans
}

func newRescanFake(holding ...int64) *rescanFake {
	return &rescanFake{physicalFake: &physicalFake{fakeLayer: &fakeLayer{name: "ns", present: []string{"a"}}}, holding: holding,
		lost: errors.New("the bytes are gone")}
}

// physicalEvents are the forget.physical events in the engine's log, with
// the signed reports they name.
func physicalEvents(t *testing.T, te testEngine) []certificate.Event {
	t.Helper()
	ctx := context.Background()
	size, err := te.cfg.Certifier.log.Size(ctx)
	require.NoError(t, err)
	var out []certificate.Event
	for i := int64(0); i < size; i++ {
		rec, err := te.cfg.Certifier.log.Record(ctx, i)
		require.NoError(t, err)
		if e, err := certificate.ParseEvent(rec); err == nil && e.Event == certificate.EventPhysical {
			out = append(out, e)
		}
	}
	return out
}

// TestRescan_RunsOnItsScheduleUntilClean: a layer whose certified scan
// found residue is re-scanned every 10 minutes of the engine's clock, not
// before; each re-scan is logged as a forget.physical report naming the
// request, status shows the latest beside the certified one, and a clean
// re-scan ends them and releases the bytes.
func TestRescan_RunsOnItsScheduleUntilClean(t *testing.T) {
	ctx := context.Background()
	layer := newRescanFake(1, 0)
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")

	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status)
	require.Len(t, st.PhysicalAddenda, 1)
	require.Equal(t, ledger.AddendumCertified, st.PhysicalAddenda[0].Kind)
	require.NotNil(t, st.PhysicalAddenda[0].NextAt)
	require.Nil(t, st.Layers[0].PhysicalLatest, "no re-scan yet")

	te.advance(9 * time.Minute)
	te.RescanDue(ctx)
	require.Zero(t, layer.count(), "not due before 10 minutes")

	te.advance(time.Minute)
	te.RescanDue(ctx)
	require.Equal(t, 1, layer.count())
	st, err = te.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest)
	require.Equal(t, ledger.AddendumRescan, latest.Kind)
	require.Equal(t, int64(1), latest.Physical.Holding())
	require.NotNil(t, latest.NextAt, "residue: another re-scan follows")
	require.NotNil(t, latest.LogIndex)
	require.Contains(t, latest.Note, "re-scan 1: bytes still in 1 of 4 pages scanned")

	te.advance(10 * time.Minute)
	te.RescanDue(ctx)
	st, err = te.Status(ctx, id)
	require.NoError(t, err)
	latest = st.Layers[0].PhysicalLatest
	require.Equal(t, int64(0), latest.Physical.Holding())
	require.Nil(t, latest.NextAt, "clean: no later re-scan")
	require.Contains(t, latest.Note, "re-scan 2: clean")
	require.Equal(t, []string{"alice"}, layer.released)

	te.advance(time.Hour)
	te.RescanDue(ctx)
	require.Equal(t, 2, layer.count(), "a clean layer is not re-scanned again")

	events := physicalEvents(t, te)
	require.Len(t, events, 2)
	for _, e := range events {
		require.Equal(t, id, e.RequestID)
	}
	require.Len(t, st.PhysicalAddenda, 3)
	report, err := certificate.VerifyReport(st.PhysicalAddenda[2].Report, te.cfg.Certifier.keys)
	require.NoError(t, err)
	require.Equal(t, certificate.EventPhysical, report.Kind)
	require.Equal(t, int64(4), report.Layers[0].Found)
	require.Equal(t, int64(0), report.Layers[0].Residual)
	require.NotContains(t, string(st.PhysicalAddenda[2].Report), "alice")
}

// TestRescan_DeadlineWithResidueIsStated: re-scans that still find the
// bytes stop at the request's deadline, and the last one says so.
func TestRescan_DeadlineWithResidueIsStated(t *testing.T) {
	ctx := context.Background()
	layer := newRescanFake(2, 2, 2, 2)
	te := newTestEngine(t, 25*time.Minute, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")
	for range 4 {
		te.advance(10 * time.Minute)
		te.RescanDue(ctx)
	}
	require.Equal(t, 2, layer.count(), "re-scans at 10 and 20 minutes; the next would pass the deadline")
	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.Nil(t, latest.NextAt)
	require.Contains(t, latest.Note, "the request's deadline")
	require.Contains(t, latest.Note, "bytes of the deleted records are still in 2 of 4 pages scanned")
	require.Equal(t, []string{"alice"}, layer.released)
}

// TestRescan_LostBytesAreStated: a layer that no longer holds the bytes
// ends the re-scans with not_possible and its reason, logged.
func TestRescan_LostBytesAreStated(t *testing.T) {
	ctx := context.Background()
	layer := newRescanFake()
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")
	te.advance(10 * time.Minute)
	te.RescanDue(ctx)
	st, err := te.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.Equal(t, ledger.AddendumLost, latest.Kind)
	require.Equal(t, connector.PhysicalNotPossible, latest.Physical.Status)
	require.Equal(t, "the bytes are gone", latest.Physical.Reason)
	require.Len(t, physicalEvents(t, te), 1)
}

// TestRescan_RestartStatesTheBytesLost: an engine that starts on the
// ledger of one whose re-scans were pending (a restart) does not hold the
// bytes; once the pending re-scan is a whole interval overdue it states
// them lost, with the reason, in the log and in status.
func TestRescan_RestartStatesTheBytesLost(t *testing.T) {
	ctx := context.Background()
	layer := newRescanFake(1)
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")

	cfg := te.cfg
	cfg.Owner = "" // another process
	restarted, err := New(cfg)
	require.NoError(t, err)
	defer restarted.Close()
	te.advance(10 * time.Minute)
	restarted.RescanDue(ctx)
	st, err := restarted.Status(ctx, id)
	require.NoError(t, err)
	require.Nil(t, st.Layers[0].PhysicalLatest, "due, but its engine may still run it")

	te.advance(10 * time.Minute)
	restarted.RescanDue(ctx)
	st, err = restarted.Status(ctx, id)
	require.NoError(t, err)
	latest := st.Layers[0].PhysicalLatest
	require.NotNil(t, latest)
	require.Equal(t, ledger.AddendumLost, latest.Kind)
	require.Contains(t, latest.Physical.Reason, "held in memory only and the proxy restarted")
	require.Zero(t, layer.count(), "the new engine has no bytes to look for")
	require.Len(t, physicalEvents(t, te), 1)

	restarted.RescanDue(ctx)
	require.Len(t, physicalEvents(t, te), 1, "stated once")
}
