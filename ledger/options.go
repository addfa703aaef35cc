package ledger

import (
	"errors"
	"log/slog"
	"slices"
	"time"
)

// Options tune a ledger backend. The zero value is a good default.
type Options struct {
	// CommitWindow is how long the committer waits after the first write
	// request to gather others into the same transaction. 0 or negative
	// means no wait (the default): a batch is whatever queued up while the
	// previous transaction was committing, which batches as well under
	// load and adds no latency to a lone write (BenchmarkIntend compares
	// windows).
	CommitWindow time.Duration
	// MaxBatch caps the requests committed in one transaction (default 256).
	MaxBatch int
	// CommitTimeout bounds one batch transaction (default 10s); past it the
	// batch fails with ErrUnavailable.
	CommitTimeout time.Duration
	// BusyTimeout is how long SQLite waits for a lock held by another
	// process (default 5s). SQLite only.
	BusyTimeout time.Duration
	// Schema is the PostgreSQL schema holding the ledger's tables (default
	// "lethe_ledger"). PostgreSQL only.
	Schema string
	// Owner names this handle in the owners table (default: the host
	// name, "/" and random hex, so a new name at every open). Names must
	// differ between live handles: a handle treats the pending intents of
	// an earlier run of its own name as orphans (see PendingOrphans). Give
	// a proxy a stable name to have its next run recover its intents at
	// once rather than after its lease expires.
	Owner string
	// LeaseDuration is how long a PostgreSQL handle's claim to be alive
	// lasts without renewal (default 60s); past it, other handles treat
	// its pending intents as orphans, and the handle itself refuses new
	// intents until a renewal succeeds. PostgreSQL only.
	LeaseDuration time.Duration
	// RenewInterval is how often the lease is renewed (default a sixth of
	// LeaseDuration, 10s); it must be shorter than LeaseDuration.
	// PostgreSQL only.
	RenewInterval time.Duration
	// Logger receives the ledger's own warnings, such as failed lease
	// renewals (default slog.Default()).
	Logger *slog.Logger
	// IntentSync is how far an intent must have reached before Intend
	// returns (default IntentDurable).
	IntentSync IntentSync
	// FollowedStores limits IntentNoSync to the intents whose entries are
	// all of these stores: those whose every committed write another
	// durable record holds (PostgreSQL with the WAL follower on). An
	// intent naming any other store (Pinecone, which nothing follows)
	// waits for the disk. Empty: IntentNoSync applies to every intent.
	FollowedStores []Store
}

// IntentSync says what Intend waits for before it returns, and so which
// failures an intent survives once Intend has returned.
type IntentSync int

const (
	// IntentDurable (the default): the intent is on disk. It survives a
	// kill -9 of the proxy, a crash of the operating system or of the
	// ledger's PostgreSQL server, and power loss. SQLite fsyncs the
	// pending file's WAL at every commit of intents; PostgreSQL commits
	// them with synchronous_commit on.
	IntentDurable IntentSync = iota
	// IntentNoSync: the intent is committed without waiting for the disk.
	// It survives a kill -9 of the proxy (SQLite has handed the pending
	// file's WAL to the operating system; the PostgreSQL server holds the
	// commit), but not a crash of the operating system or power loss
	// (SQLite: synchronous=NORMAL, the WAL reaches the disk at the next
	// checkpoint), nor a crash of the ledger's PostgreSQL server
	// (synchronous_commit off: up to three times wal_writer_delay of
	// commits are lost). Either way the files stay consistent: a lost
	// intent is lost whole. It is meant for a proxy whose WAL follower
	// records every committed row from the server's own WAL, which then
	// stands in for the intents a crash of the machine loses; with
	// Options.FollowedStores, only for the intents of those stores.
	IntentNoSync
)

func (o Options) commitWindow() time.Duration {
	return max(o.CommitWindow, 0)
}

func (o Options) maxBatch() int {
	if o.MaxBatch <= 0 {
		return 256
	}
	return o.MaxBatch
}

func (o Options) commitTimeout() time.Duration {
	if o.CommitTimeout <= 0 {
		return 10 * time.Second
	}
	return o.CommitTimeout
}

func (o Options) busyTimeout() time.Duration {
	if o.BusyTimeout <= 0 {
		return 5 * time.Second
	}
	return o.BusyTimeout
}

func (o Options) owner() string {
	if o.Owner == "" {
		return defaultOwner()
	}
	return o.Owner
}

func (o Options) leaseDuration() time.Duration {
	if o.LeaseDuration <= 0 {
		return 60 * time.Second
	}
	return o.LeaseDuration
}

func (o Options) renewInterval() time.Duration {
	if o.RenewInterval <= 0 {
		return o.leaseDuration() / 6
	}
	return o.RenewInterval
}

// String names the mode as bench/small.sh and the docs do.
func (s IntentSync) String() string {
	if s == IntentNoSync {
		return "nosync"
	}
	return "durable"
}

func (o Options) intentSync() syncPolicy {
	if o.IntentSync == IntentNoSync {
		return syncPolicy{sync: IntentNoSync, followed: slices.Clone(o.FollowedStores)}
	}
	return syncPolicy{sync: IntentDurable}
}

// syncPolicy is what intents wait for: Options.IntentSync, limited to
// Options.FollowedStores.
type syncPolicy struct {
	sync     IntentSync
	followed []Store // empty: every store
}

// durable reports whether a commit holding batch must reach the disk
// before its callers are answered: whether one of its intents must.
func (p syncPolicy) durable(batch []*request) bool {
	for _, r := range batch {
		if r.kind == opIntend && (p.sync == IntentDurable || !p.follows(r.entries)) {
			return true
		}
	}
	return false
}

func (p syncPolicy) follows(entries []Entry) bool {
	if len(p.followed) == 0 {
		return true
	}
	for _, e := range entries {
		if !slices.Contains(p.followed, e.Store) {
			return false
		}
	}
	return true
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// DefaultPostgresSchema is the PostgreSQL schema holding the ledger's
// tables unless Options.Schema names another.
const DefaultPostgresSchema = "lethe_ledger"

func (o Options) schema() string {
	if o.Schema == "" {
		return DefaultPostgresSchema
	}
	return o.Schema
}

// ErrUnknownIntent is returned by Confirm and Drop for an intent the ledger
// never issued, and by Confirm for an intent already dropped.
var ErrUnknownIntent = errors.New("ledger: unknown or dropped intent")

// ErrIntentConfirmed is returned by Drop for an intent already confirmed:
// its write committed, so its entries must stay.
var ErrIntentConfirmed = errors.New("ledger: intent already confirmed, cannot drop it")

// Intent states as stored in the intents table.
const (
	intentPending   = "pending"
	intentConfirmed = "confirmed"
	intentDropped   = "dropped"
)

// resolveErr maps the state an intent had before Confirm or Drop (""
// when there is no such intent) to the caller's result. Confirm and Drop
// are idempotent: confirming twice or dropping twice is not an error.
func resolveErr(kind opKind, prior string) error {
	switch {
	case prior == "":
		return ErrUnknownIntent
	case kind == opConfirm && prior == intentDropped:
		return ErrUnknownIntent
	case kind == opDrop && prior == intentConfirmed:
		return ErrIntentConfirmed
	}
	return nil
}
