//go:build integration

package integration

import (
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// servedProxy is `lethe-proxy serve` running for one test: its log and
// its exit.
type servedProxy struct {
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan error
}

// serveProxy starts bin serve --config cfg with the suite's subject salt
// and env added to the environment, and returns once listen accepts
// connections. The process is killed when the test ends and its log
// joins the suite's.
func serveProxy(t *testing.T, bin, cfg, listen string, env ...string) *servedProxy {
	t.Helper()
	p := &servedProxy{cmd: exec.Command(bin, "serve", "--config", cfg), logs: &lockedBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(append(os.Environ(), "LETHE_SUBJECT_SALT="+hex.EncodeToString(testSalt)), env...)
	p.cmd.Stderr = p.logs
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { suiteLogs.add(p.logs.String()) })
	t.Cleanup(func() { p.cmd.Process.Kill() })
	var err error
	for range 200 {
		var conn net.Conn
		if conn, err = net.Dial("tcp", listen); err == nil {
			conn.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err, "%s did not listen: %s", listen, p.logs.String())
	return p
}

// stop sends SIGTERM and requires the proxy to exit 0 within 20 s.
func (p *servedProxy) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "exit status after SIGTERM; logs: %s", p.logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("proxy did not stop after SIGTERM; logs: %s", p.logs.String())
	}
}
