package pgcapture

import (
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// query handles a simple-protocol Query: each statement is analysed (when
// it may write a configured table), under the search_paths the statements
// before it may leave, and queued for the tracker.
func (s *session) query(q string) *pgwire.Refusal {
	stmts := []string{q}
	// Only a semicolon before the end can separate statements ("SELECT 1;"
	// is one): the parser's split is spent only on real multi-statement text.
	if extract.SeveralStatements(q) {
		if split, err := extract.Statements(q); err == nil {
			stmts = split
		}
	}
	s.noteDDL(stmts...)
	mentions := s.rules.Mentions(q) && !readsOnly(q)
	var only effect // of the one statement
	if len(stmts) == 1 {
		if only = s.effectOf(q); !mentions && only.none() {
			s.trackOpaqueExchange()
			return nil
		}
	}
	type planned struct {
		eff     effect
		intents []ledger.IntentID
		deletes []extract.Tag
		copy    *extract.Analysis
	}
	var plan []planned
	var before []effect // of the statements planned so far that have one
	refuse := func(r *pgwire.Refusal) *pgwire.Refusal {
		// Nothing of a refused Query runs: intents made for it are void.
		for _, p := range plan {
			if len(p.intents) > 0 {
				s.capture.Drop(p.intents)
			}
		}
		// The server answers the raise sent in its place (pgwire) with an
		// error and ReadyForQuery: keep the tracker in step.
		s.trackOpaqueExchange()
		return r
	}
	for _, sql := range stmts {
		p := planned{eff: only}
		if len(stmts) > 1 {
			p.eff = s.effectOf(sql)
		}
		if mentions && (len(stmts) == 1 || s.rules.Mentions(sql)) {
			var paths [][]string
			s.lock(func() { _, paths = s.tx.after(before) })
			as, refusal := s.analyze(sql, paths)
			if refusal != nil {
				return refuse(refusal)
			}
			for _, a := range as {
				if a.Kind == extract.KindCopy {
					p.copy = a
					continue
				}
				tags, err := a.Tags(extract.Params{})
				if err != nil {
					if r := s.unreadable(err); r != nil {
						plan = append(plan, p)
						return refuse(r)
					}
					continue
				}
				p.deletes = appendDeletes(p.deletes, tags)
				id, r := s.capture.Intend(ledger.StorePostgres, tags)
				if r != nil {
					plan = append(plan, p)
					return refuse(wireRefusal(r))
				}
				if id != 0 {
					p.intents = append(p.intents, id)
				}
			}
		}
		plan = append(plan, p)
		if !p.eff.none() {
			before = append(before, p.eff)
		}
	}
	var refusal *pgwire.Refusal
	s.lock(func() {
		for _, p := range plan {
			req := s.tx.Statement(p.eff, p.deletes, p.intents...)
			if p.copy != nil {
				refusal = s.startCopy(p.copy, req)
			}
		}
		s.tx.Sync()
	})
	return refusal
}
