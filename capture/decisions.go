package capture

import (
	"context"
	"sync"
	"time"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// Decisions receives a relay's verdicts on intents: Capture implements it,
// and a relay's transaction tracker reports to it.
type Decisions interface {
	// Confirm: the writes of these intents committed.
	Confirm(ids []ledger.IntentID)
	// Drop: the writes of these intents certainly did not commit.
	Drop(ids []ledger.IntentID)
	// Deleted: the application's deletes of these records of store
	// committed.
	Deleted(store ledger.Store, deletes []extract.Tag)
}

// Confirm, Drop and Deleted implement Decisions. They queue the verdict for
// the background worker and return at once (confirmations are held to be
// committed together, see DefaultConfirmHold); the caller must not modify
// the slice afterwards.
func (c *Capture) Confirm(ids []ledger.IntentID) { c.queue.put(decision{confirm: true, ids: ids}) }
func (c *Capture) Drop(ids []ledger.IntentID)    { c.queue.put(decision{ids: ids}) }
func (c *Capture) Deleted(store ledger.Store, tags []extract.Tag) {
	c.queue.put(decision{store: store, deletes: tags})
}

// ConfirmMoved is Confirm for writes that gave records of store new
// subjects (a Pinecone update whose setMetadata sets every subject
// field): the subjects earlier writes recorded for those records no
// longer hold, so they are marked deleted before the intents are
// confirmed, and the records stay recorded under their new subjects only.
func (c *Capture) ConfirmMoved(store ledger.Store, ids []ledger.IntentID, moved []extract.Tag) {
	c.queue.put(decision{confirm: true, ids: ids, store: store, deletes: moved})
}

// TablesDeleted queues the application's deletes of every record of
// these tables of store (a Pinecone deleteAll or namespace delete), once
// they succeeded. Like Deleted, it comes after the confirmations queued
// before it, so that a record written before the delete is not confirmed
// again after it.
func (c *Capture) TablesDeleted(store ledger.Store, tables []string) {
	if len(tables) == 0 {
		return
	}
	c.queue.put(decision{store: store, tables: tables})
}

// AfterQueued calls fn, on the decision worker, once every decision
// queued before it has reached the ledger (held confirmations are
// committed first, as before a delete): a relay that must read the
// ledger as its writes left it (the Pinecone wing settling a delete by
// filter) asks it so. fn must not block; it is not called when the core
// closes first.
func (c *Capture) AfterQueued(fn func()) { c.queue.put(decision{after: fn}) }

// decision is a Confirm, Drop or application delete handed to the
// background worker: the intents are already durable, so the relay need
// not wait for this write; one lost in a crash leaves the intent pending,
// which recovery resolves.
type decision struct {
	confirm bool
	ids     []ledger.IntentID
	store   ledger.Store // of deletes and tables
	deletes []extract.Tag
	tables  []string // every record of these tables deleted
	after   func()   // AfterQueued's fn
}

// heldOnly reports whether d only adds confirmations to those held.
func (d decision) heldOnly() bool { return d.confirm && len(d.deletes) == 0 && len(d.tables) == 0 }

// decisionQueue hands decisions to the worker in order. A relay's
// confirmation wakes the worker only when the worker holds none (it then
// starts its hold): the others of the hold wait in the queue without a
// wake-up each, which a channel would cost.
type decisionQueue struct {
	mu    sync.Mutex
	roomy sync.Cond // signalled when the worker takes the queue
	items []decision
	// holdRoom > 0: the worker's hold is running, and confirmations need
	// not wake it until it could take this many more ids.
	holdRoom  int
	queuedIDs int
	closed    bool
	wake      chan struct{}
}

// maxQueued bounds the decisions queued; a relay deciding more waits for
// the worker (whose confirmations wait for the ledger).
const maxQueued = 4096

func (q *decisionQueue) init() {
	q.roomy.L = &q.mu
	q.wake = make(chan struct{}, 1)
}

// put queues d. After close, d is dropped: its intents stay pending, and
// recovery resolves them at the next start.
func (q *decisionQueue) put(d decision) {
	if d.heldOnly() && len(d.ids) == 0 {
		return // nothing to decide, and it would not count towards a wake-up
	}
	q.mu.Lock()
	for len(q.items) >= maxQueued && !q.closed {
		q.roomy.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, d)
	q.queuedIDs += len(d.ids)
	signal := !d.heldOnly() || q.queuedIDs >= q.holdRoom
	q.mu.Unlock()
	if signal {
		q.signal()
	}
}

func (q *decisionQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

func (q *decisionQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.roomy.Broadcast()
	q.mu.Unlock()
	q.signal()
}

// take returns what is queued and whether the queue is closed.
func (q *decisionQueue) take() ([]decision, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items, q.queuedIDs = nil, 0
	q.roomy.Broadcast()
	return items, q.closed
}

// setHolding records how many more confirmations the worker may hold
// (0: its hold is not running), and reports whether decisions were queued
// since it last took them.
func (q *decisionQueue) setHolding(room int) (queued bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.holdRoom = room
	return len(q.items) > 0
}

// decisionWorkers bounds the ledger calls in flight; running them
// concurrently lets the ledger's group commit put many in one transaction.
const decisionWorkers = 64

// DefaultConfirmHold is how long confirmations wait to be committed
// together (Config.ConfirmHold). A confirmation writes one page of the
// ledger's subject index per subject it names; one transaction for many
// statements writes each shared page once. It delays only the pending →
// confirmed step, which nothing waits for: a pending intent is durable,
// forget treats it as a candidate, and a crash meanwhile leaves it for
// recovery. The longer the hold, the fewer times a busy subject's page is
// rewritten (the ingest benchmark in docs/benchmarks.md weighs it).
const DefaultConfirmHold = 10 * time.Second

func (c *Capture) confirmHold() time.Duration {
	if c.cfg.ConfirmHold <= 0 {
		return DefaultConfirmHold
	}
	return c.cfg.ConfirmHold
}

// maxHeldConfirms flushes held confirmations early under heavy load; the
// ledger commits them in transactions of up to 256.
const maxHeldConfirms = 1024

// confirmChunk is how many confirmations one worker hands the ledger at
// once (ConfirmAll): a transaction's worth.
const confirmChunk = 256

// decide is the background worker: it takes the queued decisions in order,
// holds confirmations (confirmHold) and hands them to the ledger together.
func (c *Capture) decide() {
	defer close(c.done)
	var wg sync.WaitGroup
	sem := make(chan struct{}, decisionWorkers)
	run := func(confirm bool, ids []ledger.IntentID) {
		for len(ids) > 0 {
			n := 1
			if confirm {
				n = min(len(ids), confirmChunk)
			}
			chunk := ids[:n]
			ids = ids[n:]
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				c.apply(confirm, chunk)
			}()
		}
	}
	var held []ledger.IntentID
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	flush := func() {
		run(true, held)
		held = nil
		hold.Stop()
	}
	holdEnded := false
	for {
		items, closed := c.queue.take()
		for _, d := range items {
			if d.after != nil {
				flush()
				wg.Wait()
				d.after()
				continue
			}
			if len(d.deletes) > 0 || len(d.tables) > 0 {
				// Confirmations first, committed, in the order they were
				// queued: a confirmation after the delete would mark the
				// record confirmed again.
				flush()
				wg.Wait()
				c.markDeleted(d.store, d.deletes)
				c.markTablesDeleted(d.store, d.tables)
			}
			if !d.confirm {
				run(false, d.ids)
				continue
			}
			if len(held) == 0 && len(d.ids) > 0 {
				hold.Reset(c.confirmHold())
			}
			held = append(held, d.ids...)
		}
		if closed {
			flush()
			wg.Wait()
			return
		}
		if holdEnded || len(held) >= maxHeldConfirms {
			flush()
		}
		holdEnded = false
		// Confirmations queued while the worker held some did not wake
		// it; once it holds none, it takes them at once.
		room := 0
		if len(held) > 0 {
			room = maxHeldConfirms - len(held)
		}
		if queued := c.queue.setHolding(room); queued && len(held) == 0 {
			continue
		}
		select {
		case <-c.queue.wake:
		case <-hold.C:
			holdEnded = true
		}
	}
}

// apply confirms or drops ids: confirmations together, drops one by one
// (run hands it one).
func (c *Capture) apply(confirm bool, ids []ledger.IntentID) {
	if c.abandoned() {
		c.skipped.Add(int64(len(ids)))
		return
	}
	ctx, cancel := context.WithTimeout(c.decideCtx, 30*time.Second)
	defer cancel()
	var errs []error
	if confirm {
		errs = c.cfg.Ledger.ConfirmAll(ctx, ids)
	} else {
		for _, id := range ids {
			errs = append(errs, c.cfg.Ledger.Drop(ctx, id))
		}
	}
	for i, err := range errs {
		switch {
		case err == nil:
		case c.abandoned():
			c.skipped.Add(1) // may still be committed: the ledger's batch was under way
		default:
			c.Stats.DecisionErrors.Add(1)
			c.log.Warn("ledger decision failed; the intent stays pending for recovery",
				"intent", int64(ids[i]), "confirm", confirm, "err", err)
		}
	}
}

// abandoned reports whether a shutdown ran out of time (see Shutdown).
// Only decide's goroutines ask, and only before done is closed: the
// normal end of Shutdown cancels decideCtx after done.
func (c *Capture) abandoned() bool { return c.decideCtx.Err() != nil }

// markDeleted records the application's committed deletes. Confirmations
// queued before them have been handed out already; a delete that races a
// confirmation of the same record is re-checked by forget in the store.
func (c *Capture) markDeleted(store ledger.Store, tags []extract.Tag) {
	if c.abandoned() {
		return // forget checks the store, so a missed mark costs nothing
	}
	if len(tags) == 0 {
		return
	}
	byTable := map[string][]string{}
	for _, t := range tags {
		byTable[t.Table] = append(byTable[t.Table], t.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for table, ids := range byTable {
		if err := c.cfg.Ledger.MarkDeleted(ctx, store, table, ids); err != nil {
			c.Stats.DecisionErrors.Add(1)
			c.log.Warn("ledger could not mark deleted records; forget will find them gone", "table", table, "err", err)
		}
	}
}

// markTablesDeleted records the application's committed deletes of every
// record of these tables, as markDeleted does for deletes by id.
func (c *Capture) markTablesDeleted(store ledger.Store, tables []string) {
	if len(tables) == 0 || c.abandoned() {
		return // forget checks the store, so a missed mark costs nothing
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, table := range tables {
		if err := c.cfg.Ledger.MarkTableDeleted(ctx, store, table); err != nil {
			c.Stats.DecisionErrors.Add(1)
			c.log.Warn("ledger could not mark a deleted table's records; forget will find them gone", "store", string(store), "err", err)
		}
	}
}
