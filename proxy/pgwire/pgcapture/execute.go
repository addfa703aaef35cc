package pgcapture

import (
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// execute queues a bound statement for the tracker before the Execute is
// forwarded, and starts making the intents of its writes durable; the
// message that could commit them waits for that (inflight.go). Anything
// but a write of ours (transaction control, a function call, a SELECT)
// first waits for the intents in flight.
func (s *session) execute(pt *portal) *pgwire.Refusal {
	if s.skipping {
		return nil
	}
	if r := s.crowded(); r != nil {
		s.skipping = true
		return r
	}
	if pt == nil || pt.stmt.eff.tx.Kind != extract.TxNone || len(pt.stmt.analyses) == 0 {
		if r := s.settle(); r != nil {
			return r
		}
	}
	if pt == nil {
		s.lock(func() { s.tx.Statement(effect{}, nil) })
		return nil
	}
	if r := s.refusedExecution(pt); r != nil {
		return r
	}
	w, r := s.portalWrites(pt)
	if r != nil {
		return r
	}
	var refusal *pgwire.Refusal
	var seq uint64
	s.lock(func() {
		seq = s.tx.Statement(pt.stmt.eff, w.deletes)
		if w.copy != nil {
			refusal = s.startCopy(w.copy, seq)
		}
	})
	if refusal != nil {
		return refusal
	}
	for _, in := range w.intents {
		if r := s.startIntent(seq, in.entries, in.table); r != nil {
			return r
		}
	}
	return nil
}

// refusedExecution refuses the execution of a portal whose statement was
// refused, or whose writes cannot be read (reading.go, unreadable).
func (s *session) refusedExecution(pt *portal) *pgwire.Refusal {
	if pt.stmt.refusal != nil {
		return pt.stmt.refusal
	}
	if r := s.convertedParameters(pt); r != nil {
		return r
	}
	if pt.err != nil {
		return s.unreadable(pt.err)
	}
	return nil
}

// portalWork is what executing a portal asks of capture: the ledger
// entries of its writes, per table, the application's deletes by id, and
// the COPY whose rows will follow, if it is one.
type portalWork struct {
	intents []pendingIntent
	deletes []extract.Tag
	copy    *extract.Analysis
}

type pendingIntent struct {
	entries []ledger.Entry
	table   string
}

// portalWrites turns a portal's tags into ledger entries, or refuses it
// (capture decides: strict, forgotten subjects, coverage).
func (s *session) portalWrites(pt *portal) (portalWork, *pgwire.Refusal) {
	var w portalWork
	for i, a := range pt.stmt.analyses {
		if a.Kind == extract.KindCopy {
			w.copy = a
			continue
		}
		tags := pt.tags[i]
		w.deletes = appendDeletes(w.deletes, tags)
		entries, r := s.capture.Prepare(ledger.StorePostgres, tags)
		if r != nil {
			return w, wireRefusal(r)
		}
		if len(entries) > 0 {
			w.intents = append(w.intents, pendingIntent{entries, tags[0].Table})
		}
	}
	return w, nil
}

// appendDeletes keeps the application's deletes by id among tags.
func appendDeletes(dst []extract.Tag, tags []extract.Tag) []extract.Tag {
	for _, t := range tags {
		if t.Op == extract.OpDelete && t.ID != "" {
			dst = append(dst, t)
		}
	}
	return dst
}
