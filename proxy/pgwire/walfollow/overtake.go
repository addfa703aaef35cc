package walfollow

import (
	"github.com/jackc/pglogrepl"
	"github.com/lethe-privacy/lethe/ledger"
)

// heldTx is a transaction read in full whose changes fill more than one
// flight. Its changes go to the ledger in chunks of a flight each, without
// a fsync but for the last. Between two chunks, the transactions read
// after it go first (overtake it) when none of their changes could end
// differently in the other order: they touch none of its records,
// truncate none of its tables, and write to none it truncates.
//
// Those that overtake it are committed without a fsync too, and only the
// position the session may confirm keeps the stream's order: it moves
// past the held transaction and those that overtook it once the held
// one's last chunk, fsynced, has made them all durable. After a restart
// the server sends them all again, and recording the same changes again
// gives the same ledger.
type heldTx struct {
	changes []ledger.Change // not yet in a flight
	end     pglogrepl.LSN
	late    []lateWrite
	touched *touched // built at the first look for overtakers
}

// touched is what a held transaction's changes name.
type touched struct {
	records   map[recordKey]struct{}
	tables    map[tableKey]struct{} // written to, deleted from or truncated
	truncated map[tableKey]struct{}
}

type tableKey struct {
	store ledger.Store
	table string
}

type recordKey struct {
	tableKey
	id string
}

func keyOf(c *ledger.Change) tableKey { return tableKey{c.Store, c.Table} }

// holdable reports whether the first transaction read in full must be
// held: it fills more than one flight.
func (r *recorder) holdable() bool {
	return r.held == nil && len(r.ends) > 0 && r.ends[0].changes > r.maxBatch
}

// hold moves the first transaction read in full out of batch into held.
func (r *recorder) hold() {
	e := r.ends[0]
	r.held = &heldTx{changes: r.batch[:e.changes:e.changes], end: e.end, late: e.late}
	r.ends = r.ends[1:]
	if e.changes == len(r.batch) {
		r.batch = nil // the held transaction keeps the array
	} else {
		r.batch = r.batch[e.changes:]
	}
	r.complete -= e.changes
}

// takeHeld moves the held transaction's next chunk into f: the last one
// is durable, and ends the hold.
func (r *recorder) takeHeld(f *flight) {
	h := r.held
	n := min(len(h.changes), r.maxBatch)
	f.changes = append(r.spare[:0], h.changes[:n]...)
	r.spare = nil
	clear(h.changes[:n])
	h.changes = h.changes[n:]
	if len(h.changes) == 0 {
		f.durable, f.covers, f.late = true, h.end, h.late
		r.held = nil
	}
}

// overtakers is how many changes at the start of batch may overtake the
// held transaction: those of the first transactions read in full, as long
// as they fit in one flight and touch nothing of the held one.
func (r *recorder) overtakers() int {
	n := 0
	for _, e := range r.ends {
		if n+e.changes > r.maxBatch || r.held.overlaps(r.batch[n:n+e.changes]) {
			break
		}
		n += e.changes
	}
	return n
}

// overlaps reports whether changes, recorded before the held transaction's
// rest, could leave the ledger otherwise than after it.
func (h *heldTx) overlaps(changes []ledger.Change) bool {
	if h.touched == nil {
		h.touched = touchedBy(h.changes)
	}
	t := h.touched
	for i := range changes {
		c := &changes[i]
		table := keyOf(c)
		if _, ok := t.truncated[table]; ok {
			return true
		}
		switch c.Kind {
		case ledger.ChangeTruncate:
			if _, ok := t.tables[table]; ok {
				return true
			}
		default:
			if _, ok := t.records[recordKey{table, c.RecordID}]; ok {
				return true
			}
		}
	}
	return false
}

func touchedBy(changes []ledger.Change) *touched {
	t := &touched{records: map[recordKey]struct{}{}, tables: map[tableKey]struct{}{}, truncated: map[tableKey]struct{}{}}
	for i := range changes {
		c := &changes[i]
		table := keyOf(c)
		t.tables[table] = struct{}{}
		if c.Kind == ledger.ChangeTruncate {
			t.truncated[table] = struct{}{}
		} else {
			t.records[recordKey{table, c.RecordID}] = struct{}{}
		}
	}
	return t
}
