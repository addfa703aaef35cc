//go:build integration

package integration

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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

// TestDemo_ServesTheConsoleItPrints: README command 1 without --run keeps
// serving and prints where the console is; that address answers with the
// console's login page, and Ctrl-C stops the demo with exit status 0.
func TestDemo_ServesTheConsoleItPrints(t *testing.T) {
	bin := buildProxy(t)
	cmd := exec.Command(bin, "demo")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME=", "LETHE_SUBJECT_SALT=", "LETHE_SUBJECT_SALT_FILE=", "DATABASE_URL=")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	console := regexp.MustCompile(`^Console: +(http://\S+/console) `)
	var consoleURL string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := console.FindStringSubmatch(lines.Text()); m != nil {
			consoleURL = m[1]
		}
		if strings.HasPrefix(lines.Text(), "Serving until Ctrl-C") {
			break
		}
	}
	require.NotEmpty(t, consoleURL, "the demo printed no console address; stderr:\n%s", stderr.String())
	go io.Copy(io.Discard, stdout)

	resp, err := http.Get(consoleURL + "/login")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	assert.Contains(t, string(page), `type="password"`, "the login page asks for the token")

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
}
