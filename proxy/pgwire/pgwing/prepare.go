package pgwing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-privacy/lethe/capture"
)

// recoveryTimeout bounds the recovery a start waits for.
const recoveryTimeout = 5 * time.Minute

// Prepare readies the wing to serve, in this order: it reads the
// catalog's server-side writers and coverage (a failure is logged and
// retried), then checks the server for the WAL follower and makes its
// publications and slot, with the rows the configured tables hold (it can
// take a while on big tables; ctx ending stops it, and the slot is dropped
// again). What runs in the background from here on (recovery every
// capture.recovery_interval, the catalog watch, the follower) stops at
// Shutdown or Close.
//
// The slot comes last, after every file is read and every listener
// bound: nothing that fails after it could leave a slot keeping the
// server's WAL. What an operator must change (wal_level, the role, a
// rule) stops the start with the fix in the message; a server that cannot
// be reached yet is a warning, and the follower starts once it can, as
// the relay itself would.
func (w *Wing) Prepare(ctx context.Context) error {
	if w.core == nil {
		return nil
	}
	work := w.work
	w.watchCatalog(work)
	if w.follower == nil {
		return nil
	}
	err := w.follower.Prepare(ctx)
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr):
		w.log.Warn("wal: cannot reach the database yet; following starts once it can", "err", err)
	case err != nil:
		return err
	}
	w.background.Add(1)
	go func() {
		defer w.background.Done()
		w.follower.Run(work)
	}()
	w.log.Info("wal: following committed rows of the configured tables", "slot", w.cfg.Capture.WALSlot)
	return nil
}

// recoverIntents resolves the intents that dead ledger handles left
// pending (ledger.Ledger.PendingOrphans), when the config names the store
// to check: once now, before Listen binds (a client that reaches the
// proxy finds its earlier writes settled), which must succeed for the
// proxy to start, then
// every capture.recovery_interval in the background until work ends. On
// a shared PostgreSQL ledger the background runs clean up after the other
// proxies that die. Pinecone's intents are resolved by the Pinecone
// wing's own recovery (pcwing, docs/pinecone.md).
func (w *Wing) recoverIntents(ctx, work context.Context) error {
	c := w.cfg.Capture
	if c.Store == "" {
		w.log.Info("intents left pending by a crash are not resolved: capture.store is not set (forget treats them as candidates)")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, recoveryTimeout)
	defer cancel()
	store, err := OpenStore(ctx, c, "recovery resolves pending intents")
	if err != nil {
		return err
	}
	st, err := capture.Recover(ctx, w.ledger, w.compiled.IDColumns, store)
	if err != nil {
		store.Close()
		return fmt.Errorf("recovering pending intents: %w", err)
	}
	w.log.Info("pending intents recovered", "confirmed", st.Confirmed, "dropped", st.Dropped,
		"left_pending", st.LeftPending, "raced", st.Raced)
	w.background.Add(1)
	go func() {
		defer w.background.Done()
		defer store.Close()
		capture.RecoverEvery(work, c.RecoveryInterval.D(), w.ledger, w.compiled.IDColumns, store, w.log)
	}()
	return nil
}
