package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/ledger"
)

// core is the capture core of a serving proxy, with its ledger: every
// wing records through it, and forget reads and writes the same ledger.
type core struct {
	capture    *capture.Capture
	ledger     *ledger.Handle
	hasher     *ledger.Hasher
	tombstones *capture.Tombstones
}

// newCore opens the ledger and builds the capture core when tables or
// Pinecone namespace rules are configured; it returns nil (a pure relay)
// when none are.
func newCore(cfg *config.Config, configPath string, log *slog.Logger) (*core, error) {
	if !cfg.HasRules() {
		return nil, nil
	}
	hasher, err := subjectHasher()
	if err != nil {
		return nil, err
	}
	// Forget (the admin API) and the WAL follower use this ledger and
	// hasher too: serve records the salt for all of them.
	l, where, err := openLedgerWith(cfg.Capture.Ledger, configPath,
		ledger.Options{Logger: log, Owner: ledgerOwner(cfg), LeaseDuration: cfg.Capture.Ledger.Lease.D(), IntentSync: intentSync(cfg.Capture)},
		ledgerSalt{hasher: hasher, record: true})
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
		Rules: cfg.Compiled().Tables, Ledger: l, Observer: l, Hasher: hasher,
		Mode: cfg.Capture.Mode, FailOpen: cfg.Capture.FailOpen, Logger: log,
		Tombstones: tombs, FlagForgotten: cfg.Forget.Forgotten == config.ForgottenFlag, Recent: recent, Followed: followed,
		DeleteLateWrites: deletesLateWrites(cfg, log),
	})
	return &core{capture: c, ledger: l, hasher: hasher, tombstones: tombs}, nil
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

// intentSync is what the proxy's intents wait for. With the WAL follower
// on, the server's own WAL (through the slot, which the follower confirms
// only once the ledger has the rows) is the durable record of every
// committed row: an intent need not wait for the disk, and survives a
// crash of the proxy but not of the machine, whose lost intents the
// follower stands in for. Without the follower the intent is the only
// record, and waits for fsync.
func intentSync(c config.Capture) ledger.IntentSync {
	if c.Follows() {
		return ledger.IntentNoSync
	}
	return benchIntentSync
}

// benchIntentSync is ledger.IntentDurable, except in this package's test
// binary run as bench/small.sh's nosync proxy (nosync_bench_test.go).
var benchIntentSync = ledger.IntentDurable

// ledgerOwner is this proxy's name in the ledger: capture.ledger.owner, or
// the host name and listen address, which a restarted proxy keeps (so its
// intents left by a crash are its own, resolved at start) and which no
// other live proxy can have. Inspection commands open the ledger under a
// fresh random name instead (openLedger), never the proxy's.
func ledgerOwner(cfg *config.Config) string {
	if cfg.Capture.Ledger.Owner != "" {
		return cfg.Capture.Ledger.Owner
	}
	host, _ := os.Hostname()
	return host + "/" + cfg.Postgres.Listen
}

// close stops the core, its queued decisions reaching the ledger first,
// then closes the ledger.
func (c *core) close() {
	c.capture.Close()
	c.ledger.Close()
}

// captureCore and ledgerHandle are the core's parts for the wings; nil
// for a pure relay.
func (c *core) captureCore() *capture.Capture {
	if c == nil {
		return nil
	}
	return c.capture
}

func (c *core) ledgerHandle() *ledger.Handle {
	if c == nil {
		return nil
	}
	return c.ledger
}
