package pcapture

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FilterDelete is a delete by metadata filter (vectors REST or gRPC, or
// documents) that the store applied. Which records it removed only the
// store knows: the wing reads the store to settle the ledger (see
// pcwing's settler).
type FilterDelete struct {
	Index     string // the index's name
	Namespace string // canonical ("__default__" for the default one)
	Table     string // "<index>/<namespace>", as the ledger names the records
	// Sent is when the proxy received the delete, before forwarding it.
	// A write the store applied after the delete was answered, and so
	// confirmed, later than Sent.
	Sent time.Time
	// Answered is when its success was read.
	Answered time.Time
	// RequestLSN is the answer's x-pinecone-request-lsn; HasLSN is false
	// when the answer carried none (or one that is not a number).
	RequestLSN uint64
	HasLSN     bool
}

// OnFilterDelete has fn told of every delete by filter the store applies
// from then on, once per namespace it names, as its answer is read. fn
// runs on the request's goroutine before the client has the whole
// answer (a gRPC call's trailers): it must not block. A later call
// replaces fn; nil tells no one.
func (h *Hook) OnFilterDelete(fn func(FilterDelete)) {
	if fn == nil {
		h.filterDeleted.Store(nil)
		return
	}
	h.filterDeleted.Store(&fn)
}

// filterDeletesApplied tells OnFilterDelete's function of c's deletes by
// filter, which the store applied.
func (h *Hook) filterDeletesApplied(c *call) {
	fn := h.filterDeleted.Load()
	if fn == nil || len(c.filtered) == 0 {
		return
	}
	answered := time.Now()
	for _, table := range c.filtered {
		(*fn)(FilterDelete{Index: c.index, Namespace: strings.TrimPrefix(table, c.index+"/"), Table: table,
			Sent: c.began, Answered: answered, RequestLSN: c.requestLSN, HasLSN: c.hasLSN})
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
