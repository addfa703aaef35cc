package extract

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// analyzeInsert handles INSERT INTO t (cols) VALUES (…), (…) [ON CONFLICT …].
// Each VALUES row becomes one tag at execution time. Anything whose rows
// come from a query (INSERT … SELECT) is unattributed.
func analyzeInsert(t *table, s *pg.InsertStmt) *Analysis {
	a := &Analysis{Table: t.name, Kind: KindInsert, t: t}
	if s.SelectStmt == nil {
		// INSERT … DEFAULT VALUES: one row, database-generated id, no subject.
		a.rows = []row{{cols: make([]value, len(t.columns))}}
		return a
	}
	sel := s.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 || sel.WithClause != nil || sel.Larg != nil {
		return unattributed(t, "INSERT … SELECT: the rows come from a query Lethe cannot evaluate; insert with VALUES")
	}
	if len(s.Cols) == 0 {
		return unattributed(t, "INSERT without a column list: name the columns so Lethe can find the id and subject")
	}
	// Where each VALUES position goes: -2 ignored, -1 id, else t.columns index.
	dest := make([]int, len(s.Cols))
	for i, c := range s.Cols {
		rt := c.GetResTarget()
		dest[i] = -2
		if rt == nil {
			continue
		}
		switch {
		case rt.Name == t.id:
			dest[i] = -1
		case t.columnIndex(rt.Name) >= 0:
			dest[i] = t.columnIndex(rt.Name)
		default:
			continue
		}
		if len(rt.Indirection) > 0 {
			return unattributed(t, fmt.Sprintf("INSERT into a field or element of column %s", quoteIdent(rt.Name)))
		}
	}
	a.rows = make([]row, 0, len(sel.ValuesLists))
	for ri, vl := range sel.ValuesLists {
		l := vl.GetList()
		if l == nil || len(l.Items) != len(s.Cols) {
			return unattributed(t, fmt.Sprintf("VALUES row %d does not have one value per listed column", ri+1))
		}
		rw := row{cols: make([]value, len(t.columns))}
		for i, item := range l.Items {
			switch d := dest[i]; {
			case d == -1:
				rw.id = valueOf(item)
			case d >= 0:
				v := valueOf(item)
				if v.kind == valExpr {
					return unattributed(t, fmt.Sprintf("the value of subject column %s in VALUES row %d is an expression only the database can evaluate; pass it as a literal or parameter", quoteIdent(t.columns[d]), ri+1))
				}
				rw.cols[d] = v
			}
		}
		a.rows = append(a.rows, rw)
	}
	if oc := s.OnConflictClause; oc != nil && oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
		if reason := conflictUpdate(t, oc.TargetList); reason != "" {
			return unattributed(t, reason)
		}
	}
	return a
}

// conflictUpdate checks ON CONFLICT … DO UPDATE SET. Setting a subject
// column to EXCLUDED.<same column> keeps the insert's tags true (the row ends
// up with the inserted values); setting it to anything else does not.
func conflictUpdate(t *table, targets []*pg.Node) string {
	for _, n := range targets {
		rt := n.GetResTarget()
		if rt == nil {
			continue
		}
		if rt.Name == t.id {
			return "ON CONFLICT DO UPDATE changes the id column"
		}
		c := t.columnIndex(rt.Name)
		if c < 0 {
			continue
		}
		if len(rt.Indirection) == 0 && isExcluded(rt.Val, rt.Name) {
			continue
		}
		return fmt.Sprintf("ON CONFLICT DO UPDATE sets subject column %s to something other than EXCLUDED.%s", quoteIdent(rt.Name), quoteIdent(rt.Name))
	}
	return ""
}

func isExcluded(n *pg.Node, col string) bool {
	c := n.GetColumnRef()
	if c == nil || len(c.Fields) != 2 {
		return false
	}
	a, b := c.Fields[0].GetString_(), c.Fields[1].GetString_()
	return a != nil && b != nil && a.Sval == "excluded" && b.Sval == col
}

// insertTags makes one OpWrite tag per VALUES row. A row whose id the
// database generates has ID ""; a row with no subject still gets a tag, with
// empty Subjects, and the caller decides.
func (a *Analysis) insertTags(p Params) ([]Tag, error) {
	t := a.t
	tags := make([]Tag, 0, len(a.rows))
	vals := make([]string, len(t.columns))
	present := make([]bool, len(t.columns))
	for _, rw := range a.rows {
		id, _, err := p.resolve(rw.id, roleID)
		if err != nil {
			return nil, err
		}
		for c, v := range rw.cols {
			if vals[c], present[c], err = p.resolve(v, t.columnRole(c)); err != nil {
				return nil, err
			}
		}
		subjects, err := t.rowSubjects(nil, vals, present)
		if err != nil {
			return nil, err
		}
		tags = append(tags, Tag{Table: t.name, Op: OpWrite, ID: id, Subjects: subjects})
	}
	return tags, nil
}
