package pcapture

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/lethe-privacy/lethe/capture"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// Hook captures the writes of the indexes it has rules for.
type Hook struct {
	core  *capture.Capture
	rules map[string]*pcextract.Rules // by index name
	log   *slog.Logger
	// filterDeleted is told of each delete by filter the store applied
	// (OnFilterDelete); nil tells no one.
	filterDeleted atomic.Pointer[func(FilterDelete)]
	// lsnWatch is told of each applied write's request LSN (WatchLSN);
	// nil tells no one.
	lsnWatch atomic.Pointer[LSNWatch]
}

// New returns the Hook for core, with each index's rules; requests to an
// index without rules pass untouched.
func New(core *capture.Capture, rules []*pcextract.Rules) *Hook {
	h := &Hook{core: core, rules: map[string]*pcextract.Rules{}, log: core.Logger().With("relay", "pinecone")}
	for _, r := range rules {
		h.rules[r.Index()] = r
	}
	return h
}

// Wants implements pinecone.Screener: a request to an index without
// rules, or one that writes nothing Lethe records (a read, see routes.go),
// needs nothing of its body, and Request would let it pass untouched.
func (h *Hook) Wants(ix *pinecone.Index, r *http.Request) bool {
	return h.rules[ix.Name] != nil && classify(r).op != opNone
}

// Request implements pinecone.Hook: it reads a write's tags, refuses what
// capture refuses, makes the intent durable, and returns the call that
// settles it.
func (h *Hook) Request(ix *pinecone.Index, r *http.Request, body []byte) (pinecone.Call, error) {
	rules := h.rules[ix.Name]
	if rules == nil {
		return nil, nil
	}
	w := classify(r)
	if w.op == opNone {
		return nil, nil
	}
	switch w.op {
	case opNonCanonical:
		return nil, h.refuse(ix, w, h.core.Refuse(capture.Refusal{
			Code:      nonCanonicalCode,
			Message:   "lethe-proxy: the request is in a form Lethe does not read (a path starting with \"//\", which an index host or gateway may read as another host; or a write path spelled differently: case, doubled or trailing slashes, dot segments; or a gRPC write method not called as gRPC over HTTP/2); it was not forwarded",
			Hint:      "send requests as the Pinecone SDKs do: the documented paths (e.g. /vectors/upsert), gRPC over HTTP/2",
			LogReason: "request in a form Lethe does not read",
		}))
	case opUnknown:
		return h.unknown(ix, w, rules)
	case opNamespaceDelete:
		if !w.grpc {
			return h.intend(ix, w, rules, false, rules.DeleteNamespace(w.namespace), nil)
		}
	}
	tags, err := w.tags(rules, body)
	return h.intend(ix, w, rules, pinecone.IsGRPC(r), tags, err)
}

// intend turns a write's tags (or the error reading them) into its durable
// intent and the call that settles it, or a refusal.
func (h *Hook) intend(ix *pinecone.Index, w write, rules *pcextract.Rules, grpc bool, tags []extract.Tag, err error) (pinecone.Call, error) {
	if err != nil {
		h.core.Stats.Refused.Add(1)
		h.log.Warn("pinecone write refused: request body unreadable", "index", ix.Name, "op", w.name, "err", err)
		return nil, &pinecone.Status{Code: pinecone.CodeInvalidArgument, Message: "lethe-proxy: cannot read the " + w.name +
			" request, so it was not forwarded: " + strings.TrimPrefix(err.Error(), "extract: ")}
	}
	c := &call{hook: h, index: ix.Name, grpc: grpc} // the answer comes in the shape the request was sent in
	var writes []extract.Tag
	for _, t := range tags {
		switch t.Op {
		case extract.OpDelete:
			c.deletes = append(c.deletes, t)
		case extract.OpDeleteAll:
			c.cleared = append(c.cleared, t.Table)
		case extract.OpDeleteByFilter:
			c.filtered = append(c.filtered, t.Table)
		case extract.OpUnattributed:
			if r := h.core.Unattributable(
				"lethe-proxy: the write was not forwarded because Lethe cannot tell whose records it writes: "+t.Reason,
				"or set capture.mode: permissive to forward such writes and record them for reconcile", t.Reason); r != nil {
				return nil, h.refuse(ix, w, r)
			}
			writes = append(writes, t)
		default:
			writes = append(writes, t)
			if (w.op == opUpdate || w.op == opDocumentsUpdate) && len(rules.SubjectFields(namespaceOf(rules, t.Table))) == 1 {
				c.moved = append(c.moved, t)
			}
		}
	}
	if len(writes) > 0 {
		id, refusal := h.core.Intend(ledger.StorePinecone, writes)
		if refusal != nil {
			return nil, h.refuse(ix, w, refusal)
		}
		c.intent = id
	}
	if c.intent == 0 && len(c.deletes) == 0 && len(c.moved) == 0 && len(c.cleared) == 0 && len(c.filtered) == 0 {
		return nil, nil
	}
	if len(c.filtered)+len(c.cleared) > 0 && h.filterDeleted.Load() != nil { // nobody to tell: no need to divide
		h.markSince(c)
	}
	if len(tags) > 0 {
		h.watchLSN(c, tags[0].Table) // one write request names one namespace
	}
	return c, nil
}

// unknown asks capture about a request that is neither a known read nor
// a write Lethe reads: refused in strict mode, naming its path's pattern
// and API version; in permissive mode forwarded, with one unattributed
// write of the whole index recorded for reconcile, as a bulk import.
func (h *Hook) unknown(ix *pinecone.Index, w write, rules *pcextract.Rules) (pinecone.Call, error) {
	what := fmt.Sprintf("%s (%s: %s)", w.pattern, versionHeader, w.version)
	if r := h.core.Unreadable(capture.Refusal{
		Code: nonCanonicalCode,
		Message: "lethe-proxy: " + what + " is neither a read nor a write Lethe knows how to record " +
			"(an API path or API version it does not read); it was not forwarded",
		Hint: "send writes with an API version Lethe reads (2024-07 to 2026-07; documents writes 2026-07) to the documented paths, " +
			"or set capture.mode: permissive to forward such requests and record them as unattributed writes for reconcile",
		LogReason: "unknown request " + what,
	}); r != nil {
		return nil, h.refuse(ix, w, r)
	}
	h.log.Warn("pinecone request Lethe does not read forwarded as an unattributed write", "index", ix.Name, "request", what)
	return h.intend(ix, w, rules, w.grpc, rules.UnreadWrite(what), nil)
}

// namespaceOf is the namespace of a tag's Table, "<index>/<namespace>".
func namespaceOf(rules *pcextract.Rules, table string) string {
	return strings.TrimPrefix(table, rules.Index()+"/")
}
