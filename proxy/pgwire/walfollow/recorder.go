package walfollow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/lethe-privacy/lethe/ledger"
)

// readAhead is how many flights' worth of changes the session reads ahead
// of the ledger: enough to read a big transaction to its end, so that the
// transactions behind it can overtake it (see heldTx).
const readAhead = 40

// recorder hands the changes a session reads to the ledger in flights,
// one at a time in the background while the session reads on, and says
// which position the session may confirm to the server.
//
// A flight that ends a transaction goes with Observe, whose fsync makes
// it and every earlier flight durable; only the landing of such a flight
// moves the position the session may confirm. A flight of changes of a
// transaction still being read, of a held transaction's first chunks, or
// of the transactions that overtake it, goes with ObserveNoSync. No flight takes the last change read of the
// transaction being read, so that the transaction's end always has a
// change to go with.
//
// A transaction read in full whose changes fill more than one flight is
// held (heldTx): it goes in chunks, and the transactions read after it
// overtake it between two chunks when they touch none of its records.
//
// Memory is bounded: the session reads no more while readAhead flights'
// worth of changes wait and a flight is in the air.
type recorder struct {
	maxBatch int // the most changes one flight takes

	batch   []ledger.Change // read, waiting for a flight, in stream order
	batchAt time.Time       // when batch's oldest change was read
	// ends are the transactions read in full that have changes in batch,
	// in order; complete is the sum of their counts, the changes at the
	// start of batch that belong to them.
	ends     []txEnd
	complete int
	held     *heldTx
	spare    []ledger.Change // a landed flight's changes, emptied, for the next one
	flight   *flight         // the flight in the air, if any

	// durableAt is the position the durable flights landed cover: every
	// change before it is durable.
	durableAt pglogrepl.LSN
	// overtaken is the end of the last transaction that overtook the held
	// one and is durable: durableAt moves to it with the held one's end.
	overtaken pglogrepl.LSN
	// unsynced counts the changes committed without a fsync since the
	// last durable flight was cut.
	unsynced int

	// long sums the flights of a transaction read or held in several
	// flights, up to its durable one; recorded holds the sums once that
	// has landed, until the session takes them for its log.
	long, recorded *longTx
}

// txEnd is one transaction read in full.
type txEnd struct {
	changes int           // how many of its changes are in batch
	end     pglogrepl.LSN // the position after its commit
	late    []lateWrite   // its rows about forgotten subjects
}

// longTx is what recording one transaction in several flights took.
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

// flight is one batch of changes on its way into the ledger.
type flight struct {
	changes []ledger.Change
	durable bool
	// overtakes: the flight holds transactions read after the held one
	// (see heldTx), and is not durable.
	overtakes bool
	// covers, for a durable or overtaking flight, is the end of the last
	// transaction it holds in full: every change before it is in this
	// flight or an earlier one (or in the held transaction, when it
	// overtakes).
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

// commit notes the end of the transaction being read, with its late
// writes.
func (r *recorder) commit(end pglogrepl.LSN, late []lateWrite) {
	n := len(r.batch) - r.complete
	if n == 0 && len(late) == 0 {
		// No change of a followed table (one with changes has at least its
		// last here: no flight takes that before the end is read): the
		// session's committed position covers it.
		return
	}
	r.ends = append(r.ends, txEnd{changes: n, end: end, late: late})
	r.complete = len(r.batch)
}

// pending is how many changes wait for a flight.
func (r *recorder) pending() int {
	n := len(r.batch)
	if r.held != nil {
		n += len(r.held.changes)
	}
	return n
}

// cuttable is how many changes of batch the next flight would take
// outside of a held transaction.
func (r *recorder) cuttable() int {
	n := min(len(r.batch), r.maxBatch)
	if n > r.complete && n == len(r.batch) {
		n-- // kept back for the transaction's end
	}
	return n
}

// due reports whether a flight should leave now: none is in the air, and
// a transaction is held, or the batch is full or has waited interval.
func (r *recorder) due(now time.Time, interval time.Duration) bool {
	if r.flight != nil {
		return false
	}
	if r.held != nil || r.holdable() {
		return true
	}
	if r.cuttable() == 0 {
		return false
	}
	return len(r.batch) >= r.maxBatch || now.Sub(r.batchAt) >= interval
}

// deadline is when the batch is due by age, if a flight could leave then.
func (r *recorder) deadline(interval time.Duration) (time.Time, bool) {
	if r.flight != nil || r.cuttable() == 0 {
		return time.Time{}, false
	}
	return r.batchAt.Add(interval), true
}

// full reports whether the session must wait for the flight before it
// reads on.
func (r *recorder) full() bool {
	return r.flight != nil && r.pending() >= readAhead*r.maxBatch
}

// cut takes the next flight's changes, which the caller starts (run).
// Call it only when due.
func (r *recorder) cut(now time.Time) *flight {
	if r.held == nil && r.holdable() {
		r.hold()
	}
	f := &flight{done: make(chan struct{})}
	if r.held == nil {
		r.takeBatch(f, r.cuttable())
	} else if n := r.overtakers(); n > 0 {
		r.takeBatch(f, n)
		// Without a fsync, which would flush the held transaction's
		// chunks too, again and again: its last chunk makes them durable,
		// and takes their late writes to the backstop.
		f.overtakes, f.durable = true, false
		r.held.late, f.late = append(r.held.late, f.late...), nil
	} else {
		r.takeHeld(f)
	}
	if f.durable {
		f.recorded = len(f.changes) + r.unsynced
		r.unsynced = 0
	} else {
		r.unsynced += len(f.changes)
	}
	if len(r.batch) > 0 {
		r.batchAt = now
	}
	r.flight = f
	return f
}

// takeBatch moves the first n changes of batch into f: durable when they
// end at least one transaction.
func (r *recorder) takeBatch(f *flight, n int) {
	f.changes = append(r.spare[:0], r.batch[:n]...)
	r.spare = nil
	r.dropFront(n)
	for len(r.ends) > 0 && r.ends[0].changes <= n {
		e := r.ends[0]
		n -= e.changes
		f.durable, f.covers = true, e.end
		f.late = append(f.late, e.late...)
		r.ends = r.ends[1:]
	}
	if len(r.ends) > 0 {
		r.ends[0].changes -= n
	}
}

// dropFront removes the first n changes of batch, which went into a
// flight or a held transaction. The array's front is not reused: the next
// growth of batch copies what is left into a new one.
func (r *recorder) dropFront(n int) {
	clear(r.batch[:n])
	if n == len(r.batch) {
		r.batch = r.batch[:0]
	} else {
		r.batch = r.batch[n:]
	}
	r.complete = max(0, r.complete-n)
}

// land takes the flight back once it is done: landed is false while it
// is in the air (or there is none). A durable flight's landing moves
// durableAt; a failed flight's error is returned.
func (r *recorder) land() (landed bool, err error) {
	f := r.flight
	if f == nil || !f.landed() {
		return false, nil
	}
	r.flight = nil
	if f.err != nil {
		return true, f.err
	}
	switch {
	case f.overtakes:
		r.overtaken = max(r.overtaken, f.covers)
	case !f.durable:
		if r.long == nil {
			r.long = &longTx{}
		}
		r.long.add(f)
	case r.long != nil:
		r.long.add(f)
		r.recorded, r.long = r.long, nil
	}
	if f.durable && !f.overtakes {
		r.durableAt = max(r.durableAt, f.covers, r.overtaken)
		r.overtaken = 0
	}
	clear(f.changes)
	r.spare = f.changes[:0]
	return true, nil
}

// takeRecorded returns, once, the sums of a transaction recorded in
// several flights whose durable flight has landed; nil if there is none.
func (r *recorder) takeRecorded() *longTx {
	t := r.recorded
	r.recorded = nil
	return t
}

// confirmable is the position the session may confirm: the end of the
// last transaction read in full when everything read is durable, else
// what the durable flights landed cover.
func (r *recorder) confirmable(committed pglogrepl.LSN) pglogrepl.LSN {
	if r.pending() == 0 && r.flight == nil && r.unsynced == 0 {
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
func (f *flight) run(ctx context.Context, core Core, afterDurable func(context.Context, *flight) error) {
	defer close(f.done)
	f.started = time.Now()
	err := core.Observe(ctx, f.changes, f.durable)
	f.took = time.Since(f.started)
	if err != nil {
		f.err = fmt.Errorf("walfollow: recording %d changes in the ledger: %w", len(f.changes), err)
		return
	}
	if f.durable {
		f.err = afterDurable(ctx, f)
	}
}
