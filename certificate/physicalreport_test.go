package certificate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A later re-scan's report (forget.physical) names the forget whose pages
// it scanned as its run and its event, and counts pages: found scanned,
// done free of the bytes, residual still holding them.
func TestReport_PhysicalReportVerifiesAndNamesTheForget(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 8, 31, 0, 10, 0, 0, time.UTC)
	r := Report{Kind: EventPhysical, RunID: "0123456789abcdef0123456789abcdef", At: at, Layers: []ReportLayer{
		{Store: "postgres", Table: "public.docs", Found: 27, Done: 25, Residual: 2,
			Method: "re-scan 1: physical: report; public.docs (heap) 0 of 3 pages hold the bytes; public.docs_hnsw (hnsw) 2 of 24"},
	}}
	data := loggedReport(t, f.op, r)
	got, err := VerifyReport(data, f.keys)
	require.NoError(t, err)
	assert.Equal(t, EventPhysical, got.Kind)
	var sr SignedReport
	require.NoError(t, json.Unmarshal(data, &sr))
	e, err := ParseEvent(sr.Log.Leaf)
	require.NoError(t, err)
	assert.Equal(t, "0123456789abcdef0123456789abcdef", e.RequestID, "the event names the forget")
	assert.Equal(t, EventPhysical, e.Event)
	assert.Equal(t, `{"v":1,"event":"forget.physical","request_id":"0123456789abcdef0123456789abcdef","report_sha256":"`+sr.PayloadSHA256+`"}`, string(sr.Log.Leaf))
}
