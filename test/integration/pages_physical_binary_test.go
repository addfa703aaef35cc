//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
)

// TestPhysical_ConfigReportReachesForgetStatus: a table configured with
// physical: report in lethe-proxy's config gets its page scan after a
// forget through the CLI, and `forget status` shows it; the subject is in
// no log line.
func TestPhysical_ConfigReportReachesForgetStatus(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	gone := &pagesPerson{subject: "pages-binary-6d3e@example.com", vectors: make([][]float32, 4)}
	kept := &pagesPerson{subject: "pages-binary-kept@example.com", vectors: make([][]float32, 20)}
	pagesTable(t, direct, "pages_binary", 768, pagesIndexes, gone, kept)

	f := newForgetBinary(t, db, `    - {table: public.pages_binary, id: id, subjects: [owner], physical: report}`)
	f.start(t)
	_, p := f.forgetViaCLI(t, gone.subject)
	out, err := f.cli(t, "", "forget", "status", p.RequestID)
	require.NoError(t, err)
	var st struct {
		Layers []struct {
			Table    string              `json:"table"`
			Physical *connector.Physical `json:"physical"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st), out)
	require.Len(t, st.Layers, 1)
	require.NotNil(t, st.Layers[0].Physical, out)
	requireSameCounts(t, st.Layers[0].Physical, scanEveryPage(t, direct, "pages_binary", diskRuns(gone.vectors), gone.subject))
	require.False(t, strings.Contains(mustRead(t, f.cfg+".log"), "pages-binary-6d3e"), "the subject never reaches the logs")
}
