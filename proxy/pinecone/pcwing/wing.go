package pcwing

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/controlplane"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcstore"
)

// Wing is the Pinecone wing of one proxy or command.
type Wing struct {
	settings config.Pinecone
	hook     *pcapture.Hook // nil for a pure relay, or without namespace rules
	log      *slog.Logger
	// getenv reads the indexes' API keys; os.Getenv outside tests.
	getenv func(string) string

	// Set by Listen.
	relay    *pinecone.Relay
	server   *http.Server
	listener net.Listener
	// The control-plane relay, with pinecone.control_plane.
	cpRelay    *controlplane.Relay
	cpServer   *http.Server
	cpListener net.Listener

	mu     sync.Mutex
	opened []*pcstore.Index // forget's index connections, until Close
}

var _ connector.Wing = (*Wing)(nil)

// New builds the Pinecone wing of cfg, capturing through core (nil for a
// pure relay), or returns nil when cfg configures no Pinecone index: a
// caller that keeps wings as connector.Wing must test the *Wing before
// storing it, so that no interface holds a nil wing. Nothing is read or
// dialled: files are read by Listen, index hosts reached by the methods
// that need them. log receives the wing's events; nil discards them.
func New(cfg *config.Config, core *capture.Capture, log *slog.Logger) *Wing {
	if len(cfg.Pinecone.Indexes) == 0 {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Wing{settings: cfg.Pinecone, log: log, getenv: os.Getenv}
	if core != nil && len(cfg.Compiled().Pinecone) > 0 {
		w.hook = pcapture.New(core, cfg.Compiled().Pinecone)
	}
	return w
}

// Name is "pinecone".
func (w *Wing) Name() string { return "pinecone" }

// Prepare does nothing: the wing makes nothing in its store before it
// serves.
func (w *Wing) Prepare(context.Context) error { return nil }

// Ready reports nil: the index hosts are not asked, so that a readiness
// probe never spends the operator's Pinecone quota; a host that is down
// shows in the relay's answers to the application.
func (w *Wing) Ready(context.Context) error { return nil }

// Metrics adds nothing: the Pinecone adapter's counts are the capture
// core's (capture.Stats), which the command adds once for every wing.
func (w *Wing) Metrics(map[string]float64) {}

// Close releases the relays' idle upstream connections, forget's index
// connections, and the listeners of a start that stopped before Serve.
func (w *Wing) Close() {
	for _, srv := range []*http.Server{w.server, w.cpServer} {
		if srv != nil {
			srv.Close() // cuts what Shutdown left; a no-op after it
		}
	}
	for _, ln := range []net.Listener{w.listener, w.cpListener} {
		if ln != nil {
			ln.Close() // only a listener never served is still open
		}
	}
	if w.relay != nil {
		w.relay.Close()
	}
	if w.cpRelay != nil {
		w.cpRelay.Close()
	}
	w.closeIndexes()
}

// keep records indexes opened for forget, for Close.
func (w *Wing) keep(indexes []*pcstore.Index) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.opened = append(w.opened, indexes...)
}

// closeIndexes closes every index forget opened; a second call finds none.
func (w *Wing) closeIndexes() {
	w.mu.Lock()
	opened := w.opened
	w.opened = nil
	w.mu.Unlock()
	for _, ix := range opened {
		ix.Close()
	}
}
