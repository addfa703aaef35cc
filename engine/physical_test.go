package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// physicalFake is a fakeLayer that scans its pages: it records the order
// of the engine's calls and which subject Physical was given.
type physicalFake struct {
	*fakeLayer
	calls    []string
	subjects []string
}

func (p *physicalFake) Cleanup(context.Context) error {
	p.calls = append(p.calls, "cleanup")
	return nil
}

func (p *physicalFake) Physical(_ context.Context, subject string) *connector.Physical {
	p.calls = append(p.calls, "physical")
	p.subjects = append(p.subjects, subject)
	return &connector.Physical{Status: connector.PhysicalScanned, Method: "fake pages", At: time.Unix(0, 0).UTC(),
		Relations: []connector.RelationPages{{Relation: "docs", Kind: "heap", Pages: 4, Scanned: 4, Holding: 1, HoldingSubject: 1, Coverage: "all"}}}
}

// TestForget_PhysicalAfterCleanupInStatus: a layer that scans its pages
// is asked once, after its cleanup, with the subject it deleted, and the
// request's status carries what it found.
func TestForget_PhysicalAfterCleanupInStatus(t *testing.T) {
	layer := &physicalFake{fakeLayer: &fakeLayer{name: "ns", present: []string{"a", "b"}}}
	te := newTestEngine(t, time.Hour, layer)
	te.record(t, "alice", ledger.Entry{Store: ledger.StorePinecone, Table: "ns", RecordID: "a"})
	id := te.forget(t, "alice")
	st, err := te.Status(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, ledger.ForgetCompleted, st.Status)
	require.Equal(t, []string{"cleanup", "physical"}, layer.calls)
	require.Equal(t, []string{"alice"}, layer.subjects)
	require.Len(t, st.Layers, 1)
	require.NotNil(t, st.Layers[0].Physical)
	require.Equal(t, int64(1), st.Layers[0].Physical.Holding())
	require.Equal(t, connector.PhysicalScanned, st.Layers[0].Physical.Status)
}
