package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/lethe-privacy/lethe/ledger"
)

// Ledger is what a sweep marks the records it deletes in (Observe,
// as the WAL follower marks rows it sees deleted), and where it finds the
// writes proxies have recorded and not yet confirmed.
type Ledger interface {
	ledger.Observer
	Pending(ctx context.Context) ([]ledger.Intent, error)
}

// An open ledger, whichever its backend, is a Ledger.
var _ Ledger = (*ledger.Handle)(nil)

// DefaultPendingWait is how long a sweep waits by default for
// proxies to confirm the writes of records it deleted: well past capture's
// confirmation hold (capture.DefaultConfirmHold, 10 s).
const DefaultPendingWait = time.Minute

// pendingPoll is how often a sweep asks the ledger whether those writes
// are confirmed yet.
const pendingPoll = 200 * time.Millisecond

// heldWrites are the records a sweep marked deleted while a proxy's
// intent naming them was still pending. A proxy holds its confirmations
// for a while before the ledger has them (capture's ConfirmHold), so a
// record written a moment before the sweep deleted it is confirmed after
// the sweep marked it deleted, and the confirmation would list it again
// as present. The sweep notes such intents when it marks a batch, waits
// at its end until they are resolved, and marks their records deleted
// again. An intent made after the mark is a write after the delete, and
// is left alone.
type heldWrites struct {
	ledger  Ledger
	intents map[ledger.IntentID]bool
	marked  map[sweptRecord]bool
	changes []ledger.Change
}

// sweptRecord is a record a sweep deleted, as the ledger names it.
type sweptRecord struct {
	store     ledger.Store
	table, id string
}

func newHeldWrites(l Ledger) *heldWrites {
	return &heldWrites{ledger: l, intents: map[ledger.IntentID]bool{}, marked: map[sweptRecord]bool{}}
}

// note records the pending intents that name one of ids, just marked
// deleted in table of store.
func (h *heldWrites) note(ctx context.Context, store ledger.Store, table string, ids []string) error {
	pending, err := h.ledger.Pending(ctx)
	if err != nil {
		return fmt.Errorf("reading the writes proxies have not confirmed yet: %w", err)
	}
	if len(pending) == 0 {
		return nil
	}
	swept := make(map[string]bool, len(ids))
	for _, id := range ids {
		swept[id] = true
	}
	for _, in := range pending {
		for _, e := range in.Entries {
			if e.Store != store || e.Table != table || !swept[e.RecordID] {
				continue
			}
			h.intents[in.ID] = true
			if r := (sweptRecord{store, table, e.RecordID}); !h.marked[r] {
				h.marked[r] = true
				h.changes = append(h.changes, ledger.Change{Kind: ledger.ChangeDelete, Store: store, Table: table, RecordID: e.RecordID})
			}
		}
	}
	return nil
}

// settle waits, up to wait, until no noted intent younger than wait is
// pending, then marks the noted records deleted again. It returns how
// many noted intents were still pending. An older intent is one a proxy
// that crashed left (a live one confirms within its hold), which the
// ledger cannot tell from a live proxy's for a SQLite ledger (every other
// handle's intents are its orphans), and which recovery resolves later,
// or nothing does (Pinecone's): the sweep does not wait for it.
func (h *heldWrites) settle(ctx context.Context, wait time.Duration) (int, error) {
	if len(h.changes) == 0 {
		return 0, nil
	}
	deadline := time.Now().Add(wait)
	left, err := h.pending(ctx, wait)
	for err == nil && left > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(pendingPoll):
		}
		left, err = h.pending(ctx, wait)
	}
	if err != nil {
		return left, err
	}
	if err := h.ledger.Observe(ctx, h.changes); err != nil {
		return left, err
	}
	return left, nil
}

// pending counts the noted intents still pending and younger than wait.
func (h *heldWrites) pending(ctx context.Context, wait time.Duration) (int, error) {
	pending, err := h.ledger.Pending(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the writes proxies have not confirmed yet: %w", err)
	}
	n := 0
	for _, in := range pending {
		if h.intents[in.ID] && time.Since(in.CreatedAt) < wait {
			n++
		}
	}
	return n, nil
}
