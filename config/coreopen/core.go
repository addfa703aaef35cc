package coreopen

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/config/ledgeropen"
	"github.com/lethe-privacy/lethe/ledger"
)

// Core is the capture core of a serving proxy with its ledger, the
// subject hasher and the tombstones the core refuses by.
type Core struct {
	Capture    *capture.Capture
	Ledger     *ledger.Handle
	Hasher     *ledger.Hasher
	Tombstones *capture.Tombstones
}

// Options adjusts Open for a test binary; the zero value is the proxy's.
type Options struct {
	// UnfollowedSync is what intents wait for when the WAL follower is
	// off (default ledger.IntentDurable). Only bench/small.sh's nosync
	// proxy sets another; the shipped command never does.
	UnfollowedSync ledger.IntentSync
}

// Open opens the ledger and builds the capture core when tables or
// Pinecone namespace rules are configured; it returns nil (a pure relay)
// when none are. The salt from the environment is recorded in the ledger
// when it holds none, for the core, forget and the WAL follower alike.
// configPath places the default SQLite ledger.
func Open(cfg *config.Config, configPath string, log *slog.Logger, opts Options) (*Core, error) {
	if !cfg.HasRules() {
		return nil, nil
	}
	hasher, err := ledgeropen.SubjectHasher()
	if err != nil {
		return nil, err
	}
	l, where, err := ledgeropen.Open(cfg.Capture.Ledger, configPath,
		ledger.Options{Logger: log, Owner: Owner(cfg), LeaseDuration: cfg.Capture.Ledger.Lease.D(),
			IntentSync: IntentSync(cfg.Capture, opts.UnfollowedSync), FollowedStores: FollowedStores(cfg.Capture)},
		ledgeropen.Salt{Hasher: hasher, Record: true})
	if err != nil {
		return nil, err
	}
	log.Info("capture enabled", "database", cfg.Capture.Database, "tables", len(cfg.Capture.Tables),
		"pinecone_indexes", len(cfg.Compiled().Pinecone), "mode", cfg.Capture.Mode, "ledger", where)
	tombs := capture.NewTombstones()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = tombs.Refresh(ctx, l)
	cancel()
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("reading tombstones: %w", err)
	}
	var recent *capture.Recent // the WAL follower compares rows with the proxy's intents
	if cfg.Capture.Follows() {
		recent = capture.NewRecent(0)
	}
	var followed *capture.Followed // tables whose writes the slot holds: no intents
	if cfg.Capture.SkipsFollowedIntents() {
		followed = capture.NewFollowed()
	}
	c := capture.New(capture.Config{
		Rules: cfg.Compiled().Tables, Ledger: l, Observer: l, Holder: l, Hasher: hasher,
		Mode: cfg.Capture.Mode, FailOpen: cfg.Capture.FailOpen, Logger: log,
		Tombstones: tombs, FlagForgotten: cfg.Forget.Forgotten == config.ForgottenFlag, Recent: recent, Followed: followed,
		DeleteLateWrites: deletesLateWrites(cfg, log),
	})
	return &Core{Capture: c, Ledger: l, Hasher: hasher, Tombstones: tombs}, nil
}

// Close stops the core, its queued decisions reaching the ledger first,
// then closes the ledger. A nil Core (a pure relay) closes nothing.
func (c *Core) Close() {
	if c == nil {
		return
	}
	c.Capture.Close()
	c.Ledger.Close()
}

// CaptureCore and LedgerHandle are the core's parts for the wings; nil
// for a pure relay.
func (c *Core) CaptureCore() *capture.Capture {
	if c == nil {
		return nil
	}
	return c.Capture
}

// LedgerHandle is the core's ledger; nil for a pure relay.
func (c *Core) LedgerHandle() *ledger.Handle {
	if c == nil {
		return nil
	}
	return c.Ledger
}

// deletesLateWrites reports whether the WAL follower's late writes are
// deleted (forget.late_writes: delete, with forget configured to delete
// them through); otherwise they are logged only.
func deletesLateWrites(cfg *config.Config, log *slog.Logger) bool {
	if cfg.Forget.LateWrites != config.LateWritesDelete {
		return false
	}
	if cfg.Forget.SigningKey == "" {
		if cfg.Capture.Follows() {
			log.Info("wal: late writes about forgotten subjects are only logged: forget is not configured (forget.signing_key)")
		}
		return false
	}
	return true
}

// IntentSync is what the proxy's intents wait for. With the WAL follower
// on, the server's own WAL (through the slot, which the follower confirms
// only once the ledger has the rows) is the durable record of every
// committed row: an intent need not wait for the disk, and survives a
// crash of the proxy but not of the machine, whose lost intents the
// follower stands in for. Without the follower the intent is the only
// record, and waits as unfollowed says (ledger.IntentDurable, the zero
// value, waits for fsync).
func IntentSync(c config.Capture, unfollowed ledger.IntentSync) ledger.IntentSync {
	if c.Follows() {
		return ledger.IntentNoSync
	}
	return unfollowed
}

// FollowedStores are the stores whose intents IntentSync's relaxation
// covers: PostgreSQL when the WAL follower records its committed rows.
// Nothing follows Pinecone, so a Pinecone write's intent always waits for
// the disk (the backstop scan finds a record only at its next pass).
func FollowedStores(c config.Capture) []ledger.Store {
	if c.Follows() {
		return []ledger.Store{ledger.StorePostgres}
	}
	return nil
}

// Owner is this proxy's name in the ledger: capture.ledger.owner, or the
// host name and listen address, which a restarted proxy keeps (so its
// intents left by a crash are its own, resolved at start) and which no
// other live proxy can have. Inspection commands open the ledger under a
// fresh random name instead (ledger.Options without Owner), never the
// proxy's.
func Owner(cfg *config.Config) string {
	if cfg.Capture.Ledger.Owner != "" {
		return cfg.Capture.Ledger.Owner
	}
	host, _ := os.Hostname()
	return host + "/" + cfg.Postgres.Listen
}
