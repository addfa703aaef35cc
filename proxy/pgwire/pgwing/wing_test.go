package pgwing

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lethe-privacy/lethe/config"
)

// parse compiles a configuration file's text as the commands load it.
func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse("lethe.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// relayOnly is a pure relay's config: nothing captured, nothing followed.
const relayOnly = "postgres: {listen: 127.0.0.1:0, upstream: 127.0.0.1:1}\n"

func newWing(t *testing.T, cfg *config.Config) *Wing {
	t.Helper()
	w, err := New(cfg, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w == nil {
		t.Fatal("no wing for a config with postgres.upstream")
	}
	t.Cleanup(w.Close)
	return w
}

// A proxy for Pinecone alone has no PostgreSQL wing: the command keeps no
// nil wing in its list.
func TestNew_NoWingForAProxyOfPineconeAlone(t *testing.T) {
	cfg := parse(t, "pinecone: {listen: 127.0.0.1:0, indexes: [{name: docs, host: 'http://127.0.0.1:1'}]}\n")
	w, err := New(cfg, nil, nil, nil)
	if err != nil || w != nil {
		t.Fatalf("New = %v, %v; want no wing", w, err)
	}
}

// Listen binds postgres.listen; Serve relays on it until Shutdown, which
// makes Serve return nil (not the listener's closing as a failure).
func TestWing_ServesUntilShutdown(t *testing.T) {
	w := newWing(t, parse(t, relayOnly))
	if err := w.Listen(); err != nil {
		t.Fatal(err)
	}
	if err := w.Prepare(context.Background()); err != nil {
		t.Fatalf("Prepare of a pure relay: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- w.Serve() }()
	conn, err := net.Dial("tcp", w.Addr().String())
	if err != nil {
		t.Fatalf("dialling the bound listener: %v", err)
	}
	conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown = %v, want nil", err)
	}
	// Asked of the listener itself: once its port is free, another
	// process of this machine may bind it and answer a dial.
	listener := w.listener.(*net.TCPListener)
	listener.SetDeadline(time.Now().Add(2 * time.Second)) // refused by a closed listener
	if _, err := listener.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Shutdown = %v, want the listener closed", err)
	}
}

// A port taken stops the start with the key to change, and a wing whose
// Listen failed serves nothing.
func TestListen_APortTakenNamesTheKey(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	w := newWing(t, parse(t, strings.Replace(relayOnly, "127.0.0.1:0", taken.Addr().String(), 1)))
	err = w.Listen()
	if err == nil || !strings.Contains(err.Error(), "postgres.listen") {
		t.Fatalf("Listen on a taken port = %v, want an error naming postgres.listen", err)
	}
	if w.Addr() != nil {
		t.Fatalf("a failed Listen left %v bound", w.Addr())
	}
}

// A file that does not load is named by its key before anything binds.
func TestListen_AMissingCertificateNamesTheKey(t *testing.T) {
	cfg := parse(t, relayOnly)
	cfg.Postgres.TLS.CertFile, cfg.Postgres.TLS.KeyFile = "/nonexistent/cert.pem", "/nonexistent/key.pem"
	w := newWing(t, cfg)
	if err := w.Listen(); err == nil || !strings.Contains(err.Error(), "postgres.tls") {
		t.Fatalf("Listen = %v, want an error naming postgres.tls", err)
	}
	if w.Addr() != nil {
		t.Fatal("a failed Listen left a listener bound")
	}
}

// Without capture.tables forget has nothing of this wing: an empty side
// that opens no connection and waits for nothing.
func TestForget_WithoutTablesIsAnEmptySide(t *testing.T) {
	w := newWing(t, parse(t, relayOnly))
	side, err := w.Forget(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(side.Layers) != 0 || side.Settle != nil {
		t.Fatalf("side = %+v, want no layers and no settle", side)
	}
	side.Close()
	if err := w.Ready(context.Background()); err != nil {
		t.Fatalf("Ready without forget's connection = %v, want nil", err)
	}
	m := map[string]float64{}
	w.Metrics(m)
	if len(m) != 0 {
		t.Fatalf("a pure relay's metrics = %v, want none", m)
	}
}
