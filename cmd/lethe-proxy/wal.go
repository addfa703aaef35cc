package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// following is the WAL follower, prepared; start runs it.
type following struct {
	follower *walfollow.Follower
	log      *slog.Logger
	stop     func() // stops it and waits, before the ledger closes
}

// prepareFollowing builds the WAL follower; prepare, the last step of a
// start, checks the server and makes the publications and the slot.
// The follower asks core whether a committed row's subject was forgotten.
func prepareFollowing(c config.Capture, rules *extract.Rules, l ledger.InitialReads, core *capture.Capture, recent *capture.Recent,
	followed *capture.Followed, log *slog.Logger) (*following, error) {
	cfg := walfollow.Config{
		ConnString: c.Store, Name: c.WALSlot, Rules: rules, Core: core, Ledger: l, Logger: log,
		Recent: recent, DecodingMemKB: int64(c.WALDecodingMem) / 1024,
	}
	if followed != nil { // a nil *Followed in the interface would not be nil
		cfg.Followed = followed
	}
	f, err := walfollow.New(cfg)
	if err != nil {
		return nil, err
	}
	return &following{follower: f, log: log, stop: func() {}}, nil
}

// prepare checks the server for the follower and makes its publications
// and slot; a slot it creates starts with the rows the configured tables
// hold, read and recorded before prepare returns (it can take a while on
// big tables; ctx ending stops it, and the slot is dropped again). It
// comes last in a start, after every file is read and every listener
// bound: nothing that fails after it could leave a slot keeping the
// server's WAL. What an operator must change (wal_level, the role, a
// rule) stops the start with the fix in the message; a server that cannot
// be reached yet is retried once the follower runs, as the relay itself
// would be.
func (w *following) prepare(ctx context.Context) error {
	err := w.follower.Prepare(ctx)
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr):
		w.log.Warn("wal: cannot reach the database yet; following starts once it can", "err", err)
	case err != nil:
		return err
	}
	return nil
}

// start runs the follower until stop.
func (w *following) start(slot string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.follower.Run(ctx)
	}()
	w.stop = func() { cancel(); wg.Wait() }
	w.log.Info("wal: following committed rows of the configured tables", "slot", slot)
}

// deletesLateWrites reports whether the follower's late writes are
// deleted (forget.late_writes: delete, with forget configured to delete
// them through); otherwise they are logged and counted only.
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

// walSettle is forget's wait for the WAL follower (engine.Config.Settle):
// until the slot has passed every transaction committed so far and reads,
// the ledger, holds the slot's initial read, so that preview counts rows
// written a moment ago too, and rows written before a slot still being
// read; it asks through store, forget's own connection to capture.store.
// nil without the follower.
func walSettle(c config.Capture, store *pgstore.Store, reads ledger.InitialReads) func(context.Context) error {
	if !c.Follows() || store == nil {
		return nil
	}
	return func(ctx context.Context) error {
		return store.WithConn(ctx, func(conn *pgx.Conn) error {
			return walfollow.AwaitCommitted(ctx, conn, c.WALSlot, reads)
		})
	}
}
