package extract

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// analyzeInsert handles INSERT INTO t [(cols)] VALUES (…), (…) [ON
// CONFLICT …], and INSERT … SELECT of one row of plain values. Each row
// becomes one tag at execution time. Without a column list the values go
// to t's columns in the catalog's order (columnorder.go). Anything whose
// rows come from a query is unattributed.
func (r *Rules) analyzeInsert(t *table, s *pg.InsertStmt) *Analysis {
	a := &Analysis{Table: t.name, Kind: KindInsert, rule: t}
	if s.SelectStmt == nil {
		// INSERT … DEFAULT VALUES: one row, database-generated id, no subject.
		a.rows = []row{{cols: make([]value, len(t.columns))}}
		return a
	}
	lists, ok := insertedRows(s.SelectStmt.GetSelectStmt())
	if !ok {
		return unattributed(t, "INSERT … SELECT: the rows come from a query Lethe cannot evaluate; insert with VALUES")
	}
	names, reason := r.insertColumns(t, s, len(lists[0]))
	if reason != "" {
		return unattributed(t, reason)
	}
	// Where each value position goes: -2 ignored, -1 id, else t.columns index.
	dest := make([]int, len(names))
	for i, name := range names {
		switch c := t.columnIndex(name); {
		case name == t.id:
			dest[i] = -1
		case c >= 0:
			dest[i] = c
		default:
			dest[i] = -2
		}
	}
	a.rows = make([]row, 0, len(lists))
	for ri, items := range lists {
		if len(items) != len(names) {
			if len(s.Cols) == 0 {
				return unattributed(t, fmt.Sprintf("VALUES row %d does not have as many values as row 1", ri+1))
			}
			return unattributed(t, fmt.Sprintf("VALUES row %d does not have one value per listed column", ri+1))
		}
		rw := row{cols: make([]value, len(t.columns))}
		for i, item := range items {
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

// insertedRows returns the value expressions of each row an INSERT's
// source yields: the rows of VALUES, or the one row of a SELECT of plain
// values (literals, parameters, casts of them) with no FROM, WHERE or
// anything else that could change how many rows it yields. ok is false
// for any other query.
func insertedRows(sel *pg.SelectStmt) (rows [][]*pg.Node, ok bool) {
	if sel == nil || sel.WithClause != nil || sel.Larg != nil || sel.Op != pg.SetOperation_SETOP_NONE {
		return nil, false
	}
	if len(sel.ValuesLists) > 0 {
		rows = make([][]*pg.Node, len(sel.ValuesLists))
		for i, vl := range sel.ValuesLists {
			l := vl.GetList()
			if l == nil {
				return nil, false
			}
			rows[i] = l.Items
		}
		return rows, true
	}
	if len(sel.TargetList) == 0 || len(sel.FromClause) > 0 || sel.WhereClause != nil || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.DistinctClause) > 0 || len(sel.SortClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.LockingClause) > 0 || sel.IntoClause != nil {
		return nil, false
	}
	row := make([]*pg.Node, len(sel.TargetList))
	for i, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, false
		}
		// A function could return a set (several rows): only plain values.
		if k := valueOf(rt.Val).kind; k != valConst && k != valParam && k != valNull {
			return nil, false
		}
		row[i] = rt.Val
	}
	return [][]*pg.Node{row}, true
}

// insertColumns names the columns an INSERT's value positions write: its
// column list, or without one the first width columns of t in the
// catalog's order. reason says why they cannot be known.
func (r *Rules) insertColumns(t *table, s *pg.InsertStmt, width int) (names []string, reason string) {
	if len(s.Cols) == 0 {
		order, reason := r.columnOrder(t)
		if reason != "" {
			return nil, reason
		}
		if width > len(order) {
			return nil, fmt.Sprintf("INSERT without a column list has %d values, but %s.%s had %d columns when Lethe last read the catalog (it is read every minute and after DDL through the proxy): name the columns, or insert again after the next read",
				width, quoteIdent(t.schema), quoteIdent(t.relname), len(order))
		}
		return order[:width], ""
	}
	names = make([]string, len(s.Cols))
	for i, c := range s.Cols {
		rt := c.GetResTarget()
		if rt == nil {
			names[i] = "\x00" // NUL is in no identifier: writes nothing Lethe reads
			continue
		}
		names[i] = rt.Name
		if len(rt.Indirection) > 0 && (rt.Name == t.id || t.columnIndex(rt.Name) >= 0) {
			return nil, fmt.Sprintf("INSERT into a field or element of column %s", quoteIdent(rt.Name))
		}
	}
	return names, ""
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
	t := a.rule
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
