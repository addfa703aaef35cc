package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/lethe-privacy/lethe/certificate"
	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// ErrNotForgotten is returned by LateWrite for a subject no forget
// tombstoned (or whose tombstone was lifted).
var ErrNotForgotten = errors.New("engine: the subject is not forgotten")

// LateWrite is the backstop for records about a forgotten subject that
// were committed after its forget, by any path (the WAL follower saw
// them): it deletes the subject's records in the layer of store and table,
// logging a forget.late_write event of the request that forgot the subject
// before the store commits the delete, verifies they are gone with the
// certificate's own queries, and records it for that request's status.
// subject is the value as stored. A call that finds nothing to delete (the
// application deleted it first, or a replay after a crash) changes nothing
// and logs nothing.
func (e *Engine) LateWrite(ctx context.Context, store ledger.Store, table, subject string) (ledger.LateWrite, error) {
	h := e.cfg.Hasher.Hash(subject)
	tombs, err := e.cfg.Ledger.Tombstones(ctx)
	if err != nil {
		return ledger.LateWrite{}, err
	}
	w := ledger.LateWrite{Store: store, Table: table}
	for _, t := range tombs {
		if t.Subject == h {
			w.RequestID = t.RequestID
		}
	}
	if w.RequestID == "" {
		return ledger.LateWrite{}, ErrNotForgotten
	}
	var l connector.Layer
	for _, c := range e.cfg.Layers {
		if c.Store() == store && c.Name() == table {
			l = c
		}
	}
	if l == nil {
		return ledger.LateWrite{}, fmt.Errorf("engine: no layer %s %s for a late write", store, table)
	}
	tags, err := e.ledgerIDs(ctx, h)
	if err != nil {
		return ledger.LateWrite{}, err
	}
	ids := tags[layerKey{store, table}].ids
	// The event goes in the log before the store commits the delete: a
	// crash between the two then leaves an event whose delete a replay
	// makes (and logs again), never a delete the log does not show.
	logged := false
	deleted, err := l.Delete(ctx, subject, ids, func(gone []string) error {
		if len(gone) == 0 || logged {
			return nil
		}
		var err error
		w.LogIndex, err = e.cfg.Certifier.appendEvent(ctx, certificate.EventLateWrite, w.RequestID)
		logged = err == nil
		return err
	})
	if err != nil {
		return ledger.LateWrite{}, err
	}
	if len(deleted) == 0 {
		return ledger.LateWrite{}, nil
	}
	a, err := l.Residual(ctx, subject, ids)
	if err != nil {
		return ledger.LateWrite{}, err
	}
	w.At, w.Deleted, w.Residual = e.cfg.Now().UTC(), int64(len(deleted)), a.Residual
	if err := e.cfg.Ledger.AddLateWrite(ctx, w); err != nil {
		return ledger.LateWrite{}, err
	}
	e.log.Warn("forget: a late write about a forgotten subject was deleted", "request", w.RequestID, "store", store, "table", table,
		"deleted", w.Deleted, "residual", w.Residual, "log_index", w.LogIndex)
	return w, nil
}

// DeleteLateWrite is LateWrite for the capture core's late-write sink
// (capture.LateWriteSink, registered with OnLateWrite): a subject no
// longer forgotten (lifted since the row was read) is left alone, and nil
// returned.
func (e *Engine) DeleteLateWrite(ctx context.Context, store ledger.Store, table, subject string) error {
	_, err := e.LateWrite(ctx, store, table, subject)
	if errors.Is(err, ErrNotForgotten) {
		return nil
	}
	return err
}
