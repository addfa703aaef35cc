package pcapture

import (
	"strings"

	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// LSNWatch is told, for each write the store applied, the
// x-pinecone-request-lsn its answer carried, beside the floor the watch
// gave when the write was sent: the wing's restore detection (pcwing,
// restore.go). Pinecone numbers the writes of each namespace in one
// increasing sequence, so a write sent after an answer with LSN F was
// read gets an LSN above F unless the namespace started a new sequence
// (the index was deleted and re-created, or another index now answers
// under its host).
//
// Both methods run on the request's path: they must not block.
type LSNWatch interface {
	// Floor is the highest request LSN of namespace ns (canonical) of
	// index that the watch had read before this write was sent; 0 when it
	// knows none.
	Floor(index, ns string) uint64
	// Applied reports a write the store applied (2xx, grpc-status 0).
	Applied(w AppliedWrite)
}

// AppliedWrite is one write the store applied, as LSNWatch sees it.
type AppliedWrite struct {
	Index     string // the index's name
	Namespace string // canonical ("__default__" for the default one)
	// Floor is what LSNWatch.Floor returned when the write was sent.
	Floor uint64
	// RequestLSN is the answer's x-pinecone-request-lsn; HasLSN is false
	// when the answer carried none (an API version or a gateway that
	// does not send it).
	RequestLSN uint64
	HasLSN     bool
	// Cleared is true for a deleteAll or a namespace delete: Pinecone does
	// not say whether a namespace deleted and written again continues its
	// sequence.
	Cleared bool
}

// WatchLSN has watch told of the request LSN of every write the store
// applies to a namespace with rules from then on. Set it before the
// relay serves; nil tells no one.
func (h *Hook) WatchLSN(watch LSNWatch) {
	if watch == nil {
		h.lsnWatch.Store(nil)
		return
	}
	h.lsnWatch.Store(&watch)
}

// watchLSN gives c its namespace and floor, when a watch is set.
func (h *Hook) watchLSN(c *call, table string) {
	watch := h.lsnWatch.Load()
	ns, ok := strings.CutPrefix(table, c.index+"/")
	if watch == nil || !ok || ns == pcextract.AnyNamespace {
		return // nobody to tell, or an unread write whose namespace is unknown
	}
	c.lsnWatch, c.namespace = *watch, ns
	c.lsnFloor = c.lsnWatch.Floor(c.index, ns)
}

// lsnApplied tells c's watch that the store applied c.
func (c *call) lsnApplied() {
	if c.lsnWatch == nil {
		return
	}
	c.lsnWatch.Applied(AppliedWrite{Index: c.index, Namespace: c.namespace, Floor: c.lsnFloor,
		RequestLSN: c.requestLSN, HasLSN: c.hasLSN, Cleared: len(c.cleared) > 0})
}
