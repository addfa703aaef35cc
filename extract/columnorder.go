package extract

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Column order, for INSERT without a column list.
//
// INSERT INTO t VALUES (…) writes t's columns in attnum order: the first
// value goes to the first live column, and so on; columns past the last
// value take their defaults. Which column is first is the catalog's
// business, so a connector reads it (Relation.Columns, pg_attribute in
// attnum order, neither dropped nor system columns), FindWriters keeps it
// for the configured tables and the relations derived from them
// (Writers.ColumnOrders: a view, partition or child has an order of its
// own), and WithWriters compiles it in. A relation whose order is not
// known (no catalog read, or the relation is newer than the last read) is
// refused, as before, with a reason naming the fix.
//
// An order can be stale: the catalog is read at start, every minute and
// after DDL passes through the proxy (ClassifyDDL). DDL through the proxy
// that may change an order (ADD or DROP COLUMN, DROP and CREATE TABLE)
// makes the session's inserts without a column list into those tables
// unattributed until the catalog has been read again
// (WithPendingColumnOrder). DDL around the proxy is seen by the next
// periodic read; until then a column added at the end leaves the known
// positions true (and more values than known columns are refused), while a
// dropped or reordered column may put a subject at the wrong position: the
// WAL follower records every committed row under the subjects its stored
// values name, and deletes a late write about a forgotten subject
// (docs/capture.md, "INSERT without a column list").

// columnOrders returns the live columns, in attnum order, of the
// configured tables and derived relations among rels, by "schema.name".
func (r *Rules) columnOrders(rels []Relation, derived []DerivedRelation) map[string][]string {
	want := make(map[string]bool, len(r.tables)+len(derived))
	for name := range r.tables {
		want[name] = true
	}
	for _, d := range derived {
		want[d.Schema+"."+d.Name] = true
	}
	out := map[string][]string{}
	for i := range rels {
		key := rels[i].Schema + "." + rels[i].Name
		if want[key] && len(rels[i].Columns) > 0 {
			out[key] = slices.Clone(rels[i].Columns)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func equalColumnOrders(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// columnOrder is the live columns of the relation t stands for, in attnum
// order, or "" and a reason when they cannot be trusted.
func (r *Rules) columnOrder(t *table) ([]string, string) {
	if slices.ContainsFunc(r.orderPending, func(p *table) bool { return p.name == t.name }) {
		return nil, r.orderPendingReason
	}
	order := r.orders[t.schema+"."+t.relname]
	if order == nil {
		return nil, fmt.Sprintf("INSERT without a column list into %s.%s: Lethe does not know its column order (it reads it from the catalog through capture.store, at start, every minute and after DDL through the proxy; this relation was not there when last read): name the columns in a list after the table name (%s and the subject columns at least), or configure capture.store",
			quoteIdent(t.schema), quoteIdent(t.relname), quoteIdent(t.id))
	}
	return order, ""
}

// WithPendingColumnOrder returns rules under which an INSERT without a
// column list into tables (configured tables, "schema.name") or a relation
// derived from them is unattributed: a session uses them after DDL that
// may change their column order (DDLChange.Reordered), until the catalog
// has been read again. Every other write is analysed as by r. r is not
// modified.
func (r *Rules) WithPendingColumnOrder(tables []string) *Rules {
	n := *r
	n.orderPending = r.configured(tables)
	n.orderPendingReason = "INSERT without a column list: it follows DDL that may change the column order of " +
		strings.Join(tableNames(n.orderPending), ", ") +
		", which Lethe has not read from the catalog yet (it is read once the DDL's transaction has ended): name the columns, or commit the DDL first"
	return &n
}
