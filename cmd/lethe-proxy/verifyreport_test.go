package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/certificate"
)

// A sweep's signed report given to `lethe-proxy verify` is checked as a
// report: a genuine, logged one is valid and its counts are printed; one
// whose signature was altered is not.
func TestVerifyCmd_SignedReport(t *testing.T) {
	signer, err := certificate.GenerateKey(nil)
	require.NoError(t, err)
	cutoff := certIssued.AddDate(0, 0, -90)
	sr, err := certificate.SignReport(signer, certificate.Report{Kind: certificate.EventRetentionSwept, RunID: "sweep-1", At: certIssued,
		Layers: []certificate.ReportLayer{{Store: "postgres", Table: "public.docs", Found: 3, Done: 3, Method: "count", Cutoff: &cutoff}}})
	require.NoError(t, err)
	leaf, err := sr.Leaf()
	require.NoError(t, err)
	sr.AttachLog(leaf, 0, nil, oneLeafCheckpoint(t, signer, "log.example/cli", leaf))
	genuine, err := sr.Marshal()
	require.NoError(t, err)
	sr.Signature.Sig[0] ^= 1
	forged, err := sr.Marshal()
	require.NoError(t, err)
	keys, err := certificate.NewKeySet("log.example/cli", signer.TrustedKey(certIssued.AddDate(-1, 0, 0)))
	require.NoError(t, err)
	keyData, err := keys.MarshalJSON()
	require.NoError(t, err)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"keys.json": keyData, "genuine.json": genuine, "forged.json": forged} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}

	code, out, _ := certCLI("", "verify", "--keys", filepath.Join(dir, "keys.json"), filepath.Join(dir, "genuine.json"))
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict: valid\nreport: retention.swept sweep-1 at 2026-06-01T12:00:00Z, signed by a trusted key, transparency log index 0")
	assert.Contains(t, out, "postgres public.docs: found 3, done 3, residual 0, cutoff 2026-03-03T12:00:00Z")

	code, out, _ = certCLI("", "verify", "--keys", filepath.Join(dir, "keys.json"), filepath.Join(dir, "forged.json"))
	assert.Equal(t, 1, code)
	assert.True(t, strings.HasPrefix(out, "verdict: bad_signature\n"), out)
}
