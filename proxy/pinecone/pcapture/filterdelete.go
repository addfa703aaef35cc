package pcapture

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FilterDelete is a delete by metadata filter (vectors REST or gRPC, or
// documents) that the store applied, or any delete of a namespace's
// records by filter, deleteAll or namespace delete whose answer did not
// say whether it was applied (a 5xx, a broken exchange). Which records it
// removed only the store knows: the wing reads the store to settle the
// ledger (see pcwing's settler). A delete the store certainly refused is
// not one.
type FilterDelete struct {
	Index     string // the index's name
	Namespace string // canonical ("__default__" for the default one)
	Table     string // "<index>/<namespace>", as the ledger names the records
	// Since divides the ledger's confirmations: by Since, the capture
	// core had committed the confirmation of every write answered before
	// the delete reached the proxy (writes the store applied before it);
	// the confirmation of a write answered later, which the store may
	// have applied after the delete, is committed after Since. So a
	// record none of whose subjects was confirmed at or after Since was
	// last written before the delete (ledger.Settler).
	Since time.Time
	// Answered is when the capture core reported it, after its success
	// was read.
	Answered time.Time
	// RequestLSN is the answer's x-pinecone-request-lsn; HasLSN is false
	// when the answer carried none (or one that is not a number).
	RequestLSN uint64
	HasLSN     bool
}

// OnFilterDelete has fn told of every delete by filter the store applies
// from then on, once per namespace it names, once the capture core's
// decisions queued before its answer was read (the confirmations of the
// writes before it) are in the ledger (capture.AfterQueued). fn runs on
// the core's decision worker: it must not block. A later call replaces
// fn; nil tells no one.
func (h *Hook) OnFilterDelete(fn func(FilterDelete)) {
	if fn == nil {
		h.filterDeleted.Store(nil)
		return
	}
	h.filterDeleted.Store(&fn)
}

// markSince queues, as the delete by filter c reaches the proxy and
// before it is forwarded, the moment that sets c.since: the capture
// core's decision worker commits the confirmations queued before it
// (those of the writes answered so far) and then reads the clock.
// Confirmations queued later are committed after it. The report
// (filterDeletesApplied) is queued after it, so it runs after it.
func (h *Hook) markSince(c *call) {
	h.core.AfterQueued(func() { c.since = time.Now() })
}

// filterDeletesApplied tells OnFilterDelete's function of c's deletes by
// filter, which the store applied. It runs on the decision worker, as
// markSince's callback did before it.
func (h *Hook) filterDeletesApplied(c *call) {
	fn := h.filterDeleted.Load()
	if fn == nil || len(c.filtered) == 0 || c.since.IsZero() {
		return // nobody to tell, or nobody was when it arrived: no moment divides its confirmations
	}
	answered := time.Now()
	for _, table := range c.filtered {
		(*fn)(FilterDelete{Index: c.index, Namespace: strings.TrimPrefix(table, c.index+"/"), Table: table,
			Since: c.since, Answered: answered, RequestLSN: c.requestLSN, HasLSN: c.hasLSN})
	}
}

// headerRequestLSN is the LSN header Pinecone sends on writes' answers
// (a gRPC call's header metadata arrives as HTTP/2 headers).
const headerRequestLSN = "X-Pinecone-Request-Lsn"

// requestLSN reads a write answer's x-pinecone-request-lsn.
func requestLSN(h http.Header) (uint64, bool) {
	v := h.Get(headerRequestLSN)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}
