package extract

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// analyzeUpdate handles UPDATE t SET … WHERE …. Only assignments to subject
// columns matter: an UPDATE that leaves them alone changes no one's
// attribution and yields no tags.
func analyzeUpdate(t *table, s *pg.UpdateStmt) *Analysis {
	a := &Analysis{Table: t.name, Kind: KindUpdate, rule: t, sets: make([]value, len(t.columns))}
	for _, n := range s.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			continue
		}
		if rt.Name == t.id {
			return unattributed(t, "UPDATE changes the id column")
		}
		c := t.columnIndex(rt.Name)
		if c < 0 {
			continue
		}
		if rt.Val.GetMultiAssignRef() != nil {
			return unattributed(t, fmt.Sprintf("UPDATE sets subject column %s in a multi-column assignment", quoteIdent(rt.Name)))
		}
		if len(rt.Indirection) > 0 {
			return unattributed(t, fmt.Sprintf("UPDATE sets a field or element of subject column %s", quoteIdent(rt.Name)))
		}
		v := valueOf(rt.Val)
		if v.kind == valExpr {
			return unattributed(t, fmt.Sprintf("UPDATE sets subject column %s from an expression (such as %s || …) whose result only the database knows; set the whole value", quoteIdent(rt.Name), quoteIdent(rt.Name)))
		}
		a.sets[c] = v
		a.setsSubject = true
	}
	if a.setsSubject {
		a.ids, a.byIDs = whereIDs(s.WhereClause, t, aliasOf(s.Relation))
	}
	return a
}

func aliasOf(rv *pg.RangeVar) string {
	if rv != nil && rv.Alias != nil {
		return rv.Alias.Aliasname
	}
	return ""
}

// updateTags makes one OpWrite tag per id in the WHERE clause, or one tag
// with ID "" when the rows are chosen some other way (forget deletes by
// subject as well, so table and subject suffice). Subjects are those of the
// columns the UPDATE sets; subjects held in columns it leaves alone are
// unchanged and not repeated.
func (a *Analysis) updateTags(p Params) ([]Tag, error) {
	if !a.setsSubject {
		return nil, nil
	}
	t := a.rule
	vals := make([]string, len(t.columns))
	present := make([]bool, len(t.columns))
	var err error
	for c, v := range a.sets {
		if vals[c], present[c], err = p.resolve(v, t.columnRole(c)); err != nil {
			return nil, err
		}
	}
	subjects, err := t.rowSubjects(nil, vals, present)
	if err != nil {
		return nil, err
	}
	if !a.byIDs {
		return []Tag{{Table: t.name, Op: OpWrite, Subjects: subjects}}, nil
	}
	ids, err := resolveIDs(a.ids, p)
	if err != nil {
		return nil, err
	}
	tags := make([]Tag, 0, len(ids))
	for i, id := range ids {
		if i > 0 {
			// Each tag owns its slice, so a caller may modify one safely.
			subjects = slices.Clone(subjects)
		}
		tags = append(tags, Tag{Table: t.name, Op: OpWrite, ID: id, Subjects: subjects})
	}
	return tags, nil
}
