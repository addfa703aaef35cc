package pgwing

import (
	"context"
	"log/slog"
	"net"
	"sync"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// Wing is the PostgreSQL wing of one proxy or command.
type Wing struct {
	cfg      *config.Config
	compiled *config.Compiled
	core     *capture.Capture // nil: a pure relay
	ledger   *ledger.Handle   // nil for a pure relay and the commands
	log      *slog.Logger

	// observer is the relay's view of capture; nil without capture.tables.
	observer *pgcapture.Observer
	// follower follows the slot; nil when capture.wal is off.
	follower *walfollow.Follower

	// Set by Listen.
	server   *pgwire.Server
	listener net.Listener // nil without postgres.upstream

	// Set by Prepare: the catalog's coverage checks (nil when nothing
	// reads the catalog).
	monitor *coverage.Monitor
	// work is the background work's context (recovery every
	// capture.recovery_interval, the catalog watch, the follower), ended
	// by stopWork at Shutdown or Close.
	work       context.Context
	stopWork   context.CancelFunc
	background sync.WaitGroup
	stopped    chan struct{} // closed by Shutdown: a Serve without listener returns

	mu     sync.Mutex
	forget *pgstore.Store // forget's connection, once Forget opened it
}

var _ connector.Wing = (*Wing)(nil)

// New builds the PostgreSQL wing of cfg, capturing through core with
// ledger l (both nil for a pure relay), or returns nil when cfg names no
// PostgreSQL server (no postgres.upstream, capture.tables or
// capture.store: a proxy for Pinecone alone); a caller that keeps wings
// as connector.Wing must test the *Wing before storing it. Nothing is
// read or dialled: files are read by Listen, the store reached by the
// methods that need it. log receives the wing's events; nil discards
// them.
func New(cfg *config.Config, core *capture.Capture, l *ledger.Handle, log *slog.Logger) (*Wing, error) {
	c := cfg.Capture
	if cfg.Postgres.Upstream == "" && len(c.Tables) == 0 && c.Store == "" {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	work, stopWork := context.WithCancel(context.Background())
	w := &Wing{cfg: cfg, compiled: cfg.Compiled(), ledger: l, log: log, stopped: make(chan struct{}), work: work, stopWork: stopWork}
	if core == nil || len(c.Tables) == 0 {
		return w, nil
	}
	w.core = core
	w.observer = pgcapture.New(core, pgcapture.Config{Database: c.Database, MaxStatementsInFlight: c.MaxStatementsInFlight})
	if cfg.Coverage.Mode == config.CoverageEnforce && cfg.Postgres.Upstream != "" && c.Store == "" {
		log.Warn("coverage.mode is enforce but the proxy cannot check coverage: it needs capture.tables and capture.store (lethe-proxy check works without capture.tables)")
	}
	if !c.Follows() {
		log.Warn("capture.wal is off: rows written around the proxy (migrations, other services, triggers, defaults, views, partitions) are not tagged (docs/wal.md)")
		return w, nil
	}
	fcfg := walfollow.Config{
		ConnString: c.Store, Name: c.WALSlot, Rules: w.compiled.Tables, Core: core, Ledger: l, Logger: log,
		DecodingMemKB: int64(c.WALDecodingMem) / 1024,
	}
	if r := core.Recent(); r != nil { // a nil *Recent in the interface would not be nil
		fcfg.Recent = r
	}
	if f := core.Followed(); f != nil {
		fcfg.Followed = f
	}
	var err error
	if w.follower, err = walfollow.New(fcfg); err != nil {
		return nil, err
	}
	return w, nil
}

// Name is "postgres".
func (w *Wing) Name() string { return "postgres" }

// Ready pings the store through forget's connection; nil before Forget
// opened one (no forget, or no capture.tables).
func (w *Wing) Ready(ctx context.Context) error {
	w.mu.Lock()
	store := w.forget
	w.mu.Unlock()
	if store == nil {
		return nil
	}
	return store.Ping(ctx)
}

// Metrics adds the follower's series, the number of tables written
// without intents, and the uncovered tables the catalog watch found.
func (w *Wing) Metrics(m map[string]float64) {
	if w.follower != nil {
		w.follower.Stats.Metrics(m)
	}
	if w.core != nil {
		if f := w.core.Followed(); f != nil {
			m["lethe_capture_followed_tables"] = float64(f.Len())
		}
	}
	if w.monitor != nil {
		m["lethe_coverage_uncovered_tables"] = float64(w.monitor.UncoveredTables())
	}
}

// Close releases the listener of a start that stopped before Serve, and
// forget's connection; it stops the background work too, for a start
// that stopped before Shutdown.
func (w *Wing) Close() {
	w.stopBackground()
	if w.listener != nil {
		w.listener.Close() // a listener never served is still open; a served one is closed already
	}
	w.mu.Lock()
	store := w.forget
	w.forget = nil
	w.mu.Unlock()
	if store != nil {
		store.Close()
	}
}

// stopBackground stops the follower, the recovery and the catalog watch,
// and waits for them; a second call returns at once.
func (w *Wing) stopBackground() {
	w.stopWork()
	w.background.Wait()
}
