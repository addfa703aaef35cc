package certificate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replay's report (lethe-proxy replay) names the forget it replayed as
// its run and its event, counts what came back, and may state a residual.
func TestReport_ReplayReportVerifiesAndNamesTheForget(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	r := Report{Kind: EventReplayed, RunID: "0123456789abcdef0123456789abcdef", At: at, Layers: []ReportLayer{
		{Store: "postgres", Table: "public.docs", Found: 3, Done: 3, Method: "scan, then DELETE by the forget's queries"},
		{Store: "postgres", Table: "public.notes", Found: 1, Done: 0, Residual: 1, Method: "scan"},
	}}
	data := loggedReport(t, f.op, r)
	got, err := VerifyReport(data, f.keys)
	require.NoError(t, err)
	assert.Equal(t, EventReplayed, got.Kind)
	var sr SignedReport
	require.NoError(t, json.Unmarshal(data, &sr))
	e, err := ParseEvent(sr.Log.Leaf)
	require.NoError(t, err)
	assert.Equal(t, "0123456789abcdef0123456789abcdef", e.RequestID, "the event names the replayed forget")
	assert.Equal(t, EventReplayed, e.Event)

	cutoff := at
	r.Layers[0].Cutoff = &cutoff
	_, err = SignReport(f.op, r)
	require.ErrorContains(t, err, "only a sweep's layer has a cutoff")
}
