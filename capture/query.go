package capture

import (
	"strings"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pgwire"
)

// query handles a simple-protocol Query: each statement is analysed (when
// it may write a configured table) and queued for the tracker.
func (s *session) query(q string) *pgwire.Refusal {
	stmts := []string{q}
	// Only a semicolon before the end can separate statements ("SELECT 1;"
	// is one): the parser's split is spent only on real multi-statement text.
	if strings.Contains(strings.TrimRight(q, " \t\r\n;"), ";") {
		if split, err := extract.Statements(q); err == nil {
			stmts = split
		}
	}
	mentions := s.c.cfg.Rules.Mentions(q)
	if !mentions && len(stmts) == 1 && extract.ClassifyTx(q).Kind == extract.TxNone {
		s.followSearchPath(q, extract.TxControl{})
		s.lock(func() { s.tx.Opaque(); s.tx.Sync() })
		return nil
	}
	type planned struct {
		tx      extract.TxControl
		intents []ledger.IntentID
		deletes []extract.Tag
		copy    *extract.Analysis
	}
	var plan []planned
	refuse := func(r *pgwire.Refusal) *pgwire.Refusal {
		// Nothing of a refused Query runs: intents made for it are void.
		for _, p := range plan {
			if len(p.intents) > 0 {
				s.c.Drop(p.intents)
			}
		}
		return r
	}
	for _, sql := range stmts {
		p := planned{tx: extract.ClassifyTx(sql)}
		s.followSearchPath(sql, p.tx)
		if mentions && s.c.cfg.Rules.Mentions(sql) {
			as, refusal := s.analyze(sql)
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
				id, r := s.c.intend(tags)
				if r != nil {
					plan = append(plan, p)
					return refuse(r)
				}
				if id != 0 {
					p.intents = append(p.intents, id)
				}
			}
		}
		plan = append(plan, p)
	}
	var refusal *pgwire.Refusal
	s.lock(func() {
		for _, p := range plan {
			req := s.tx.Statement(p.tx, p.deletes, p.intents...)
			if p.copy != nil {
				refusal = s.startCopy(p.copy, req)
			}
		}
		s.tx.Sync()
	})
	return refusal
}
