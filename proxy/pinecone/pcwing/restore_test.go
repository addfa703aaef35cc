package pcwing

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
)

// fakeProber answers each namespace's reads with the LSNs in reads, one
// per read (the last one repeated); none answers without the header.
type fakeProber struct {
	mu    sync.Mutex
	reads map[string][]uint64
	none  bool
}

func (f *fakeProber) Namespaces(context.Context) ([]string, error) {
	var out []string
	for ns := range f.reads {
		out = append(out, ns)
	}
	return out, nil
}

func (f *fakeProber) IndexedLSN(_ context.Context, ns string) (uint64, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.none {
		return 0, false, nil
	}
	r := f.reads[ns]
	if len(r) == 0 {
		return 0, true, nil
	}
	lsn := r[0]
	if len(r) > 1 {
		f.reads[ns] = r[1:]
	}
	return lsn, true, nil
}

// restoreRig is one proxy run's restore watch over the ledger at path,
// for index "docs" at host.
type restoreRig struct {
	rw     *restoreWatch
	core   *capture.Capture
	ledger *ledger.SQLite
}

func newRestoreRig(t *testing.T, path, host string, on config.OnRestore) *restoreRig {
	t.Helper()
	l, err := ledger.OpenSQLite(path, ledger.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	hasher, err := ledger.NewHasher(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	core := capture.New(capture.Config{Hasher: hasher})
	t.Cleanup(core.Close)
	rw := newRestoreWatch(l, core, on, map[string]string{"docs": host}, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, rw.checkHosts(context.Background()))
	return &restoreRig{rw: rw, core: core, ledger: l}
}

// start probes like a start with reads, then records the marks.
func (r *restoreRig) start(t *testing.T, reads map[string][]uint64) {
	t.Helper()
	r.rw.probe(context.Background(), "docs", &fakeProber{reads: reads}, nil)
	require.NoError(t, r.rw.flush(context.Background()))
}

// write reports one applied write to ns, sent with the floor the watch
// gives now, answered with lsn.
func (r *restoreRig) write(ns string, lsn uint64) {
	floor := r.rw.Floor("docs", ns)
	r.rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: ns, Floor: floor, RequestLSN: lsn, HasLSN: true})
}

func (r *restoreRig) mark(t *testing.T, key string) ledger.StoreSeen {
	t.Helper()
	seen, ok, err := r.ledger.StoreSeen(context.Background(), key)
	require.NoError(t, err)
	require.True(t, ok, "no mark %s", key)
	return seen
}

// heldCode is the code a held Pinecone write is refused with; "" when
// writes pass.
func (r *restoreRig) heldCode() string {
	if !r.core.Held(ledger.StorePinecone) {
		return ""
	}
	_, refusal := r.core.Prepare(ledger.StorePinecone, []extract.Tag{{Table: "docs/notes", Op: extract.OpWrite, ID: "a1", Subjects: []string{"alice"}}})
	if refusal == nil {
		return "held, but no refusal"
	}
	return refusal.Code
}

// A first start records each namespace's LSN and raises nothing; a
// restart that reads the same LSN raises nothing either.
func TestRestoreWatch_FirstStartRecordsAndRestartRaisesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	first := newRestoreRig(t, path, "docs.example:443", config.OnRestoreRefuse)
	first.start(t, map[string][]uint64{"notes": {12}})
	assert.Equal(t, uint64(12), first.mark(t, "pinecone://docs/notes").WAL)
	assert.Equal(t, "docs.example:443", first.mark(t, "pinecone://docs").System)
	assert.Empty(t, first.heldCode())
	first.write("notes", 13)
	require.NoError(t, first.rw.flush(context.Background()))
	assert.Equal(t, uint64(13), first.mark(t, "pinecone://docs/notes").WAL)

	again := newRestoreRig(t, path, "docs.example:443", config.OnRestoreRefuse)
	again.start(t, map[string][]uint64{"notes": {13}})
	assert.Empty(t, again.heldCode())
	assert.Empty(t, again.mark(t, "pinecone://docs/notes").Restore)
}

// An index re-created behind the proxy's back: at start its reads stay
// behind the mark, at runtime a write's LSN is behind the floor. Writes
// are held (LT006) until lethe-proxy replay clears the marks, across
// restarts; with capture.on_restore: warn nothing is held.
func TestRestoreWatch_RecreatedIndexHoldsWritesUntilReplay(t *testing.T) {
	for _, when := range []string{"at start", "at runtime"} {
		t.Run(when, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "ledger.db")
			before := newRestoreRig(t, path, "docs.example:443", config.OnRestoreRefuse)
			before.start(t, map[string][]uint64{"notes": {40}})

			r := newRestoreRig(t, path, "docs.example:443", config.OnRestoreRefuse)
			if when == "at start" {
				r.start(t, map[string][]uint64{"notes": {2, 2}})
			} else {
				r.start(t, map[string][]uint64{"notes": {40}})
				r.write("notes", 3)
				require.NoError(t, r.rw.flush(ctx))
			}
			assert.Equal(t, capture.CodeRestored, r.heldCode())
			mark := r.mark(t, "pinecone://docs/notes")
			assert.Contains(t, mark.Restore, `index "docs" namespace "notes"`)
			assert.Contains(t, mark.Restore, "behind LSN 40")
			assert.NotEmpty(t, r.mark(t, "pinecone://docs").Restore)

			restarted := newRestoreRig(t, path, "docs.example:443", config.OnRestoreRefuse)
			assert.Equal(t, capture.CodeRestored, restarted.heldCode(), "the restore waits for replay across restarts")

			_, err := restarted.ledger.ClearRestores(ctx) // lethe-proxy replay ran
			require.NoError(t, err)
			require.NoError(t, restarted.rw.flush(ctx))
			assert.Empty(t, restarted.heldCode(), "released once replay ran")
			restarted.write("notes", 5)
			restarted.write("notes", 6)
			require.NoError(t, restarted.rw.flush(ctx))
			assert.Empty(t, restarted.heldCode(), "the new sequence is the mark now")
		})
	}
}

func TestRestoreWatch_WarnOnlyLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	newRestoreRig(t, path, "h:443", config.OnRestoreWarn).start(t, map[string][]uint64{"notes": {40}})
	r := newRestoreRig(t, path, "h:443", config.OnRestoreWarn)
	r.start(t, map[string][]uint64{"notes": {40}})
	r.write("notes", 1)
	require.NoError(t, r.rw.flush(context.Background()))
	assert.NotEmpty(t, r.mark(t, "pinecone://docs/notes").Restore, "recorded, for replay")
	assert.Empty(t, r.heldCode(), "warn never holds")
}

// Another host under the index's name is another index.
func TestRestoreWatch_ChangedHostHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	newRestoreRig(t, path, "docs-abc.svc.pinecone.io", config.OnRestoreRefuse)
	r := newRestoreRig(t, path, "docs-restored-abc.svc.pinecone.io", config.OnRestoreRefuse)
	assert.Equal(t, capture.CodeRestored, r.heldCode())
	assert.Contains(t, r.mark(t, "pinecone://docs").Restore, "host changed from docs-abc.svc.pinecone.io to docs-restored-abc.svc.pinecone.io")
}

// What is not a restore: a read answered by a replica that lags the mark
// and catches up within pinecone.verify_deadline; writes answered out of
// order; another namespace's lower sequence; a namespace the application
// emptied and writes again.
func TestRestoreWatch_LagAndOtherNamespacesRaiseNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	newRestoreRig(t, path, "h:443", config.OnRestoreRefuse).start(t, map[string][]uint64{"notes": {40}})
	r := newRestoreRig(t, path, "h:443", config.OnRestoreRefuse)
	r.start(t, map[string][]uint64{"notes": {38, 41}}) // behind, then caught up
	assert.Empty(t, r.heldCode(), "a lagging read that catches up")

	// Two writes sent before either answer was read, answered out of order.
	floorA, floorB := r.rw.Floor("docs", "notes"), r.rw.Floor("docs", "notes")
	r.rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: floorB, RequestLSN: 43, HasLSN: true})
	r.rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: floorA, RequestLSN: 42, HasLSN: true})
	r.write("other", 1)                  // its own sequence
	stale := r.rw.Floor("docs", "notes") // a write sent before the namespace was emptied
	r.rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: stale, RequestLSN: 44, HasLSN: true, Cleared: true})
	r.write("notes", 1) // emptied through the proxy: starts afresh
	r.rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: stale, RequestLSN: 2, HasLSN: true})
	require.NoError(t, r.rw.flush(ctx))
	assert.Empty(t, r.heldCode())
	assert.Empty(t, r.mark(t, "pinecone://docs/notes").Restore)
	assert.Equal(t, uint64(2), r.mark(t, "pinecone://docs/notes").WAL)
}

// Answers without LSN headers give no signal, logged once.
func TestRestoreWatch_NoLSNHeadersTurnTheSignalOff(t *testing.T) {
	r := newRestoreRig(t, filepath.Join(t.TempDir(), "ledger.db"), "h:443", config.OnRestoreRefuse)
	r.rw.probe(context.Background(), "docs", &fakeProber{none: true, reads: map[string][]uint64{"notes": nil}}, nil)
	r.rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: 9})
	assert.True(t, r.rw.indexes["docs"].noLSN)
	assert.Empty(t, r.heldCode())
}

// BenchmarkRestoreWatch_FloorAndApplied is what restore detection adds to
// one write on the relay's path once its namespace's mark is loaded.
func BenchmarkRestoreWatch_FloorAndApplied(b *testing.B) {
	l, err := ledger.OpenSQLite(filepath.Join(b.TempDir(), "ledger.db"), ledger.Options{})
	require.NoError(b, err)
	defer l.Close()
	core := capture.New(capture.Config{})
	defer core.Close()
	rw := newRestoreWatch(l, core, config.OnRestoreRefuse, map[string]string{"docs": "h:443"}, 0, slog.New(slog.DiscardHandler))
	rw.Floor("docs", "notes")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			floor := rw.Floor("docs", "notes")
			rw.Applied(pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: floor, RequestLSN: floor + 1, HasLSN: true})
		}
	})
}

// An index restored while nothing writes through the proxy: with an
// interval, the probe that follows the restore reads the namespace behind
// its mark, confirms it, and holds writes; without one only the probe at
// start reads it.
func TestRestoreWatch_ProbesAgainEveryInterval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRestoreRig(t, filepath.Join(t.TempDir(), "ledger.db"), "docs.example:443", config.OnRestoreRefuse)
	prober := &fakeProber{reads: map[string][]uint64{"notes": {40, 41, 2}}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.rw.probeEvery(ctx, "docs", prober, nil, time.Millisecond)
	}()
	// The probe holds writes before a flush records the restore on the
	// mark, so both are waited for.
	require.Eventually(t, func() bool {
		require.NoError(t, r.rw.flush(ctx))
		seen, _, err := r.ledger.StoreSeen(ctx, "pinecone://docs/notes")
		require.NoError(t, err)
		return r.heldCode() == capture.CodeRestored && seen.Restore != ""
	}, 30*time.Second, 5*time.Millisecond, "the restore after start is seen by a later probe")
	assert.Contains(t, r.mark(t, "pinecone://docs/notes").Restore, "behind LSN 41")
	cancel()
	<-done

	once := newRestoreRig(t, filepath.Join(t.TempDir(), "ledger.db"), "docs.example:443", config.OnRestoreRefuse)
	once.rw.probeEvery(context.Background(), "docs", &fakeProber{reads: map[string][]uint64{"notes": {40, 2}}}, nil, 0)
	require.NoError(t, once.rw.flush(context.Background()))
	assert.Empty(t, once.heldCode(), "without an interval only the probe at start reads")
}
