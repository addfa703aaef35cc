package extract

import (
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Writes to uncovered tables.
//
// With coverage.mode: enforce, the proxy refuses writes that add or change
// rows of a table holding vectors or a column named like a subject that no
// rule covers (capture/coverage decides which from the catalog). Such a
// table is not configured, so Lethe knows nothing of its columns: a write
// to it is only recognised as one, by name, and yields a KindUncovered
// Analysis, which the relay refuses whatever capture.mode says. DELETE and
// TRUNCATE remove rows and pass: refusing them would keep the application
// from erasing data Lethe does not track.

// UncoveredRelation is a relation whose writes are refused because no
// rule covers it: an uncovered table, or one of its partitions or children.
type UncoveredRelation struct {
	Schema, Name string // as stored in the catalog
	Table        string // the uncovered table, "schema.name": the one to add a rule for
}

// SortUncovered puts relations in the order Writers.Equal expects.
func SortUncovered(u []UncoveredRelation) {
	slices.SortFunc(u, func(a, b UncoveredRelation) int {
		return strings.Compare(a.Schema+"\x00"+a.Name, b.Schema+"\x00"+b.Name)
	})
}

// uncoveredIndex is Writers.Uncovered compiled: the uncovered table of
// each relation by "schema.name", and the schemas of each relation name.
type uncoveredIndex struct {
	table   map[string]string
	schemas map[string][]string
}

func newUncoveredIndex(u []UncoveredRelation) *uncoveredIndex {
	if len(u) == 0 {
		return nil
	}
	x := &uncoveredIndex{table: map[string]string{}, schemas: map[string][]string{}}
	for _, rel := range u {
		x.table[rel.Schema+"."+rel.Name] = rel.Table
		x.schemas[rel.Name] = append(x.schemas[rel.Name], rel.Schema)
	}
	return x
}

// uncoveredWrites returns a KindUncovered Analysis for each uncovered
// relation statement n inserts into or updates (MERGE and COPY … FROM
// included, in writable CTEs too).
func (r *Rules) uncoveredWrites(n *pg.Node, searchPath []string) []*Analysis {
	x := r.uncovered
	if x == nil {
		return nil
	}
	var out []*Analysis
	writeTargets(n, func(rv *pg.RangeVar, e Events) {
		if e&(OnInsert|OnUpdate) == 0 || len(x.schemas[rv.Relname]) == 0 {
			return
		}
		rel := r.uncoveredRelation(rv.Schemaname, rv.Relname, searchPath)
		if rel == "" {
			return
		}
		table := x.table[rel]
		if slices.ContainsFunc(out, func(a *Analysis) bool { return a.Table == table }) {
			return
		}
		reason := fmt.Sprintf("no rule covers %s", table)
		if rel != table {
			reason = fmt.Sprintf("%s is a partition or child of %s, which no rule covers", rel, table)
		}
		out = append(out, &Analysis{Table: table, Kind: KindUncovered, Reason: reason})
	})
	return out
}

// uncoveredRelation resolves a relation name to an uncovered relation,
// "schema.name", or "" when it is none. An unqualified name is looked up
// along searchPath (public when empty) and stops at the first schema with
// a configured relation or an uncovered one of that name; "$user" and
// relations Lethe does not know of are passed over, so a name may be
// under-resolved (the write passes) but never refused for another
// schema's table.
func (r *Rules) uncoveredRelation(schema, relname string, searchPath []string) string {
	x := r.uncovered
	if schema != "" {
		if _, ok := x.table[schema+"."+relname]; ok {
			return schema + "." + relname
		}
		return ""
	}
	if len(searchPath) == 0 {
		searchPath = []string{"public"}
	}
	for _, s := range searchPath {
		key := s + "." + relname
		if r.rels[key] != nil {
			return ""
		}
		if _, ok := x.table[key]; ok {
			return key
		}
	}
	return ""
}
