package pcapture_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
)

// recordingWatch is an LSNWatch that gives a fixed floor and keeps what
// it is told.
type recordingWatch struct {
	floor   uint64
	mu      sync.Mutex
	applied []pcapture.AppliedWrite
}

func (w *recordingWatch) Floor(string, string) uint64 { return w.floor }

func (w *recordingWatch) Applied(a pcapture.AppliedWrite) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.applied = append(w.applied, a)
}

func (w *recordingWatch) seen() []pcapture.AppliedWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]pcapture.AppliedWrite(nil), w.applied...)
}

// Each applied write reports its namespace, the floor given when it was
// sent and its answer's request LSN; a refused write reports nothing.
func TestWatchLSN_ReportsAppliedWritesWithTheirFloor(t *testing.T) {
	r := newRig(t, rigOptions{})
	watch := &recordingWatch{floor: 7}
	r.hook.WatchLSN(watch)
	c := http.DefaultClient
	require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/upsert", upsertAliceBob).status)
	require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/delete", `{"deleteAll":true,"namespace":"notes"}`).status)
	require.Equal(t, http.StatusOK, post(t, c, r.url, "/vectors/upsert", `{"vectors":[{"id":"c1","values":[0.1,0.2],"metadata":{"user_id":"carol"}}]}`).status)
	got := watch.seen()
	require.Len(t, got, 3)
	assert.Equal(t, pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: 7, RequestLSN: 1, HasLSN: true}, got[0])
	assert.Equal(t, pcapture.AppliedWrite{Index: "docs", Namespace: "notes", Floor: 7, RequestLSN: 2, HasLSN: true, Cleared: true}, got[1])
	assert.Equal(t, "__default__", got[2].Namespace)
	assert.Equal(t, uint64(1), got[2].RequestLSN, "the default namespace has its own sequence")

	r.core.Hold(ledger.StorePinecone, capture.Refusal{Code: capture.CodeRestored, Message: "restored", LogReason: "restored"})
	a := post(t, c, r.url, "/vectors/upsert", upsertAliceBob)
	assert.Equal(t, http.StatusServiceUnavailable, a.status, "a held store's write is refused UNAVAILABLE: it may be retried once replay ran")
	assert.Equal(t, 14, a.code)
	assert.Contains(t, a.message, "LT006")
	assert.Len(t, watch.seen(), 3, "a refused write reports no LSN")
}
