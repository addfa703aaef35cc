package replay

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

func printed() (Result, map[string]string) {
	res := Result{Requests: []Request{
		{RequestID: "fr-1", LogIndex: 7, Layers: []Layer{{Store: ledger.StorePostgres, Table: "public.docs", Found: 2, Deleted: 2}}},
		{RequestID: "fr-2", LogIndex: 8, Layers: []Layer{{Store: ledger.StorePinecone, Table: "docs/notes"}}},
	}, Skipped: []Skipped{{RequestID: "fr-3", Reason: "its forget failed"}}}
	return res, map[string]string{"fr-1": "/tmp/replay-fr-1.json"}
}

// The text names each request by id, says when nothing came back, gives
// each layer's counts and the report file, and why a request was skipped.
func TestResult_WriteTextPerRequestLayerReportAndSkipped(t *testing.T) {
	res, files := printed()
	var out bytes.Buffer
	res.WriteText(&out, files)
	assert.Equal(t, "request fr-1: replayed\n"+
		"  postgres public.docs                      found 2  deleted 2  residual 0\n"+
		"  report /tmp/replay-fr-1.json: signed, transparency log index 7\n"+
		"request fr-2: replayed: nothing of the subject came back\n"+
		"  pinecone docs/notes                       found 0  deleted 0  residual 0\n"+
		"request fr-3: not replayed: its forget failed\n", out.String())

	out.Reset()
	Result{DryRun: true}.WriteText(&out, nil)
	assert.Equal(t, "no completed forget to replay\n", out.String())
}

// The JSON is the Result's, each request with its report file when one
// was written.
func TestResult_WriteJSONAddsEachRequestsReportFile(t *testing.T) {
	res, files := printed()
	var out bytes.Buffer
	res.WriteJSON(&out, files)
	var doc struct {
		Requests []struct {
			RequestID  string `json:"request_id"`
			LogIndex   int64  `json:"log_index"`
			ReportFile string `json:"report_file"`
		} `json:"requests"`
		Skipped []Skipped `json:"skipped"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), out.String())
	require.Len(t, doc.Requests, 2)
	assert.Equal(t, "/tmp/replay-fr-1.json", doc.Requests[0].ReportFile)
	assert.Equal(t, int64(7), doc.Requests[0].LogIndex)
	assert.Empty(t, doc.Requests[1].ReportFile)
	assert.Equal(t, []Skipped{{RequestID: "fr-3", Reason: "its forget failed"}}, doc.Skipped)
}
