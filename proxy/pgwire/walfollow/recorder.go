package walfollow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/lethe-privacy/lethe/ledger"
)

// recorder hands the changes a session reads to the ledger in batches,
// one batch at a time in the background while the session reads on, and
// says which position the session may confirm to the server.
//
// A batch that holds only changes of the transaction being read goes to
// the ledger with ObserveNoSync: the session could confirm nothing after
// it anyway. Every other batch goes with Observe, whose fsync makes it and
// every earlier batch durable; only the landing of such a batch moves the
// position the session may confirm. A batch cut without a fsync keeps its
// last change back for the next one, so that the batch that ends a
// transaction is never empty and always has an Observe to make it
// durable.
//
// Memory is bounded by two batches: the one filling and the one in
// flight. The session reads, cuts and lands on one goroutine; only the
// flight's ledger write runs on another.
type recorder struct {
	batch   []ledger.Change // filling
	batchAt time.Time       // when batch's first change was read, or its last one kept back
	spare   []ledger.Change // a landed flight's changes, emptied, for the next batch
	flight  *flight         // the batch being written, if any

	// complete is how many changes at the start of batch belong to
	// transactions read in full (committed).
	complete int
	// durableAt is the position the last durable flight landed covers:
	// every change before it is durable.
	durableAt pglogrepl.LSN
	// unsynced counts the changes committed without a fsync since the
	// last durable flight was cut.
	unsynced int

	// long sums the flights of a transaction read in several batches, up
	// to its durable one; recorded holds the sums once that has landed,
	// until the session takes them for its log.
	long, recorded *longTx
}

// longTx is what recording one transaction read in several batches took.
type longTx struct {
	flights, changes int
	ledger           time.Duration // the flights' ledger writes, summed
	from, to         time.Time     // the first flight's start, the last one's end
}

func (t *longTx) add(f *flight) {
	if t.flights == 0 {
		t.from = f.started
	}
	t.flights++
	t.changes += len(f.changes)
	t.ledger += f.took
	t.to = f.started.Add(f.took)
}

// flight is one batch on its way into the ledger.
type flight struct {
	changes []ledger.Change
	durable bool
	// covers, for a durable flight, is the end of the last transaction
	// read in full at its cut: every change before it is in this flight
	// or an earlier one.
	covers pglogrepl.LSN
	// recorded is how many changes this flight makes durable: its own and
	// the unsynced ones before it.
	recorded int
	late     []lateWrite // for the backstop, once durable
	started  time.Time
	took     time.Duration // the ledger write's
	done     chan struct{}
	err      error // set before done closes
}

// committed notes that every change of the batch belongs to a
// transaction read in full.
func (r *recorder) committed() {
	r.complete = len(r.batch)
}

// cuttable is how many changes of the batch the next flight would take,
// and whether it would be durable.
func (r *recorder) cuttable() (n int, durable bool) {
	durable = r.complete > 0
	n = len(r.batch)
	if !durable && n > 0 {
		n-- // kept back for the Observe that ends the transaction
	}
	return n, durable
}

// due reports whether a flight should leave now: none is in the air and
// the batch is full or has waited interval.
func (r *recorder) due(now time.Time, maxBatch int, interval time.Duration) bool {
	if r.flight != nil {
		return false
	}
	if n, _ := r.cuttable(); n == 0 {
		return false
	}
	return len(r.batch) >= maxBatch || now.Sub(r.batchAt) >= interval
}

// deadline is when the batch is due by age, if a flight could leave then.
func (r *recorder) deadline(interval time.Duration) (time.Time, bool) {
	if r.flight != nil {
		return time.Time{}, false
	}
	if n, _ := r.cuttable(); n == 0 {
		return time.Time{}, false
	}
	return r.batchAt.Add(interval), true
}

// full reports whether the session must wait for the flight before it
// reads on: the batch is full and cannot leave while a flight is in the
// air.
func (r *recorder) full(maxBatch int) bool {
	return r.flight != nil && len(r.batch) >= maxBatch
}

// cut takes the batch into a new flight, which the caller starts (run);
// committed is the end of the last transaction read in full.
// late, the late writes read so far, goes with a durable flight to the
// backstop (lateTaken); a flight without a fsync leaves them to the
// caller for a later, durable one.
func (r *recorder) cut(now time.Time, committed pglogrepl.LSN, late []lateWrite) (f *flight, lateTaken bool) {
	n, durable := r.cuttable()
	f = &flight{changes: r.batch[:n:n], durable: durable, covers: committed, done: make(chan struct{})}
	rest := append(r.spare[:0], r.batch[n:]...)
	r.batch, r.spare = rest, nil
	if len(rest) > 0 {
		r.batchAt = now
	}
	if durable {
		f.recorded = n + r.unsynced
		f.late = late
		r.complete, r.unsynced = 0, 0
	} else {
		r.unsynced += n
	}
	r.flight = f
	return f, durable
}

// land takes the flight back once it is done: landed is false while it
// is in the air (or there is none). A durable flight's landing moves
// durableAt; a failed flight's error is returned.
func (r *recorder) land() (landed bool, err error) {
	f := r.flight
	if f == nil {
		return false, nil
	}
	if !f.landed() {
		return false, nil
	}
	r.flight = nil
	if f.err != nil {
		return true, f.err
	}
	switch {
	case !f.durable:
		if r.long == nil {
			r.long = &longTx{}
		}
		r.long.add(f)
	case r.long != nil:
		r.long.add(f)
		r.recorded, r.long = r.long, nil
	}
	clear(f.changes)
	r.spare = f.changes[:0]
	if f.durable && f.covers > r.durableAt {
		r.durableAt = f.covers
	}
	return true, nil
}

// takeRecorded returns, once, the sums of a transaction read in several
// batches whose durable flight has landed; nil if there is none.
func (r *recorder) takeRecorded() *longTx {
	t := r.recorded
	r.recorded = nil
	return t
}

// confirmable is the position the session may confirm: the end of the
// last transaction read in full when everything read is durable, else
// what the durable flights landed cover.
func (r *recorder) confirmable(committed pglogrepl.LSN) pglogrepl.LSN {
	if len(r.batch) == 0 && r.flight == nil && r.unsynced == 0 {
		return committed
	}
	return r.durableAt
}

// landed reports whether the flight is done.
func (f *flight) landed() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// run writes the flight's changes, and runs after each durable write
// (the backstop for late writes); then it marks the flight done. It is
// the one part of a session that runs beside the reading.
func (f *flight) run(ctx context.Context, l ledger.Observer, afterDurable func(context.Context, *flight) error) {
	defer close(f.done)
	observe := l.ObserveNoSync
	if f.durable {
		observe = l.Observe
	}
	f.started = time.Now()
	err := observe(ctx, f.changes)
	f.took = time.Since(f.started)
	if err != nil {
		f.err = fmt.Errorf("walfollow: recording %d changes in the ledger: %w", len(f.changes), err)
		return
	}
	if f.durable {
		f.err = afterDurable(ctx, f)
	}
}
