package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/ledger"
)

// run works request id to its end: delete and verify every layer, then
// certify. Each step is journaled before the next, so run may stop at any
// point (crash, shutdown, lost lease) and be called again.
func (e *Engine) run(ctx context.Context, id string) error {
	ok, err := e.cfg.Ledger.LeaseForget(ctx, id, e.owner, leaseFor)
	if err != nil || !ok {
		return err // another engine has it, or it is finished
	}
	r, err := e.cfg.Ledger.Forget(ctx, id)
	if err != nil {
		return err
	}
	st, err := parseState(r.State)
	if err != nil {
		return e.fail(ctx, id, &journalState{}, err)
	}
	subject, err := e.sealer.open(id, st.Sealed)
	if err != nil {
		return e.fail(ctx, id, st, err)
	}
	tags, err := e.ledgerIDs(ctx, r.Subject)
	if err != nil {
		return err
	}
	for i := range st.Layers {
		if st.Layers[i].Done {
			continue
		}
		began := time.Now()
		if err := e.forgetLayer(ctx, id, subject, r.Subject, st, i, tags); err != nil {
			return err
		}
		e.log.Debug("forget: layer done", "request", id, "store", st.Layers[i].Store, "table", st.Layers[i].Table,
			"deleted", len(st.Layers[i].Deleted), "residual", st.Layers[i].Residual, "took", time.Since(began))
		if _, err := e.cfg.Ledger.LeaseForget(ctx, id, e.owner, leaseFor); err != nil {
			return err
		}
	}
	if open := st.unverified(); len(open) > 0 {
		l := open[0]
		if !e.cfg.Now().Before(r.Deadline) {
			err := fmt.Errorf("%s %s still held %d of the subject's records at the request's deadline (%d layers not verified absent)",
				l.Store, l.Table, l.Residual, len(open))
			return e.fail(ctx, id, st, err)
		}
		// Never certified while a layer may hold the subject's records:
		// the request stays open, and Resume deletes and verifies the
		// layer again (a store that makes deletes visible late, or writes
		// that were in flight).
		e.log.Warn("forget: layers not yet verified absent; the request stays open and is verified again later",
			"request", id, "layers", len(open), "store", l.Store, "table", l.Table, "residual", l.Residual, "deadline", r.Deadline)
		return nil
	}
	began := time.Now()
	if st.Payload == nil {
		// Asked once, before the payload is journaled: a resumed request
		// signs the journaled payload, horizon and all, again.
		st.Horizon = e.horizon(ctx, st, e.cfg.Now())
	}
	cert, err := e.cfg.Certifier.certify(ctx, r, st, func() error { return e.cfg.Ledger.SaveForget(ctx, id, st.marshal()) })
	if err != nil {
		return err
	}
	st.Sealed = nil // the subject leaves the journal with the request
	st.Completed = true
	if err := e.cfg.Ledger.FinishForget(ctx, id, ledger.ForgetCompleted, st.marshal(), cert); err != nil && !errors.Is(err, ledger.ErrForgetFinished) {
		return err
	}
	e.log.Info("forget: completed", "request", id, "certify_took", time.Since(began))
	e.scheduleRescans(ctx, r, subject, st)
	return nil
}

// forgetLayer plans (journals the ids present), deletes, and verifies one
// layer, retrying while records are still found (writes that were in
// flight when the subject was tombstoned, deletes not yet visible). A layer
// still holding records after Retries attempts is left not done and
// marked unverified.
func (e *Engine) forgetLayer(ctx context.Context, id, subject string, h ledger.SubjectHash, st *journalState, i int, tags map[layerKey]ledgerTags) error {
	ls := &st.Layers[i]
	l, err := e.layer(ledger.Store(ls.Store), ls.Table)
	if err != nil {
		st.Error = err.Error()
		return e.fail(ctx, id, st, err)
	}
	t := tags[layerKey{l.Store(), l.Name()}]
	ls.Requested = int64(t.records)
	for attempt := 0; attempt < e.cfg.Retries; attempt++ {
		// The ids are journaled before the store commits their delete: a
		// crash after that commit still knows which ids the certificate
		// covers (a crash before it leaves them to the resumed delete).
		_, err := l.Delete(ctx, subject, t.ids, func(deleted []string) error {
			ls.Deleted = union(ls.Deleted, deleted)
			return e.cfg.Ledger.SaveForget(ctx, id, st.marshal())
		})
		if err != nil {
			return err
		}
		a, err := l.Residual(ctx, subject, t.ids)
		if err != nil {
			return err
		}
		// The certificate states how the last verification was made.
		ls.Residual, ls.VerifyMethod, ls.VerifyQueries = a.Residual, a.Method, a.Queries
		if ls.Residual == 0 {
			break
		}
		// Each attempt can last up to the store's verify deadline (a store
		// that shows deletes late): renew the lease between attempts so
		// that no other engine takes the request in the middle of a layer.
		if err := e.renewLease(ctx, id); err != nil {
			return err
		}
	}
	if ls.Residual > 0 {
		// Still present after Retries attempts: the layer stays not done,
		// marked unverified, for a later run to try again.
		ls.Unverified = true
		return e.cfg.Ledger.SaveForget(ctx, id, st.marshal())
	}
	ls.Unverified = false
	if err := l.Cleanup(ctx); err != nil {
		return err
	}
	// After verify and cleanup: what the delete left in the store's pages
	// (a layer configured to look; never fails the forget).
	if pl, ok := l.(connector.PhysicalLayer); ok {
		ls.Physical = pl.Physical(ctx, subject)
		ls.PhysicalBatch = e.joinBatch(l, ls.Physical)
	}
	tables := t.tables
	if len(tables) == 0 {
		tables = []string{l.Name()}
	}
	for _, table := range tables {
		if err := e.cfg.Ledger.MarkDeleted(ctx, l.Store(), table, ls.gone()); err != nil {
			return err
		}
	}
	ls.Done = true
	return e.cfg.Ledger.SaveForget(ctx, id, st.marshal())
}

// errLeaseLost stops a worker whose lease ran out and was taken.
var errLeaseLost = errors.New("engine: the request's lease ran out and another engine took it; it continues there")

func (e *Engine) renewLease(ctx context.Context, id string) error {
	ok, err := e.cfg.Ledger.LeaseForget(ctx, id, e.owner, leaseFor)
	if err == nil && !ok {
		err = errLeaseLost
	}
	return err
}

// fail finishes the request as failed; the subject stays tombstoned so
// that nothing new is written about it while an operator looks.
func (e *Engine) fail(ctx context.Context, id string, st *journalState, cause error) error {
	st.Sealed = nil
	st.Error = cause.Error()
	e.log.Error("forget: request failed", "request", id, "err", cause)
	if err := e.cfg.Ledger.FinishForget(ctx, id, ledger.ForgetFailed, st.marshal(), nil); err != nil && !errors.Is(err, ledger.ErrForgetFinished) {
		return err
	}
	return cause
}
