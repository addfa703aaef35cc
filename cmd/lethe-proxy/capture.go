package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgcapture"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcapture"
)

// captured is what capture wiring hands to serve and to forget.
type captured struct {
	capture    *capture.Capture
	observer   *pgcapture.Observer // the PostgreSQL relay's view of capture; nil without capture.tables
	pinecone   *pcapture.Hook      // the Pinecone relay's; nil without namespace rules
	ledger     *ledger.Handle
	hasher     *ledger.Hasher
	tombstones *capture.Tombstones
	followed   *capture.Followed // tables written without intents; nil with capture.intents: always
	wal        *following        // nil when capture.wal is off
	// coverage follows the coverage checks of the catalog reads; nil
	// when capture.store is not set (nothing reads the catalog).
	coverage *coverage.Monitor
}

// stopFollowing stops the WAL follower, if any; it must run before the
// ledger closes.
func (c *captured) stopFollowing() {
	if c.wal != nil {
		c.wal.stop()
	}
}

// newCapture builds capture when tables or Pinecone namespace rules are
// configured; it returns nil (a pure relay) when none are.
func newCapture(cfg *config.Config, configPath string, log *slog.Logger) (*captured, error) {
	if !cfg.HasRules() {
		return nil, nil
	}
	rules, pcRules := cfg.Compiled().Tables, cfg.Compiled().Pinecone
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
		"pinecone_indexes", len(pcRules), "mode", cfg.Capture.Mode, "ledger", where)
	if err := recoverIntents(cfg.Capture, cfg.Compiled().IDColumns, l, log); err != nil {
		l.Close()
		return nil, err
	}
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
		Rules: rules, Ledger: l, Hasher: hasher,
		Mode: cfg.Capture.Mode, FailOpen: cfg.Capture.FailOpen, Logger: log,
		Tombstones: tombs, FlagForgotten: cfg.Forget.Forgotten == config.ForgottenFlag, Recent: recent, Followed: followed,
		Observer: l, DeleteLateWrites: deletesLateWrites(cfg, log),
	})
	out := &captured{capture: c, ledger: l, hasher: hasher, tombstones: tombs, followed: followed}
	if len(cfg.Capture.Tables) > 0 {
		out.observer = pgcapture.New(c, pgcapture.Config{
			Database: cfg.Capture.Database, MaxStatementsInFlight: cfg.Capture.MaxStatementsInFlight,
		})
		out.coverage = watchWriters(cfg, rules, c, out.observer, log)
	}
	if cfg.Capture.Follows() {
		if out.wal, err = prepareFollowing(cfg.Capture, rules, l, c, recent, followed, log); err != nil {
			c.Close()
			l.Close()
			return nil, err
		}
	} else if len(cfg.Capture.Tables) > 0 {
		log.Warn("capture.wal is off: rows written around the proxy (migrations, other services, triggers, defaults, views, partitions) are not tagged (docs/wal.md)")
	}
	if len(pcRules) > 0 {
		out.pinecone = pcapture.New(c, pcRules)
	}
	return out, nil
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

// recoverIntents resolves the intents that dead ledger handles left
// pending (ledger.Ledger.PendingOrphans), when the config names the store
// to check: once now, which must succeed for the proxy to start, then
// every capture.recovery_interval in the background until the ledger is closed.
// On a shared PostgreSQL ledger the background runs clean up after the
// other proxies that die.
func recoverIntents(c config.Capture, idColumns map[string]string, l ledger.Ledger, log *slog.Logger) error {
	if len(c.Tables) == 0 {
		return nil // Pinecone's intents are never resolved by recovery (see docs/pinecone.md)
	}
	if c.Store == "" {
		log.Info("intents left pending by a crash are not resolved: capture.store is not set (forget treats them as candidates)")
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	store, err := openStore(ctx, c, "recovery resolves pending intents")
	if err != nil {
		return err
	}
	st, err := capture.Recover(ctx, l, idColumns, store)
	if err != nil {
		store.Close()
		return fmt.Errorf("recovering pending intents: %w", err)
	}
	log.Info("pending intents recovered", "confirmed", st.Confirmed, "dropped", st.Dropped,
		"left_pending", st.LeftPending, "raced", st.Raced)
	go func() {
		// Returns when the ledger is closed at shutdown.
		defer store.Close()
		capture.RecoverEvery(context.Background(), c.RecoveryInterval.D(), l, idColumns, store, log)
	}()
	return nil
}

// writersInterval is how often the store's catalog is read again for
// functions, procedures, triggers and rules that write configured tables;
// writersRetry, how soon after a failed read.
const (
	writersInterval = time.Minute
	writersRetry    = 10 * time.Second
)

// watchWriters keeps capture's rules in step with the server-side writers
// of the store named by capture.store, and the views, partitions and
// inheritance children of configured tables: read now (a failure is logged and
// retried, not fatal: capture works without them, only blind to such
// writes), then every writersInterval until the capture closes, and after DDL
// passes through a session of observer. Each read checks coverage too
// (docs/coverage.md): the Monitor returned logs what it finds, and with
// coverage.mode enforce the uncovered tables' writes are refused. It
// returns nil when capture.store is not set.
func watchWriters(cfg *config.Config, rules *extract.Rules, capt *capture.Capture, observer *pgcapture.Observer, log *slog.Logger) *coverage.Monitor {
	c := cfg.Capture
	if c.Store == "" {
		log.Info("writes made inside the database by functions, procedures, triggers and rules, and writes through views, partitions and inheritance children of configured tables, are not checked: capture.store is not set (DO blocks naming a configured table still are)")
		log.Info("coverage is not checked by the proxy: capture.store is not set (lethe-proxy check needs it too)")
		return nil
	}
	compiled := cfg.Compiled()
	enforce := cfg.Coverage.Mode == config.CoverageEnforce
	monitor := coverage.NewMonitor(log, enforce)
	var store *pgstore.Store // opened on first use, so that a store down at start is retried
	finder := rules.WriterFinder()
	catalog := pgcapture.NewWriterCatalog(capt, func(ctx context.Context) (extract.Writers, error) {
		if store == nil {
			s, err := openStore(ctx, c, "the proxy reads the catalog")
			if err != nil {
				return extract.Writers{}, err
			}
			store = s
		}
		found, tables, err := store.WritersAndCoverage(ctx, finder, compiled.CoverageSkip)
		if err != nil {
			return extract.Writers{}, err
		}
		findings := coverage.CheckTables(compiled.Coverage, tables)
		monitor.Observe(findings)
		if enforce {
			found.Uncovered = uncoveredRelations(findings, tables)
		}
		return found, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := catalog.Refresh(ctx)
	cancel()
	if err != nil {
		log.Warn("could not read the server-side writers of configured tables; calls of them are not refused until a retry succeeds",
			"err", err, "retry_in", writersRetry)
	}
	observer.FollowCatalog(catalog) // DDL through the proxy is read at once
	go func() {
		catalog.Watch(context.Background(), writersInterval, writersRetry)
		if store != nil {
			store.Close()
		}
	}()
	return monitor
}
