package extract

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// serverSideWrites returns what statement n (whose text is text) makes the
// server write in configured tables beyond the rows the statement itself
// names: the writes of a DO block, of the writer functions it calls, and of
// the triggers and rules of the relations it writes. Each is unattributed:
// the rows are chosen by code running inside the server. mayCall is false
// when the whole text names no writer function, which spares the walk over
// the tree that finding calls needs.
func (r *Rules) serverSideWrites(n *pg.Node, text string, mayCall bool) []*Analysis {
	var s serverSide
	if n.GetDoStmt() != nil {
		r.doBlock(text, &s)
		return s.out
	}
	w := r.writers
	if w == nil {
		return nil
	}
	if len(w.fired) > 0 {
		writeTargets(n, func(rv *pg.RangeVar, e Events) {
			for _, f := range w.fired[rv.Relname] {
				// Unqualified: any schema's relation of that name, since
				// the fired relation need not be on the paths Lethe knows.
				if (rv.Schemaname == "" || rv.Schemaname == f.schema) && (f.events == 0 || f.events&e != 0) {
					s.add(f.tables, "writes %s.%s, whose %s writes %s inside the server: "+insideServer, f.schema, rv.Relname, f.by, tableList(f.tables))
				}
			}
		})
	}
	if mayCall && len(w.funcs) > 0 {
		funcCalls(n, func(schema, name string) {
			for _, f := range w.funcs[name] {
				// Unqualified: PostgreSQL resolves it along search_path
				// (and pg_catalog); a writer of that name in any schema may
				// be the one called.
				if schema == "" || schema == f.schema {
					s.add(f.tables, "calls %s.%s, which writes %s inside the server: "+insideServer, f.schema, name, tableList(f.tables))
				}
			}
		})
	}
	return s.out
}

const insideServer = "writes made by functions, procedures, triggers and rules cannot be attributed"

// doBlock judges a DO block by the text rule (textnames.go): it names a
// configured table, a writer function or a fired relation.
func (r *Rules) doBlock(text string, s *serverSide) {
	for _, t := range r.sortedTables() {
		if namedIn(text, t.relname) {
			s.add([]*table{t}, "DO block naming %s: writes made inside the server cannot be attributed", t.name)
		}
	}
	for _, name := range sortedKeys(r.byName) {
		for _, t := range r.byName[name] {
			if t.relname != r.tables[t.name].relname && namedIn(text, name) {
				s.add([]*table{t}, "DO block naming %s, a relation that writes %s: writes made inside the server cannot be attributed", quoteIdent(name), t.name)
			}
		}
	}
	w := r.writers
	if w == nil {
		return
	}
	for _, name := range sortedKeys(w.funcs) {
		if namedIn(text, name) {
			for _, f := range w.funcs[name] {
				s.add(f.tables, "DO block naming %s.%s, which writes %s: writes made inside the server cannot be attributed", f.schema, name, tableList(f.tables))
			}
		}
	}
	for _, name := range sortedKeys(w.fired) {
		if namedIn(text, name) {
			for _, f := range w.fired[name] {
				s.add(f.tables, "DO block naming %s.%s, whose %s writes %s: writes made inside the server cannot be attributed", f.schema, name, f.by, tableList(f.tables))
			}
		}
	}
}

// sortedTables returns the configured tables in name order, so that
// analyses come out in the same order every time.
func (r *Rules) sortedTables() []*table {
	out := make([]*table, 0, len(r.tables))
	for _, t := range r.tables {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *table) int { return strings.Compare(a.name, b.name) })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// serverSide collects one unattributed Analysis per configured table a
// statement makes the server write, with the first reason found.
type serverSide struct {
	out []*Analysis
}

// add records tables as written, for the reason format says.
func (s *serverSide) add(tables []*table, format string, args ...any) {
	var reason string
	for _, t := range tables {
		if slices.ContainsFunc(s.out, func(a *Analysis) bool { return a.rule == t }) {
			continue
		}
		if reason == "" {
			reason = fmt.Sprintf(format, args...)
		}
		s.out = append(s.out, unattributed(t, reason))
	}
}

// tableList prints as the tables' names, for reasons.
type tableList []*table

func (l tableList) String() string { return strings.Join(tableNames(l), ", ") }
