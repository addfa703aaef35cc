package pcwing

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

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
	core     *capture.Capture
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

	// The scheduled scan (pinecone.scan_interval), set by Prepare.
	backstop *backstop
	// Recovery of pending intents, set by Listen (recover.go), run every
	// recoveryInterval (capture.recovery_interval).
	recovery         *recovery
	recoveryInterval time.Duration
	// The settler of deletes by filter (settle.go), set by Listen.
	settler *settler
	// Restore detection (restore.go): the watch, made by New with a
	// capture core, and its background work, started by Listen;
	// onRestore is capture.on_restore.
	restoreWatch *restoreWatch
	restore      *restoreRun
	onRestore    config.OnRestore

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
	w := &Wing{settings: cfg.Pinecone, log: log, getenv: os.Getenv, recoveryInterval: cfg.Capture.RecoveryInterval.D(),
		onRestore: cfg.Capture.OnRestore}
	if core != nil && len(cfg.Compiled().Pinecone) > 0 {
		w.hook = pcapture.New(core, cfg.Compiled().Pinecone)
		w.core = core
		w.restoreWatch = w.newRestoreWatch()
	}
	return w
}

// Name is "pinecone".
func (w *Wing) Name() string { return "pinecone" }

// Prepare makes nothing in the store; with pinecone.scan_interval and
// namespace rules it opens the backstop scan's connections (an https host
// without its API key stops the start here), which Serve starts.
func (w *Wing) Prepare(context.Context) error {
	interval := w.settings.ScanInterval.D()
	if w.core == nil || interval <= 0 || w.backstop != nil {
		return nil
	}
	scanners, indexes, err := w.scanners(true)
	if err != nil {
		return fmt.Errorf("pinecone.scan_interval: %w", err)
	}
	w.backstop = &backstop{core: w.core, scanners: scanners, indexes: indexes, interval: interval, log: w.log.With("backstop", "pinecone")}
	return nil
}

// Ready reports nil: the index hosts are not asked, so that a readiness
// probe never spends the operator's Pinecone quota; a host that is down
// shows in the relay's answers to the application.
func (w *Wing) Ready(context.Context) error { return nil }

// Metrics adds the backstop scan's counts, with pinecone.scan_interval,
// and the settler's of deletes by filter, with a capture core: the
// Pinecone adapter's own counts are the capture core's
// (capture.Stats), which the command adds once for every wing.
func (w *Wing) Metrics(m map[string]float64) {
	if w.settler != nil {
		w.settler.metrics(m)
	}
	b := w.backstop
	if b == nil {
		return
	}
	m["lethe_pinecone_backstop_scans_total"] = float64(b.scans.Load())
	m["lethe_pinecone_backstop_records_scanned_total"] = float64(b.scanned.Load())
	m["lethe_pinecone_backstop_records_recorded_total"] = float64(b.recorded.Load())
	m["lethe_pinecone_backstop_late_writes_total"] = float64(b.lateWrites.Load())
	m["lethe_pinecone_backstop_scan_failures_total"] = float64(b.failures.Load())
}

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
	if w.settler != nil {
		w.settler.halt() // before the backstop's connections it may share close
	}
	if w.backstop != nil {
		w.backstop.halt()
		w.backstop.close()
	}
	w.stopRecovery()
	w.stopRestoreWatch()
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
