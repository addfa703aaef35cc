package proxyopen

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/admin"
	"github.com/lethe-privacy/lethe/certificate/offline"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/test/pinecone/emulator"
)

// pineconeOnly writes a configuration with one Pinecone index (the
// emulator at indexURL) relayed on listen, an SQLite ledger in dir, and
// returns its path.
func pineconeOnly(t *testing.T, dir, indexURL, listen string) string {
	t.Helper()
	t.Setenv(ledgeropen.EnvSalt, strings.Repeat("ab", 32))
	t.Setenv("PROXYOPEN_TEST_KEY", "key")
	yaml := "shutdown_timeout: 5s\n" +
		"capture: {ledger: {sqlite: " + filepath.Join(dir, "ledger.db") + "}}\n" +
		"pinecone:\n  listen: " + listen + "\n  indexes:\n" +
		"    - {name: docs, host: \"" + indexURL + "\", api_key_env: PROXYOPEN_TEST_KEY, namespaces: [{namespace: \"*\", subjects: [user_id]}]}\n"
	path := filepath.Join(dir, "lethe.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startEmulator(t *testing.T) string {
	t.Helper()
	srv := emulator.New(emulator.Config{})
	url, err := srv.Start("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return url
}

// freeAddr is an address nothing listens on at the moment.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func upsertThrough(t *testing.T, addr string) int {
	t.Helper()
	body := `{"namespace":"notes","vectors":[{"id":"v1","values":[0.1,0.2],"metadata":{"user_id":"someone"}}]}`
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/vectors/upsert", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Api-Key", "key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Start opens the listener before it returns; Serve relays until its
// context ends, then returns nil (no listener failed), and Close frees
// the port.
func TestStart_ServesUntilTheContextEndsAndClosesItsListener(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	path := pineconeOnly(t, dir, startEmulator(t), addr)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := Start(ctx, cfg, path, log, Options{Version: "test", Tool: "proxyopen test"})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, func() {}, 5*time.Second, log) }()
	if code := upsertThrough(t, addr); code != http.StatusOK {
		t.Fatalf("upsert through the proxy: %d", code)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve after the context ended: %v, want nil", err)
	}
	p.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the listener is still open after Close: %v", err)
	}
	ln.Close()
}

// A start that fails after a listener was bound (the admin API's port
// taken, after the Pinecone relay's) names the key to change and closes
// what it opened: the relay's port is free again.
func TestStart_AFailedStartNamesTheKeyAndUnbindsWhatItBound(t *testing.T) {
	dir, addr, adminAddr := t.TempDir(), freeAddr(t), freeAddr(t)
	path := pineconeOnly(t, dir, startEmulator(t), addr)
	key := filepath.Join(dir, "signing.pem")
	if _, err := offline.GenerateKey(key, "lethe.local/forget-log"); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens.json")
	_, entry, err := admin.NewToken("ops", admin.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.AppendToken(tokens, entry); err != nil {
		t.Fatal(err)
	}
	forget := "forget: {signing_key: " + key + ", admin: {listen: \"" + adminAddr + "\", tokens_file: " + tokens + "}}\n"
	appendTo(t, path, forget)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", adminAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	_, err = Start(context.Background(), cfg, path, log, Options{})
	if err == nil || !strings.Contains(err.Error(), "forget.admin") {
		t.Fatalf("Start with forget.admin.listen taken: %v, want an error naming forget.admin", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("pinecone.listen is still bound after the failed start: %v", err)
	}
	ln.Close()
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// The demo's proxy: Stop after a clean serve is exit status 0 and Failed
// stays silent.
func TestStartBackground_StopReturnsZeroAndFailedStaysSilent(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	path := pineconeOnly(t, dir, startEmulator(t), addr)
	bg, err := StartBackground(context.Background(), path, func() {}, io.Discard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if code := upsertThrough(t, addr); code != http.StatusOK {
		t.Fatalf("upsert through the proxy: %d", code)
	}
	if code := bg.Stop(); code != 0 {
		t.Fatalf("Stop: exit %d, want 0", code)
	}
	select {
	case code := <-bg.Failed():
		t.Fatalf("Failed sent %d after Stop", code)
	default:
	}
}
