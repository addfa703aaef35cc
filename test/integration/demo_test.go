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
	// A file, which the demo writes itself: read at any time without a race.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer stderr.Close()
	cmd.Stderr = stderr
	stderrText := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	// One goroutine reads stdout to its end (the demo's exit), handing
	// the lines over; Wait is called only after it is done.
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	console := regexp.MustCompile(`^Console: +(http://\S+/console) `)
	var consoleURL string
	for line := range lines {
		if m := console.FindStringSubmatch(line); m != nil {
			consoleURL = m[1]
		}
		if strings.HasPrefix(line, "Serving until Ctrl-C") {
			break
		}
	}
	require.NotEmpty(t, consoleURL, "the demo printed no console address; stderr:\n%s", stderrText())
	drained := make(chan struct{})
	go func() {
		for range lines {
		}
		close(drained)
	}()

	resp, err := http.Get(consoleURL + "/login")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	assert.Contains(t, string(page), `type="password"`, "the login page asks for the token")

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	<-drained
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderrText())
}
