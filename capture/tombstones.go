package capture

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Tombstones is the set of forgotten subjects the proxy keeps out. Reads
// (one per tagged subject, on the relay's path) take no lock: the set is
// replaced whole, copy on write, when it changes.
type Tombstones struct {
	mu  sync.Mutex // serialises writers
	set atomic.Pointer[map[ledger.SubjectHash]struct{}]
}

// NewTombstones returns an empty set.
func NewTombstones() *Tombstones {
	t := &Tombstones{}
	t.set.Store(&map[ledger.SubjectHash]struct{}{})
	return t
}

// Has reports whether subject is tombstoned.
func (t *Tombstones) Has(subject ledger.SubjectHash) bool {
	_, ok := (*t.set.Load())[subject]
	return ok
}

// Len is the number of tombstoned subjects.
func (t *Tombstones) Len() int { return len(*t.set.Load()) }

// Set adds (on) or removes a subject at once: the local engine calls it
// as soon as a forget is accepted or a tombstone lifted.
func (t *Tombstones) Set(subject ledger.SubjectHash, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.set.Load()
	next := make(map[ledger.SubjectHash]struct{}, len(old)+1)
	for k := range old {
		next[k] = struct{}{}
	}
	if on {
		next[subject] = struct{}{}
	} else {
		delete(next, subject)
	}
	t.set.Store(&next)
}

// Refresh replaces the set with the journal's tombstones.
func (t *Tombstones) Refresh(ctx context.Context, j ledger.Journal) error {
	list, err := j.Tombstones(ctx)
	if err != nil {
		return err
	}
	next := make(map[ledger.SubjectHash]struct{}, len(list))
	for _, ts := range list {
		next[ts.Subject] = struct{}{}
	}
	t.mu.Lock()
	t.set.Store(&next)
	t.mu.Unlock()
	return nil
}

// Watch refreshes the set every interval until ctx ends, so that
// tombstones set through another proxy sharing the ledger apply here too.
// A failed refresh keeps the last known set.
func (t *Tombstones) Watch(ctx context.Context, j ledger.Journal, interval time.Duration, log *slog.Logger) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := t.Refresh(ctx, j); err != nil && ctx.Err() == nil {
				log.Warn("could not refresh tombstones; keeping the last known set", "err", err)
			}
		}
	}
}
