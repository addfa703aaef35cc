package pinecone

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxBufferedBytes bounds the request bodies the relay holds in
// memory at once when Config leaves it out.
const DefaultMaxBufferedBytes = 256 << 20

// defaultBufferWait is how long a request waits for room in the budget.
const defaultBufferWait = 30 * time.Second

// bodyBudget is the memory all request bodies being read or relayed may
// take: a body is charged in the steps its buffer grows, each step at most
// doubling what has arrived (the first is 4 KiB) or, once an eighth of
// the size it declares has arrived, that size; and released when its
// request is done. So clients that declare large bodies and send nothing
// hold almost nothing, while many clients sending at once make others
// wait instead of growing the proxy's memory; a body that does not arrive
// within the body timeout is answered DEADLINE_EXCEEDED and returns its
// share.
//
// A body that waits for a step holds the steps it took, so bodies that
// each hold part of what they need could wait for each other until the
// buffer wait ends. A step is therefore granted only if, after it, every
// body could still grow to the most it may need (see bodyShare.most) in
// some order, each finishing and returning its share to the next (the
// banker's algorithm, for one resource): bodies then wait only for bodies
// that can finish.
type bodyBudget struct {
	size    int64
	wait    time.Duration
	charged atomic.Int64 // what bodies hold; changed under mu, read anywhere (BufferedBytes)

	mu      sync.Mutex
	shares  []*bodyShare
	freed   chan struct{} // closed, and replaced, when a share is returned
	scratch []bodyNeed    // safe's, kept to spare an allocation per step
}

// bodyShare is one body's part of the budget.
type bodyShare struct {
	held int64
	// most is the largest buffer the body may come to hold: the size it
	// declares (a REST Content-Length, a gRPC message's prefix), else the
	// largest a body may be; never more than the budget. A body that
	// outgrows what it declared (a gRPC body of several messages) raises
	// it with its step, which then waits like any other.
	most  int64
	index int // in bodyBudget.shares; -1 while not in it
}

type bodyNeed struct{ need, held int64 }

func newBodyBudget(size int64, wait time.Duration) *bodyBudget {
	if size <= 0 {
		size = DefaultMaxBufferedBytes
	}
	if wait <= 0 {
		wait = defaultBufferWait
	}
	return &bodyBudget{size: size, wait: wait, freed: make(chan struct{})}
}

// BufferedBytes is the memory request bodies hold now (a metric).
func (p *Relay) BufferedBytes() int64 { return p.bodies.charged.Load() }

// errBudget is a request that waited too long for room in the budget.
var errBudget = errors.New("request bodies in memory are at pinecone.max_buffered_size")

// acquire charges share grow bytes more, the body now expecting to hold
// at most most bytes, once that is safe; it waits until then or ctx ends.
func (b *bodyBudget) acquire(ctx context.Context, share *bodyShare, grow, most int64) error {
	for {
		b.mu.Lock()
		if share.index < 0 {
			share.index = len(b.shares)
			b.shares = append(b.shares, share)
		}
		share.most = min(max(share.most, most, share.held+grow), b.size)
		if b.safe(share, grow) {
			share.held += grow
			b.charged.Add(grow)
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// safe reports whether, share holding grow bytes more, the bodies could
// all grow to their most, taken in the order of what they still need;
// b.mu is held.
func (b *bodyBudget) safe(share *bodyShare, grow int64) bool {
	free := b.size - b.charged.Load() - grow
	if free < 0 {
		return false
	}
	needs, room := b.scratch[:0], true
	for _, s := range b.shares {
		held := s.held
		if s == share {
			held += grow
		}
		need := max(s.most-held, 0)
		room = room && need <= free
		needs = append(needs, bodyNeed{need: need, held: held})
	}
	b.scratch = needs[:0]
	if room { // each could finish on what is free now: the usual case
		return true
	}
	slices.SortFunc(needs, func(x, y bodyNeed) int { return cmp.Compare(x.need, y.need) })
	for _, n := range needs {
		if n.need > free {
			return false
		}
		free += n.held
	}
	return true
}

// release returns all share holds and takes it out of the budget.
func (b *bodyBudget) release(share *bodyShare) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if share.index >= 0 {
		last := len(b.shares) - 1
		b.shares[share.index] = b.shares[last]
		b.shares[share.index].index = share.index
		b.shares[last] = nil
		b.shares = b.shares[:last]
		share.index = -1
	}
	if share.held == 0 {
		return
	}
	b.charged.Add(-share.held)
	share.held = 0
	close(b.freed)
	b.freed = make(chan struct{})
}
