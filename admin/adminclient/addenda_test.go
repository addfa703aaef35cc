package adminclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/engine"
)

// The addenda of a status, as the admin API sends it, are written one
// file per logged report, and `lethe-proxy verify --addendum` folds each
// into the certificate: here the shared vectors' certificate and re-scan.
func TestWriteAddenda_WritesEachLoggedReportForVerify(t *testing.T) {
	vectors := filepath.Join("..", "..", "certificate", "testdata", "vectors")
	report, err := os.ReadFile(filepath.Join(vectors, "addendum-re-scan-clean.json"))
	require.NoError(t, err)
	index := int64(7)
	status, err := json.Marshal(engine.Status{RequestID: "req-0042", PhysicalAddenda: []engine.PhysicalAddendum{
		{Kind: "certified", Store: "postgres", Table: "public.langchain_pg_embedding"},
		{Kind: "rescan", Store: "postgres", Table: "public.langchain_pg_embedding", LogIndex: &index, Report: report},
	}})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "addenda")
	files, err := WriteAddenda(status, dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "addendum-7.json")}, files)

	keysFile, err := os.ReadFile(filepath.Join(vectors, "keys.json"))
	require.NoError(t, err)
	keys, err := certificate.ParseKeySet(keysFile)
	require.NoError(t, err)
	cert, err := os.ReadFile(filepath.Join(vectors, "cert-v2-pages-scanned-still-hold-the-bytes.json"))
	require.NoError(t, err)
	written, err := os.ReadFile(files[0])
	require.NoError(t, err)
	got := certificate.VerifyWithAddenda(cert, []certificate.AddendumFile{{Name: files[0], Data: written}}, keys, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	require.True(t, got.Valid(), got.Reason)
	assert.True(t, got.AllFolded(), "%+v", got.Addenda)
	assert.Contains(t, got.Physical, "(certified) -> no bytes in 27 pages scanned")
}

func TestWriteAddenda_RefusesAnAnswerThatIsNotJSON(t *testing.T) {
	_, err := WriteAddenda([]byte("<html>"), t.TempDir())
	assert.ErrorContains(t, err, "not JSON")
}
