//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
)

// TestPhysical_ConfigReportReachesForgetStatus: a table configured with
// physical: report in lethe-proxy's config gets its page scan after a
// forget through the CLI, and `forget status` shows it; its certificate is
// a lethe.certificate/v3 carrying the same counts, which `lethe-proxy
// verify` and node verify.mjs print as the same physical line beside
// valid; the subject is in no log line.
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
	counts := scanEveryPage(t, direct, "pages_binary", diskRuns(gone.vectors), gone.subject)
	requireSameCounts(t, st.Layers[0].Physical, counts)

	// The certificate states what forget status shows; the proxy's
	// wings state a horizon, so it is v3 (v2 with the horizon).
	require.Equal(t, certificate.SchemaV3, p.Schema)
	require.NotEmpty(t, p.Horizon)
	require.Equal(t, certificate.HorizonPGWAL, p.Horizon[0].Copy)
	require.Len(t, p.Layers, 1)
	requireSameCounts(t, asConnector(p.Layers[0].Physical), counts)
	_, _, holding, _ := p.Layers[0].Physical.Totals()
	require.Positive(t, holding, "the HNSW index keeps the deleted vectors: the certificate must say so")
	require.Contains(t, p.Claim.Statement, "found bytes of the deleted records still in")
	certFile := filepath.Join(f.dir, p.RequestID+".json")
	_, err = f.cli(t, "", "forget", "certificate", p.RequestID, "--out", certFile)
	require.NoError(t, err)
	wantLine := "physical: " + certificate.PhysicalSummary(&p) + "\n"
	require.Contains(t, wantLine, fmt.Sprintf(": %d of ", holding))
	goOut, err := f.cli(t, "", "verify", "--keys", filepath.Join(f.dir, "keys.json"), certFile)
	require.NoError(t, err, goOut)
	require.True(t, strings.HasPrefix(goOut, "verdict: valid\n"+wantLine), goOut)
	t.Logf("lethe-proxy verify:\n%s", goOut)
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is not installed: run scripts/setup.sh")
	nodeOut, err := exec.Command(node, filepath.Join("..", "..", "certificate", "node", "verify.mjs"),
		filepath.Join(f.dir, "keys.json"), certFile).CombinedOutput()
	require.NoError(t, err, "%s", nodeOut)
	require.True(t, strings.HasPrefix(string(nodeOut), "verdict: valid\n"+wantLine), "%s", nodeOut)
	require.NotContains(t, mustRead(t, certFile), "pages-binary-6d3e", "the subject is never in a certificate")
	require.False(t, strings.Contains(mustRead(t, f.cfg+".log"), "pages-binary-6d3e"), "the subject never reaches the logs")
}

// asConnector is a certificate's physical section as forget status shows
// it, to compare with an independent reading.
func asConnector(ph *certificate.Physical) *connector.Physical {
	out := &connector.Physical{Status: ph.Status, Reason: ph.Reason, Method: ph.Method, At: ph.At}
	for _, r := range ph.Relations {
		out.Relations = append(out.Relations, connector.RelationPages{Relation: r.Relation, Kind: r.Kind, Pages: r.Pages,
			Scanned: r.Scanned, Holding: r.Holding, HoldingVector: r.HoldingVector, HoldingSubject: r.HoldingSubject,
			Coverage: r.Coverage, TookMS: r.TookMS})
	}
	return out
}
