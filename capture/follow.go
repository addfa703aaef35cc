package capture

import (
	"context"
	"errors"

	"github.com/lethe-privacy/lethe/ledger"
)

// A follower of committed rows (the PostgreSQL wing's WAL follower, the
// Pinecone wing's backstop scan) records through the core as a relay
// does: it hashes the subjects it reads with the core's hasher
// (HashSubject), asks whether one was forgotten (Forgotten), writes its
// changes into the core's ledger (Observe; a scan first asks which the
// ledger holds, Holds), and hands every committed record about a
// forgotten subject to LateWrite, which decides the record's fate
// (Config.DeleteLateWrites) and logs it; the follower counts them. The
// WAL follower keeps its own batching and confirms its slot only once
// Observe has returned for a durable batch.

// LateWriteSink deletes and verifies the records of a forgotten subject
// that were committed after its forget (engine.Engine satisfies it). The
// engine registers itself with OnLateWrite once it is built, so that the
// core, built first, need not know it: subject is the value as stored, and
// a subject whose tombstone was lifted since is left alone (nil).
type LateWriteSink interface {
	DeleteLateWrite(ctx context.Context, store ledger.Store, table, subject string) error
}

// ErrNoLateWriteSink is LateWrite's error when Config.DeleteLateWrites is
// set and no sink is registered yet: the follower reads the row again
// later instead of moving past it undeleted.
var ErrNoLateWriteSink = errors.New("capture: late writes are to be deleted but forget's engine has not registered yet (OnLateWrite)")

// HashSubject is the ledger's form of subject, with the core's salt.
func (c *Capture) HashSubject(subject string) ledger.SubjectHash {
	return c.cfg.Hasher.Hash(subject)
}

// Observe records a follower's changes in Config.Observer, in order and
// in one transaction: durable waits for the disk (ledger.Observer.Observe),
// else it returns once committed (ObserveNoSync), made durable by the next
// durable call.
func (c *Capture) Observe(ctx context.Context, changes []ledger.Change, durable bool) error {
	if c.cfg.Observer == nil {
		return errors.New("capture: no ledger for a follower's changes (Config.Observer)")
	}
	if durable {
		return c.cfg.Observer.Observe(ctx, changes)
	}
	return c.cfg.Observer.ObserveNoSync(ctx, changes)
}

// Holds reports, for each of entries, whether the ledger holds it
// confirmed (ledger.Holder): a scanning follower records only the
// records whose entries it lacks.
func (c *Capture) Holds(ctx context.Context, entries []ledger.Entry) ([]bool, error) {
	if c.cfg.Holder == nil {
		return nil, errors.New("capture: no ledger to ask which records it holds (Config.Holder)")
	}
	return c.cfg.Holder.Holds(ctx, entries)
}

// DeletesLateWrites reports whether LateWrite hands late writes to the
// sink to be deleted (Config.DeleteLateWrites), rather than logging them
// only.
func (c *Capture) DeletesLateWrites() bool { return c.cfg.DeleteLateWrites }

// OnLateWrite registers the sink LateWrite hands deletes to (forget's
// engine, once built). A later call replaces it.
func (c *Capture) OnLateWrite(sink LateWriteSink) {
	c.lateWrites.Store(&sink)
}

// LateWrite decides the fate of a committed row (or record) of table, in
// store, about a forgotten subject (a late write): it is logged (by the subject's HMAC,
// never the subject), and with
// Config.DeleteLateWrites handed to the registered sink, whose error is
// returned; without it, the row is only logged. A follower
// calls it once the row is durable in the ledger and before it confirms
// the row to its store, so that an error or a crash hands the row over
// again.
func (c *Capture) LateWrite(ctx context.Context, store ledger.Store, table, subject string) error {
	deletes := c.cfg.DeleteLateWrites
	c.log.Warn("a committed record is about a forgotten subject (a late write)", "store", string(store), "table", table,
		"subject_hmac", c.HashSubject(subject).String(), "backstop", deletes)
	if !deletes {
		return nil
	}
	sink := c.lateWrites.Load()
	if sink == nil {
		return ErrNoLateWriteSink
	}
	return (*sink).DeleteLateWrite(ctx, store, table, subject)
}
