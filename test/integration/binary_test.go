//go:build integration

package integration

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildProxy builds the lethe-proxy binary once per test run.
func buildProxy(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lethe-proxy")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lethe-proxy").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// freePort is a loopback address nothing listens on, with a port below
// Linux's ephemeral range (32768 and up): an ephemeral port, as ":0"
// gives, may be taken as the local port of any outgoing connection of
// this machine (a client of the test cluster) between this check and the
// proxy's bind.
func freePort(t *testing.T) string {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err == nil {
			defer ln.Close()
			return ln.Addr().String()
		}
	}
	t.Fatal("no free loopback port in 20000..31999")
	return ""
}

func TestBinary_ServesAndStopsGracefullyOnSIGTERM(t *testing.T) {
	db := loadTestDB(t)
	bin := buildProxy(t)

	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^lethe-proxy \S+\n$`, string(out))

	addr := freePort(t)
	cfg := filepath.Join(t.TempDir(), "lethe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"postgres:\n  listen: %s\n  upstream: %s\nlog:\n  format: json\nshutdown_timeout: 10s\n", addr, db.Addr())), 0o600))
	var logs lockedBuffer
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Stderr = &logs
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { suiteLogs.add(logs.String()) })
	t.Cleanup(func() { cmd.Process.Kill() })

	var conn net.Conn
	for range 100 {
		if conn, err = net.Dial("tcp", addr); err == nil {
			conn.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err, "proxy did not listen: %s", logs.String())
	c := connect(t, db.URL(addr, ""))
	var v string
	require.NoError(t, c.QueryRow(ctxT(t), "SELECT '[1,2]'::vector::text").Scan(&v))
	assert.Equal(t, "[1,2]", v)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-done:
		require.NoError(t, err, "exit status after SIGTERM; logs: %s", logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("proxy did not stop after SIGTERM; logs: %s", logs.String())
	}
	assert.Contains(t, logs.String(), `"msg":"stopped"`)
	assert.NotContains(t, logs.String(), "'[1,2]'", "statements never reach the logs")
}

func TestBinary_BadConfigNamesFileLineAndFix(t *testing.T) {
	bin := buildProxy(t)
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("postgres:\n  upstream: 127.0.0.1:5432\n  upstream_tls: maybe\n"), 0o600))
	out, err := exec.Command(bin, "serve", "--config", cfg).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), cfg+`:3: postgres.upstream_tls: "maybe" is not one of disable, require, verify-full`)

	out, err = exec.Command(bin, "serve").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "--config FILE is required")
}
