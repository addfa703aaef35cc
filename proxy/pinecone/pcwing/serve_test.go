package pcwing

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// started is a wing of yaml (whose index hosts are the emulator at url)
// listening on a free port and serving; it returns the wing, the relay's
// URL, and Serve's result.
func started(t testing.TB, w *Wing) (string, <-chan error) {
	t.Helper()
	if err := w.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- w.Serve() }()
	return "http://" + w.Addr().String(), served
}

func upsert(t *testing.T, relay, namespace, userID string) {
	t.Helper()
	body := `{"namespace":"` + namespace + `","vectors":[{"id":"v-` + userID + `","values":[0.1,0.2],"metadata":{"user_id":"` + userID + `"}}]}`
	resp, err := http.Post(relay+"/vectors/upsert", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upsert through the relay: %s", resp.Status)
	}
}

const relayYAML = `pinecone:
  listen: "127.0.0.1:0"
  indexes: [{name: docs, host: "%s", namespaces: [{namespace: "*", subjects: [user_id]}]}]
`

func relayConfig(t *testing.T, url string) *config.Config {
	return parse(t, strings.Replace(relayYAML, "%s", url, 1))
}

// capturingWing is a wing over the emulator at url that captures every
// namespace's writes through a core over a fresh SQLite ledger.
func capturingWing(t *testing.T, url string) (*Wing, *capture.Capture) {
	t.Helper()
	l, err := ledger.OpenSQLite(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	hasher, err := ledger.NewHasher([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := relayConfig(t, url)
	core := capture.New(capture.Config{Rules: cfg.Compiled().Tables, Ledger: l, Hasher: hasher,
		Tombstones: capture.NewTombstones(), ConfirmHold: time.Millisecond})
	t.Cleanup(core.Close)
	w := New(cfg, core, nil)
	t.Cleanup(w.Close)
	return w, core
}

// The wing relays until Shutdown, then Serve returns nil, and the relay's
// writes are captured through the adapter New built over the core.
func TestServe_CapturesThroughTheCoreUntilShutdown(t *testing.T) {
	w, core := capturingWing(t, startEmulator(t, emulator.Config{}))
	relay, served := started(t, w)
	upsert(t, relay, "notes", "alice")
	if n := core.Stats.Intents.Load(); n != 1 {
		t.Fatalf("%d intents; want 1: the wing's relay did not capture through the core", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve returned %v after Shutdown; want nil", err)
	}
}

// Without a core the wing is a plain relay: writes pass, nothing is
// captured.
func TestServe_PureRelayWithoutACore(t *testing.T) {
	url := startEmulator(t, emulator.Config{})
	w := New(relayConfig(t, url), nil, nil)
	defer w.Close()
	if w.hook != nil {
		t.Fatal("a wing without a core built a capture adapter")
	}
	relay, _ := started(t, w)
	upsert(t, relay, "notes", "alice")
}

// A request still busy when Shutdown's ctx ends is cut: its client sees
// the connection closed, and Shutdown returns.
func TestShutdown_CutsBusyConnectionsAfterTheTimeout(t *testing.T) {
	// Capturing, so that the relay reads a write's body into memory,
	// which shows when the request is in it.
	w, _ := capturingWing(t, startEmulator(t, emulator.Config{}))
	_, served := started(t, w)
	conn, err := net.Dial("tcp", w.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A body that never finishes arriving keeps the request in the relay.
	if _, err := conn.Write([]byte("POST /vectors/upsert HTTP/1.1\r\nHost: docs\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"vec")); err != nil {
		t.Fatal(err)
	}
	// Shutdown must find the request in the relay, reading its body.
	for wait := time.Now().Add(30 * time.Second); w.relay.BufferedBytes() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatal("the relay never started reading the body")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// Generous: a connection left open would hold this read until the
	// relay's 60 s body timeout.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := bufio.NewReader(conn).ReadString('\n'); err == nil || isTimeout(err) {
		t.Fatalf("read %v; want the connection cut by Shutdown", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve returned %v after Shutdown; want nil", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
