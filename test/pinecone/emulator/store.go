package emulator

import (
	"sync"
	"time"
)

// defaultNamespace is the name Pinecone gives the namespace addressed by an
// empty or absent namespace field.
const defaultNamespace = "__default__"

// SparseValues is a sparse vector: parallel index and value lists.
type SparseValues struct {
	Indices []uint32  `json:"indices"`
	Values  []float32 `json:"values"`
}

// Vector is one stored record. Metadata holds JSON values: nil, bool,
// float64, string, []any and map[string]any.
type Vector struct {
	ID       string
	Values   []float32
	Sparse   *SparseValues
	Metadata map[string]any
}

// record is a Vector with its deletion state: a deleted record stays visible
// until deletedAt+delay, which is how the emulator shows eventual consistency.
type record struct {
	Vector
	deletedAt time.Time
}

// pendingDelete remembers the log sequence number of a delete that readers
// cannot see yet, so the max indexed LSN stays below it until it is visible.
type pendingDelete struct {
	lsn       uint64
	visibleAt time.Time
}

// store holds every namespace of the index. Operations take mu for their
// whole duration, so each one is atomic.
type store struct {
	mu        sync.Mutex
	dimension int
	delay     time.Duration
	now       func() time.Time
	// Log sequence numbers and the deletes readers cannot see yet, per
	// namespace: Pinecone numbers each namespace's writes in its own
	// sequence ("Writes to one namespace do not increase the LSN for other
	// namespaces", its "Check data freshness" guide).
	lsn        map[string]uint64
	pending    map[string][]pendingDelete
	namespaces map[string]map[string]*record
}

func newStore(dimension int, delay time.Duration, now func() time.Time) *store {
	return &store{dimension: dimension, delay: delay, now: now, lsn: map[string]uint64{}, pending: map[string][]pendingDelete{},
		namespaces: map[string]map[string]*record{}}
}

// canonicalNamespace maps "" (and so an absent field) to "__default__".
func canonicalNamespace(ns string) string {
	if ns == "" {
		return defaultNamespace
	}
	return ns
}

// nextLSN numbers a write of namespace ns (canonical); callers hold mu.
func (st *store) nextLSN(ns string) uint64 {
	st.lsn[ns]++
	return st.lsn[ns]
}

// maxIndexedLSN is the highest LSN of namespace ns (canonical) whose
// effects, and all earlier ones, are visible to readers; 0 for a
// namespace never written. Callers hold mu.
func (st *store) maxIndexedLSN(ns string) uint64 {
	now := st.now()
	pending := st.pending[ns]
	for len(pending) > 0 && !now.Before(pending[0].visibleAt) {
		pending = pending[1:]
	}
	st.pending[ns] = pending
	if len(pending) > 0 {
		return pending[0].lsn - 1
	}
	return st.lsn[ns]
}

// indexLSN is what a read of the whole index (stats, the index's
// description) reports: the highest of the namespaces' max indexed LSNs.
// Pinecone does not document it. Callers hold mu.
func (st *store) indexLSN() uint64 {
	var highest uint64
	for ns := range st.lsn {
		highest = max(highest, st.maxIndexedLSN(ns))
	}
	return highest
}

// visible reports whether r is seen by readers now; it drops r from ns once
// its deletion has become visible. Callers hold mu.
func (st *store) visible(ns map[string]*record, r *record) bool {
	if r.deletedAt.IsZero() {
		return true
	}
	if st.now().Before(r.deletedAt.Add(st.delay)) {
		return true
	}
	delete(ns, r.ID)
	return false
}

// live returns the visible records of namespace ns (canonical name), or nil.
// Callers hold mu.
func (st *store) live(ns string) map[string]*record {
	recs := st.namespaces[ns]
	for _, r := range recs {
		st.visible(recs, r)
	}
	if len(recs) == 0 {
		delete(st.namespaces, ns)
		return nil
	}
	return recs
}

// lookup returns the visible record id of namespace ns, or nil. Callers hold mu.
func (st *store) lookup(ns, id string) *record {
	recs := st.namespaces[ns]
	r := recs[id]
	if r == nil || !st.visible(recs, r) {
		return nil
	}
	return r
}

// put stores v in namespace ns, replacing any record with its id, even one
// deleted but still visible. Callers hold mu.
func (st *store) put(ns string, v Vector) {
	recs := st.namespaces[ns]
	if recs == nil {
		recs = map[string]*record{}
		st.namespaces[ns] = recs
	}
	recs[v.ID] = &record{Vector: v}
}

// remove deletes the given records of namespace ns under one LSN: at once
// without DeleteDelay, otherwise they stay visible for DeleteDelay. Callers hold mu.
func (st *store) remove(ns string, recs []*record) uint64 {
	lsn := st.nextLSN(ns)
	if len(recs) == 0 {
		return lsn
	}
	m := st.namespaces[ns]
	if st.delay <= 0 {
		for _, r := range recs {
			delete(m, r.ID)
		}
		if len(m) == 0 {
			delete(st.namespaces, ns)
		}
		return lsn
	}
	now := st.now()
	for _, r := range recs {
		if r.deletedAt.IsZero() {
			r.deletedAt = now
		}
	}
	st.pending[ns] = append(st.pending[ns], pendingDelete{lsn: lsn, visibleAt: now.Add(st.delay)})
	return lsn
}

// checkDimension fixes the index dimension on first use and refuses dense
// values of another length. Callers hold mu.
func (st *store) checkDimension(id string, values []float32) error {
	if len(values) == 0 {
		return nil
	}
	if st.dimension == 0 {
		st.dimension = len(values)
		return nil
	}
	if len(values) != st.dimension {
		return errorf(InvalidArgument, "Vector dimension %d does not match the dimension of the index %d (vector id %q)", len(values), st.dimension, id)
	}
	return nil
}
