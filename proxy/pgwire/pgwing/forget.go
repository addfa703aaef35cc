package pgwing

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/proxy/pgwire/walfollow"
)

// Forget opens forget's connection to capture.store and prepares a layer
// per configured table, in the config's order; Settle waits for the WAL
// follower (nil when it is off). Without capture.tables the side is
// empty. The connection is the wing's (Ready pings it) until Close, or
// the side's Close.
func (w *Wing) Forget(ctx context.Context) (connector.ForgetSide, error) {
	c := w.cfg.Capture
	if len(c.Tables) == 0 {
		return connector.ForgetSide{Close: func() {}}, nil
	}
	store, err := OpenStore(ctx, c, "forget deletes and verifies")
	if err != nil {
		return connector.ForgetSide{}, err
	}
	layers, err := w.layers(ctx, store)
	if err != nil {
		store.Close()
		return connector.ForgetSide{}, err
	}
	w.mu.Lock()
	w.forget = store
	w.mu.Unlock()
	side := connector.ForgetSide{Layers: layers, Close: w.closeForget, Horizon: w.horizon(store)}
	if c.Follows() {
		side.Settle = w.settle(store)
	}
	return side, nil
}

// closeForget closes forget's connection; a second call finds none.
func (w *Wing) closeForget() {
	w.mu.Lock()
	store := w.forget
	w.forget = nil
	w.mu.Unlock()
	if store != nil {
		store.Close()
	}
}

// layers prepares every configured table for forget. A table that does
// not exist yet (an application that creates it on first use) is warned
// about, not refused: forget counts it as holding nothing until it appears.
func (w *Wing) layers(ctx context.Context, store *pgstore.Store) ([]connector.Layer, error) {
	var layers []connector.Layer
	for _, t := range w.cfg.Capture.Tables {
		pt, err := pgstore.ParseTable(t.Table, t.ID, t.Subjects)
		if err != nil {
			return nil, err
		}
		l, err := pgstore.NewLayer(ctx, store, pt, t.Vacuum)
		if err != nil {
			return nil, fmt.Errorf("capture.tables %s: %w", t.Table, err)
		}
		if t.Physical.Reports() {
			l.ReportPhysical(pgstore.DefaultPhysicalScan)
			l.RemovePhysical(pgstore.PhysicalSteps{Vacuum: t.Physical.Vacuums(), Scrub: t.Physical.Scrubs(), RewriteMaxPages: t.RewriteMaxPages()})
			l.RescanPhysical(t.RescanEvery())
			l.BatchPhysical(t.BatchWindow())
		}
		if !l.Found() {
			w.log.Warn("a configured table does not exist yet: writes to it are captured once it is created; "+
				"until then forget finds nothing there and its certificates say the table did not exist",
				"table", t.Table)
		}
		layers = append(layers, l)
	}
	return layers, nil
}

// settle is forget's wait for the WAL follower (engine.Config.Settle):
// until the slot has passed every transaction committed so far and the
// ledger holds the slot's initial read, so that preview counts rows
// written a moment ago too, and rows written before a slot still being
// read; it asks through store, forget's own connection to capture.store.
func (w *Wing) settle(store *pgstore.Store) func(context.Context) error {
	slot, reads := w.cfg.Capture.WALSlot, w.ledger
	return func(ctx context.Context) error {
		return store.WithConn(ctx, func(conn *pgx.Conn) error {
			return walfollow.AwaitCommitted(ctx, conn, slot, reads)
		})
	}
}
