package capture

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// Mode says what happens to a write to a configured table whose rows
// cannot be attributed from the statement.
type Mode string

const (
	// Strict refuses such writes with SQLSTATE CodeUnattributed (default).
	Strict Mode = "strict"
	// Permissive forwards them and records an unattributed write of the table.
	Permissive Mode = "permissive"
)

// Config wires a Capture.
type Config struct {
	// Rules are the rules to start with; SetRules replaces them.
	Rules  *extract.Rules
	Ledger ledger.Ledger
	Hasher *ledger.Hasher
	Mode   Mode
	// FailOpen forwards writes whose intent the ledger could not take,
	// logging each loudly and counting it in Stats.UntrackedWrites.
	FailOpen bool
	// IntentTimeout bounds waiting for the ledger per write (default 5s).
	IntentTimeout time.Duration
	Logger        *slog.Logger
	// Tombstones are the forgotten subjects; nil means none.
	Tombstones *Tombstones
	// FlagForgotten forwards writes about forgotten subjects (logging and
	// counting them in Stats.ForgottenWrites) instead of refusing them.
	FlagForgotten bool
	// ConfirmHold is how long confirmations are held to be committed
	// together (default DefaultConfirmHold).
	ConfirmHold time.Duration
	// Recent, when set, remembers the records of durable intents (and of
	// followed writes) for the WAL follower to compare with what the
	// server stored.
	Recent *Recent
	// Followed, when set, names the tables a WAL follower streams in
	// full: writes to them are forwarded without a write-ahead intent,
	// since the slot holds every committed row until the ledger has it.
	// Nil makes an intent for every write.
	Followed *Followed
	// Observer is the ledger a follower of committed rows records its
	// changes in (Observe); nil without a follower. With a ledger.Handle
	// it is the same handle as Ledger.
	Observer ledger.Observer
	// Holder is the ledger a scanning follower (the Pinecone wing's
	// backstop) asks which records it holds already (Holds), so that it
	// records only what the ledger lacks; nil without one. With a
	// ledger.Handle it is the same handle as Ledger.
	Holder ledger.Holder
	// DeleteLateWrites hands a follower's late writes to the sink
	// registered with OnLateWrite (forget.late_writes: delete); false logs
	// them only (flag, or no forget configured).
	DeleteLateWrites bool
}

// Stats are counters for metrics.
type Stats struct {
	Intents         atomic.Int64 // intents made durable
	Followed        atomic.Int64 // writes to followed tables forwarded without an intent (Config.Followed)
	Refused         atomic.Int64 // writes refused (strict mode, ledger down, forgotten subject, a relay's own limits)
	UntrackedWrites atomic.Int64 // fail-open writes forwarded without an intent
	DecisionErrors  atomic.Int64 // confirm/drop the ledger failed to take (intents stay pending)
	ForgottenWrites atomic.Int64 // writes about forgotten subjects (refused, or flagged)
	// RefusedUncovered counts writes to tables no rule covers, refused
	// by coverage.mode enforce (not in Refused).
	RefusedUncovered atomic.Int64
}

// Capture records every write to a configured table in the ledger before
// a relay forwards it, and decides its intent from the outcome the relay
// reports (see the package doc for the contract).
type Capture struct {
	cfg     Config
	rules   atomic.Pointer[extract.Rules] // the rules in force (rules.go)
	log     *slog.Logger
	queue   decisionQueue
	done    chan struct{}
	skipped atomic.Int64 // decisions given up at a shutdown out of time
	// decideCtx bounds every ledger decision; a shutdown out of time
	// cancels it, so that decisions queued, in flight or queued in the
	// ledger's committer are skipped (their intents stay pending).
	decideCtx    context.Context
	stopDeciding context.CancelFunc
	lateWrites   atomic.Pointer[LateWriteSink] // OnLateWrite's
	holds        sync.Map                      // ledger.Store → *Refusal (Hold)
	Stats        Stats
}

// New returns a Capture; Close stops its background worker.
func New(cfg Config) *Capture {
	if cfg.Mode == "" {
		cfg.Mode = Strict
	}
	if cfg.IntentTimeout == 0 {
		cfg.IntentTimeout = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Capture{cfg: cfg, log: log, done: make(chan struct{})}
	c.queue.init()
	c.rules.Store(cfg.Rules)
	c.decideCtx, c.stopDeciding = context.WithCancel(context.Background())
	go c.decide()
	return c
}

// Recent is Config.Recent, which a WAL follower compares rows with (nil
// without one).
func (c *Capture) Recent() *Recent { return c.cfg.Recent }

// Followed is Config.Followed, which a WAL follower keeps up to date (nil
// when every write takes an intent).
func (c *Capture) Followed() *Followed { return c.cfg.Followed }

// Mode is the mode in force (Config.Mode, Strict when unset).
func (c *Capture) Mode() Mode { return c.cfg.Mode }

// Logger is the logger capture and its relay adapters log to.
func (c *Capture) Logger() *slog.Logger { return c.log }

// Done is closed when Close or Shutdown has stopped the background
// worker: whatever follows the Capture's life (WriterCatalog.Watch) ends.
func (c *Capture) Done() <-chan struct{} { return c.done }

// Close waits for queued decisions to reach the ledger.
func (c *Capture) Close() { c.Shutdown(context.Background()) }

// Shutdown is Close bounded by ctx: decisions still queued when ctx ends
// are skipped, and their intents stay pending for recovery to resolve at
// the next start (a big COPY can leave many confirmations queued, and the
// proxy's shutdown_timeout must hold). It returns how many were skipped.
// Calls after the first return at once.
func (c *Capture) Shutdown(ctx context.Context) int64 {
	c.queue.close()
	select {
	case <-c.done:
		c.stopDeciding()
		return 0
	case <-ctx.Done():
	}
	c.stopDeciding()
	<-c.done // quick now: queued and in-flight decisions give up
	n := c.skipped.Load()
	c.log.Warn("shutdown timeout: ledger decisions left undone; their intents stay pending and are resolved at the next start (capture.store)",
		"intents", n)
	return n
}

// Intend is Prepare then Durable: it makes the entries for tags, which
// are all of one table of store, durable as one write-ahead intent, or
// explains why it cannot. It returns 0 and no refusal when there is
// nothing to record (deletes only), when the table is followed (Config.
// Followed) or when fail-open forwarded the write untracked.
func (c *Capture) Intend(store ledger.Store, tags []extract.Tag) (ledger.IntentID, *Refusal) {
	entries, r := c.Prepare(store, tags)
	if r != nil || len(entries) == 0 {
		return 0, r
	}
	return c.Durable(entries, tags[0].Table)
}

// DDLSeen is told by a relay that DDL went through it, when the DDL is
// sent and again once its transaction has ended: a configured table may
// have been renamed, dropped or re-created, so writes take intents again
// until the WAL follower has refreshed its publications (Followed).
func (c *Capture) DDLSeen() { c.cfg.Followed.Suspend() }

// followed reports whether entries, of table, need no intent because a
// WAL follower streams the table in full (Config.Followed); if so it
// remembers them for the follower's comparison. Unattributed entries
// always take an intent: they are what forget and preview show of a write
// the follower attributes only once it has committed.
func (c *Capture) followed(entries []ledger.Entry, table string) bool {
	if entries[0].Store != ledger.StorePostgres || !c.cfg.Followed.Has(table) {
		return false
	}
	for _, e := range entries {
		if e.Unattributed {
			return false
		}
	}
	c.Stats.Followed.Add(1)
	if c.cfg.Recent != nil {
		c.cfg.Recent.add(entries)
	}
	return true
}

// Prepare turns tags, which are all of one table of store, into ledger
// entries and refuses writes about forgotten subjects (or flags them:
// FlagForgotten); it does no I/O, so a relay may call it before deciding
// to forward.
func (c *Capture) Prepare(store ledger.Store, tags []extract.Tag) ([]ledger.Entry, *Refusal) {
	entries := c.entries(store, tags)
	if len(entries) == 0 {
		return nil, nil
	}
	if r := c.held(store); r != nil {
		return nil, r
	}
	return entries, c.checkForgotten(entries, tags[0].Table)
}

// Durable records entries, of table, as a write-ahead intent in the
// ledger, waiting at most Config.IntentTimeout. When the ledger cannot
// take it, the write is refused (CodeLedgerDown), or, with FailOpen,
// forwarded untracked: 0 and no refusal. A followed table's entries take
// no intent: 0 and no refusal. It is safe for concurrent use.
func (c *Capture) Durable(entries []ledger.Entry, table string) (ledger.IntentID, *Refusal) {
	p := c.StartDurable(entries, table)
	if p == nil {
		return 0, nil
	}
	return p.Wait()
}

// StartDurable is Durable without the wait: the intent is queued in the
// ledger, and Wait returns what Durable would have. A relay that may
// forward the write before its intent is durable (pgcapture's extended
// protocol) waits only where it must. It returns nil when the table is
// followed: there is nothing to wait for.
func (c *Capture) StartDurable(entries []ledger.Entry, table string) *PendingIntent {
	if c.followed(entries, table) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.IntentTimeout)
	return &PendingIntent{capture: c, entries: entries, table: table, cancel: cancel, intending: c.cfg.Ledger.StartIntend(ctx, entries)}
}

// PendingIntent is an intent on its way to the ledger (StartDurable).
type PendingIntent struct {
	capture   *Capture
	entries   []ledger.Entry
	table     string
	cancel    context.CancelFunc
	intending ledger.Intending

	waited  bool
	id      ledger.IntentID
	refusal *Refusal
}

// Wait returns the intent once durable, or the refusal, as Durable does.
// Later calls return the same.
func (p *PendingIntent) Wait() (ledger.IntentID, *Refusal) {
	if !p.waited {
		id, err := p.intending.Wait()
		p.cancel()
		p.id, p.refusal = p.capture.intended(id, err, p.entries, p.table)
		p.waited = true
	}
	return p.id, p.refusal
}

// intended accounts for an intent's outcome and turns a failure into the
// refusal (or, with FailOpen, into forwarding untracked).
func (c *Capture) intended(id ledger.IntentID, err error, entries []ledger.Entry, table string) (ledger.IntentID, *Refusal) {
	if err == nil {
		c.Stats.Intents.Add(1)
		if c.cfg.Recent != nil {
			c.cfg.Recent.add(entries)
		}
		return id, nil
	}
	return 0, c.ledgerDown(table, err)
}

// entries turns tags into ledger entries of store, hashing every subject.
func (c *Capture) entries(store ledger.Store, tags []extract.Tag) []ledger.Entry {
	var out []ledger.Entry
	var hashes recentHashes
	for _, t := range tags {
		switch t.Op {
		case extract.OpWrite:
			for _, s := range t.Subjects {
				out = append(out, ledger.Entry{Store: store, Table: t.Table, RecordID: t.ID, Subject: hashes.hash(c.cfg.Hasher, s)})
			}
		case extract.OpUnattributed:
			out = append(out, ledger.Entry{Store: store, Table: t.Table, Unattributed: true})
		}
		// OpDelete: deletes add no personal data; the relay reports them
		// (Deleted) once they commit.
	}
	return out
}

// recentHashes remembers the last few subjects one write hashed: a batch
// of records mostly names a few people (one user's chunks), and an HMAC
// costs more than comparing a few strings.
type recentHashes struct {
	subjects [8]string
	hashes   [8]ledger.SubjectHash
	used     int // how many of the slots hold a subject
	next     int // the slot the next new subject takes
}

func (r *recentHashes) hash(h *ledger.Hasher, subject string) ledger.SubjectHash {
	for i := range r.used {
		if r.subjects[i] == subject {
			return r.hashes[i]
		}
	}
	sum := h.Hash(subject)
	r.subjects[r.next], r.hashes[r.next] = subject, sum
	r.next = (r.next + 1) % len(r.subjects)
	r.used = min(r.used+1, len(r.subjects))
	return sum
}

// Ledger is Config.Ledger, which a wing's recovery resolves orphaned
// intents in (RecoverFrom).
func (c *Capture) Ledger() ledger.Ledger { return c.cfg.Ledger }
