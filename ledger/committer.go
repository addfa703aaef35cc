package ledger

import (
	"context"
	"errors"
	"fmt"
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
)

// request is one caller's write, waiting for the committer.
type request struct {
	ctx  context.Context
	kind opKind

	entries   []Entry  // opIntend
	intent    IntentID // opConfirm, opDrop
	store     Store    // opMarkDeleted
	table     string   // opMarkDeleted
	recordIDs []string // opMarkDeleted

	// Set by the backend while it runs the batch; only delivered to the
	// caller once the batch has committed.
	id    IntentID // opIntend: the new intent
	opErr error    // a refusal that does not abort the transaction (e.g. ErrUnknownIntent)

	done chan error
}

// batchWriter runs one batch of requests in one transaction and commits it.
// It sets req.id and req.opErr for each request; a returned error means the
// transaction did not commit (and nothing in it is durable). It may stop
// after any request once yield reports that an intent is waiting, and
// commit what it ran: it returns how many requests that was (a nil yield
// never stops it).
type batchWriter func(ctx context.Context, now time.Time, batch []*request, yield func() bool) (int, error)

// committer is the group commit: one goroutine takes every write request,
// gathers the ones that arrive close together and commits them in one
// transaction, so that N concurrent Intend calls cost one fsync, not N.
//
// Intents go first. The proxy holds a client's Sync until its intent is
// durable, whereas confirmations, drops and deletions wait for nobody; and
// a batch of confirmations is heavy (each expands an intent's entries into
// indexed rows: ~60 ms for 3,500 entries on a busy 2-core host). So the
// intents of a gathered batch are committed before its other requests, and
// a transaction of other requests commits early, at the next request
// boundary, as soon as an intent is queued; the rest waits for the next
// round. An intent then waits for at most one other request.
type committer struct {
	write    batchWriter
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
	// queuedIntents counts intents sent to reqs and not yet gathered.
	queuedIntents atomic.Int64
}

func newCommitter(write batchWriter, opts Options) *committer {
	c := &committer{
		write:    write,
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
	r.done = make(chan error, 1)
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	if r.kind == opIntend {
		c.queuedIntents.Add(1)
	}
	select {
	case c.reqs <- r:
	case <-r.ctx.Done():
		if r.kind == opIntend {
			c.queuedIntents.Add(-1)
		}
		c.mu.RUnlock()
		return r.ctx.Err()
	}
	c.mu.RUnlock()
	select {
	case err := <-r.done:
		return err
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
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
	var backlog []*request // requests other than intents, oldest first
	for {
		var first *request
		if len(backlog) == 0 {
			r, ok := <-c.reqs
			if !ok {
				return
			}
			first = r
		}
		intents, others := c.gather(first)
		backlog = append(backlog, others...)
		if len(intents) > 0 {
			c.commit(intents, nil)
		}
		if len(backlog) > 0 {
			n := min(len(backlog), c.maxBatch)
			rest := c.commit(backlog[:n], c.intentWaiting)
			backlog = append(rest, backlog[n:]...)
		}
	}
}

func (c *committer) intentWaiting() bool { return c.queuedIntents.Load() > 0 }

// gather collects what is queued, intents apart from other requests,
// until maxBatch requests, the window has passed after first, or the queue
// is empty (without first, or with a window of 0, it takes only what is
// already queued: requests that arrived during the previous commit).
func (c *committer) gather(first *request) (intents, others []*request) {
	add := func(r *request) {
		if r.kind == opIntend {
			c.queuedIntents.Add(-1)
			intents = append(intents, r)
		} else {
			others = append(others, r)
		}
	}
	var timeout <-chan time.Time
	if first != nil {
		add(first)
		if c.window > 0 {
			t := time.NewTimer(c.window)
			defer t.Stop()
			timeout = t.C
		}
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

// commit writes batch in one transaction, or as much of it as the backend
// ran before yield stopped it, and returns the requests it did not run. If
// the transaction fails, each request is retried in a transaction of its
// own, so that one bad request cannot fail its neighbours; requests whose
// caller has gone are skipped.
func (c *committer) commit(batch []*request, yield func() bool) (rest []*request) {
	live := make([]*request, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return nil
	}
	n, err := c.try(live, yield)
	if err == nil {
		c.batches.Add(1)
		c.requests.Add(int64(n))
		for _, r := range live[:n] {
			r.done <- r.opErr
		}
		return live[n:]
	}
	if len(live) == 1 {
		live[0].done <- unavailable(err)
		return nil
	}
	for _, r := range live {
		one := []*request{r}
		if _, err := c.try(one, nil); err != nil {
			r.done <- unavailable(err)
			continue
		}
		c.batches.Add(1)
		c.requests.Add(1)
		r.done <- r.opErr
	}
	return nil
}

func (c *committer) try(batch []*request, yield func() bool) (int, error) {
	for _, r := range batch {
		r.id, r.opErr = 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// Microseconds: what PostgreSQL's timestamptz keeps, so both backends
	// return the same times.
	return c.write(ctx, time.Now().UTC().Truncate(time.Microsecond), batch, yield)
}

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
