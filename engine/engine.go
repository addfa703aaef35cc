package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// Ledger is what the engine needs of the ledger: the tags and the journal.
type Ledger interface {
	ledger.Ledger
	ledger.Journal
	ledger.PhysicalAddenda
}

// An open ledger, whichever its backend, is a Ledger.
var _ Ledger = (*ledger.Handle)(nil)

// Config wires an Engine.
type Config struct {
	Ledger    Ledger
	Hasher    *ledger.Hasher
	Layers    []connector.Layer // every configured table and namespace: the certificate's scope
	Certifier *Certifier
	// Deadline is how long after receipt a request must be done (default
	// one month, GDPR Art. 12(3)); TokenTTL how long a preview's confirm
	// token stays valid (default 10 minutes).
	Deadline, TokenTTL time.Duration
	// Tombstoned is called when a subject is tombstoned (true) or its
	// tombstone lifted (false), so that the local proxy applies it at once.
	Tombstoned func(ledger.SubjectHash, bool)
	Logger     *slog.Logger
	Now        func() time.Time
	// Owner names this engine in request leases. A restarted instance
	// that keeps its name takes its requests back at once; another engine
	// waits for the lease to run out. Default: random per process.
	Owner string
	// Retries is how many times a layer is deleted and verified again
	// when rows are still present (writes in flight; default 3).
	Retries int
	// Settle, when set, waits until the ledger holds every write committed
	// so far (the WAL follower has caught up); preview and the check of
	// its token call it before counting.
	Settle func(context.Context) error
	// Horizons state, per store, when the copies a delete does not reach
	// (WAL, archives, backups, replicas, a provider's purge) are expected
	// to be gone; with any, certificates are v3 and carry the horizon.
	Horizons []connector.HorizonFunc
}

// Engine runs forgets. It is safe for concurrent use.
type Engine struct {
	cfg    Config
	owner  string // this engine's lease name
	token  []byte // confirm-token MAC key
	sealer sealer
	log    *slog.Logger

	mu      sync.Mutex
	running map[string]bool // requests this engine is working on
	wg      sync.WaitGroup
	ctx     context.Context
	stop    context.CancelFunc

	// rescans are the layers whose certified page scan found residue,
	// re-scanned later (physicalrescan.go).
	rescanMu sync.Mutex
	rescans  map[rescanKey]*rescanEntry
	// batches holds, per layer whose physical steps wait for a batch,
	// when its open batch is due (physicalbatch.go).
	batches map[batchKey]time.Time
}

// leaseFor is how long a request's lease lasts; the worker renews it
// between steps.
const leaseFor = 2 * time.Minute

// New returns an engine; Start begins resuming journaled requests.
func New(cfg Config) (*Engine, error) {
	if cfg.Ledger == nil || cfg.Hasher == nil || cfg.Certifier == nil {
		return nil, errors.New("engine: Ledger, Hasher and Certifier are required")
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = 30 * 24 * time.Hour
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 10 * time.Minute
	}
	if cfg.Retries <= 0 {
		cfg.Retries = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Tombstoned == nil {
		cfg.Tombstoned = func(ledger.SubjectHash, bool) {}
	}
	if cfg.Owner == "" {
		cfg.Owner = "engine-" + randomHex(8)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Engine{
		cfg: cfg, owner: cfg.Owner,
		token:  cfg.Hasher.Derive("confirm-token"),
		sealer: newSealer(cfg.Hasher.Derive("journal-subject")),
		log:    cfg.Logger, running: map[string]bool{}, ctx: ctx, stop: stop,
	}, nil
}

// Start resumes the requests left open in the journal (by a crash, or by
// another engine whose lease ran out) now and every interval, and runs
// the physical re-scans then due (RescanDue).
func (e *Engine) Start(interval time.Duration) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			e.Resume(e.ctx)
			e.RescanDue(e.ctx)
			select {
			case <-e.ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Resume starts work on every open request not already running here.
func (e *Engine) Resume(ctx context.Context) error {
	open, err := e.cfg.Ledger.OpenForgets(ctx)
	if err != nil {
		e.log.Warn("forget: cannot list open requests", "err", err)
		return err
	}
	for _, r := range open {
		e.spawn(r.ID)
	}
	return nil
}

// Close stops the workers and waits for them; an interrupted request
// resumes at the next Start.
func (e *Engine) Close() {
	e.stop()
	e.wg.Wait()
}

// Wait blocks until no request is running here (for tests and shutdown).
func (e *Engine) Wait() { e.wg.Wait() }

func (e *Engine) spawn(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running[id] || e.ctx.Err() != nil {
		return
	}
	e.running[id] = true
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer func() {
			e.mu.Lock()
			delete(e.running, id)
			e.mu.Unlock()
		}()
		if err := e.run(e.ctx, id); err != nil && e.ctx.Err() == nil {
			e.log.Warn("forget: request interrupted; it resumes later", "request", id, "err", err)
		}
	}()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (e *Engine) layer(store ledger.Store, name string) (connector.Layer, error) {
	for _, l := range e.cfg.Layers {
		if l.Store() == store && l.Name() == name {
			return l, nil
		}
	}
	return nil, fmt.Errorf("engine: layer %s %s is no longer configured; restore its rule to finish the request", store, name)
}
