//go:build integration

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo_RunForgetsAliceWithAValidCertificate: README command 1 with
// --run, from an empty directory and nothing else set up, exits 0 with
// a valid certificate for alice; run again in the same state directory
// (alice forgotten by the first run) it exits 0 again with the same
// signing key; demo --clean removes the directory.
func TestDemo_RunForgetsAliceWithAValidCertificate(t *testing.T) {
	bin := buildProxy(t)
	work := t.TempDir()
	demo := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"demo"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME=", "LETHE_SUBJECT_SALT=", "LETHE_SUBJECT_SALT_FILE=", "DATABASE_URL=")
		out, err := cmd.CombinedOutput()
		if exitErr, ok := err.(*exec.ExitError); ok {
			return string(out), exitErr.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	out, code := demo("--run")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict: valid")
	assert.Contains(t, out, "pinecone demo/*: 2 rows", "the preview finds alice's two sample memories")
	assert.Contains(t, out, "forget run --admin http://127.0.0.1:", "prints the CLI line")
	stateDir := filepath.Join(work, "lethe-demo")
	key, err := os.ReadFile(filepath.Join(stateDir, "signing.pem"))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(stateDir, "certificate-alice.json"))

	out, code = demo("--run")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "verdict: valid")
	assert.Contains(t, out, "alice was forgotten in an earlier run")
	again, err := os.ReadFile(filepath.Join(stateDir, "signing.pem"))
	require.NoError(t, err)
	assert.Equal(t, key, again, "the state directory's key is reused")

	out, code = demo("--clean")
	require.Equal(t, 0, code, out)
	assert.NoDirExists(t, stateDir)
}
