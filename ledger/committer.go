package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// opKind is the kind of write a request carries to the committer.
type opKind int

const (
	opIntend opKind = iota
	opConfirm
	opDrop
	opMarkDeleted
	opMarkTableDeleted
	// opMarkDeletedUnlessConfirmedSince marks records deleted unless one
	// of their subjects was confirmed since a time (settle.go).
	opMarkDeletedUnlessConfirmedSince
	// opClearPending deletes resolved intents from SQLite's pending file
	// (sqlite_pending.go).
	opClearPending
)

// request is one caller's write, waiting for the committer.
type request struct {
	ctx  context.Context
	kind opKind

	entries   []Entry   // opIntend
	intent    IntentID  // opConfirm, opDrop
	store     Store     // the opMark… kinds
	table     string    // the opMark… kinds
	recordIDs []string  // opMarkDeleted, opMarkDeletedUnlessConfirmedSince
	since     time.Time // opMarkDeletedUnlessConfirmedSince
	idsJSON   string    // opClearPending: the intents, a JSON array

	// Set by the backend while it runs the batch; only delivered to the
	// caller once the batch has committed.
	id     IntentID // opIntend: the new intent
	marked int      // opMarkDeletedUnlessConfirmedSince: the records marked
	opErr  error    // a refusal that does not abort the transaction (e.g. ErrUnknownIntent)

	done chan error
}

// batchWriter runs one batch of requests in one transaction and commits it.
// It sets req.id and req.opErr for each request; a returned error means the
// transaction did not commit (and nothing in it is durable).
type batchWriter func(ctx context.Context, now time.Time, batch []*request) error

// committer is the group commit: one goroutine takes every write request,
// gathers the ones that arrive close together and commits them in one
// transaction, so that N concurrent Intend calls cost one fsync, not N.
//
// Intents go first. The proxy holds a client's Sync until its intent is
// durable, whereas confirmations, drops and deletions wait for nobody, and
// a batch of them is heavy (each confirmation expands an intent's entries
// into indexed rows). So the intents of a gathered batch commit in a
// transaction of their own, before its other requests. (SQLite goes
// further: its intents have a committer and a file of their own, see
// sqlite_pending.go.)
type committer struct {
	write    batchWriter
	log      *slog.Logger
	window   time.Duration
	maxBatch int
	timeout  time.Duration

	// fence, when set, is asked before each intent is queued; an error
	// refuses the intent (a PostgreSQL handle whose lease has lapsed, see
	// lease.check). It costs no round trip.
	fence func() error

	// Committed transactions and the requests they carried (for tests
	// and, later, metrics).
	batches, requests atomic.Int64

	mu     sync.RWMutex // guards closed against sends on a closed reqs
	closed bool
	reqs   chan *request
	done   chan struct{}
}

func newCommitter(write batchWriter, opts Options) *committer {
	c := &committer{
		write:    write,
		log:      opts.logger(),
		window:   opts.commitWindow(),
		maxBatch: opts.maxBatch(),
		timeout:  opts.commitTimeout(),
		reqs:     make(chan *request, opts.maxBatch()),
		done:     make(chan struct{}),
	}
	go c.run()
	return c
}

// ErrClosed is returned for writes submitted after Close, and by
// PendingOrphans after Close; it wraps ErrUnavailable. Background loops
// over a ledger (periodic recovery) stop on it.
var ErrClosed = fmt.Errorf("%w: the ledger is closed", ErrUnavailable)

// submit hands r to the committer and waits until it is durable (nil),
// refused, or ctx ends. When ctx ends first the write may still commit
// later; an intent left that way shows up in Pending.
func (c *committer) submit(r *request) error {
	if err := c.queue(r); err != nil {
		return err
	}
	return r.wait()
}

// queue hands r to the committer; r.wait then waits for the outcome.
func (c *committer) queue(r *request) error {
	r.done = make(chan error, 1)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	select {
	case c.reqs <- r:
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// wait waits until the queued r is durable (nil), refused, or its
// context ends.
func (r *request) wait() error {
	select {
	case err := <-r.done:
		return err
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// submitAll is submit for many requests of one context: every request is
// queued before any is waited for, so that the committer takes them in as
// few transactions as its batches allow, and the caller wakes once per
// batch rather than once per request. errs[i] is rs[i]'s outcome.
func (c *committer) submitAll(ctx context.Context, rs []*request) []error {
	errs := make([]error, len(rs))
	queued := 0
	c.mu.RLock()
	notQueued := ErrClosed
	if !c.closed {
	queue:
		for _, r := range rs {
			r.ctx, r.done = ctx, make(chan error, 1)
			select {
			case c.reqs <- r:
				queued++
			case <-ctx.Done():
				notQueued = ctx.Err()
				break queue
			}
		}
	}
	c.mu.RUnlock()
	for i, r := range rs {
		if i >= queued {
			errs[i] = notQueued
			continue
		}
		select {
		case errs[i] = <-r.done:
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
	return errs
}

// isClosed reports whether close has been called.
func (c *committer) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// close stops accepting requests, commits the ones already queued and waits
// for the committer to exit.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.reqs)
	}
	c.mu.Unlock()
	<-c.done
}

func (c *committer) run() {
	defer close(c.done)
	for {
		first, ok := <-c.reqs
		if !ok {
			return
		}
		intents, others := c.gather(first)
		if len(intents) > 0 {
			c.commit(intents)
		}
		if len(others) > 0 {
			c.commit(others)
		}
	}
}

// gather collects first and what is queued behind it, intents apart from
// other requests, until maxBatch requests, the window has passed, or the
// queue is empty (with a window of 0, it takes only what is already
// queued: requests that arrived during the previous commit).
func (c *committer) gather(first *request) (intents, others []*request) {
	add := func(r *request) {
		if r.kind == opIntend {
			intents = append(intents, r)
		} else {
			others = append(others, r)
		}
	}
	add(first)
	var timeout <-chan time.Time
	if c.window > 0 {
		t := time.NewTimer(c.window)
		defer t.Stop()
		timeout = t.C
	}
	for len(intents)+len(others) < c.maxBatch {
		if timeout == nil {
			select {
			case r, ok := <-c.reqs:
				if !ok {
					return intents, others
				}
				add(r)
				continue
			default:
				return intents, others
			}
		}
		select {
		case r, ok := <-c.reqs:
			if !ok {
				return intents, others
			}
			add(r)
		case <-timeout:
			return intents, others
		}
	}
	return intents, others
}

// commit writes batch in one transaction. If the transaction fails, each
// request is retried in a transaction of its own, so that one bad request
// cannot fail its neighbours; requests whose caller has gone are skipped.
func (c *committer) commit(batch []*request) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	err := c.try(live)
	if err == nil {
		c.batches.Add(1)
		c.requests.Add(int64(len(live)))
		for _, r := range live {
			r.done <- r.opErr
		}
		return
	}
	if len(live) == 1 {
		live[0].done <- unavailable(err)
		return
	}
	for _, r := range live {
		if err := c.try([]*request{r}); err != nil {
			r.done <- unavailable(err)
			continue
		}
		c.batches.Add(1)
		c.requests.Add(1)
		r.done <- r.opErr
	}
}

func (c *committer) try(batch []*request) error {
	for _, r := range batch {
		r.id, r.marked, r.opErr = 0, 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// Microseconds: what PostgreSQL's timestamptz keeps, so both backends
	// return the same times.
	start := time.Now()
	err := c.write(ctx, start.UTC().Truncate(time.Microsecond), batch)
	if took := time.Since(start); took >= slowCommit && holdsIntent(batch) {
		c.log.Warn("ledger: a commit of intents was slow; the writes waiting for it were held as long (a busy disk?)",
			"took", took.Round(time.Millisecond), "requests", len(batch))
	}
	return err
}

// slowCommit is how long a commit that writes wait for may take before it
// is logged.
const slowCommit = 250 * time.Millisecond

// unavailable wraps err with ErrUnavailable unless it already is.
func unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// holdsIntent reports whether a batch makes an intent durable, which must
// reach the disk before Intend returns.
func holdsIntent(batch []*request) bool {
	for _, r := range batch {
		if r.kind == opIntend {
			return true
		}
	}
	return false
}
