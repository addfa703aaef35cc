package extract

import (
	"fmt"
	"slices"
	"strings"
)

// Rules is the compiled rule set, safe for concurrent use (it is never
// modified after NewRules or WithWriters, which returns a new one).
type Rules struct {
	tables map[string]*table // by "schema.name"
	// rels are the relations statements may write configured tables
	// through, by "schema.name": the configured tables and the relations
	// derived from them (relations.go). byName holds them by relation
	// name, in schema order.
	rels   map[string]*table
	byName map[string][]*table
	// schemas are the schemas of rels, each once (Schemas).
	schemas []string
	// mentioned holds the names Mentions looks for: the configured
	// relation names, and the names of writers when there are any.
	mentioned nameSet
	// writers are the server-side writers (WithWriters); nil when none.
	writers *writerIndex
	// pathSetters are the functions that may change search_path; nil
	// when none.
	pathSetters *pathSetterIndex
	// uncovered are the relations no rule covers whose writes are
	// refused (uncovered.go); nil when none.
	uncovered *uncoveredIndex
	// pending are the tables of DDL not read from the catalog yet, and
	// why writes are unattributed meanwhile (WithPendingDDL).
	pending       []*table
	pendingReason string
	// orders are the relations' live columns in attnum order, by
	// "schema.name" (columnorder.go); nil when the catalog was not read.
	orders map[string][]string
	// orderPending are the tables of DDL that may change their column
	// order, not read from the catalog yet (WithPendingColumnOrder).
	orderPending       []*table
	orderPendingReason string
}

// table is one compiled rule.
type table struct {
	name     string // canonical "schema.name"
	schema   string
	relname  string
	id       string
	subjects []Subject
	columns  []string // distinct Subject columns, in first-use order
	subjCol  []int    // index into columns, per subject
	// refuse, when set, says why writes to this relation cannot be
	// attributed (a derived relation Lethe cannot map).
	refuse string
	// self is []*table{t}, which resolve returns without allocating.
	self []*table
}

// columnIndex is the position of col in t.columns, or -1.
func (t *table) columnIndex(col string) int {
	for i, c := range t.columns {
		if c == col {
			return i
		}
	}
	return -1
}

// hasPath reports whether any subject reads into column col as JSON.
func (t *table) jsonColumn(col int) bool {
	for i, s := range t.subjects {
		if t.subjCol[i] == col && len(s.Path) > 0 {
			return true
		}
	}
	return false
}

// NewRules compiles rules. Table names are read as SQL would read them
// ("public.docs", `"MySchema"."Docs"`; unquoted names fold to lower case; no
// schema means public). Subject columns are compared exactly, so build them
// with ParseSubject.
func NewRules(rules []Rule) (*Rules, error) {
	r := &Rules{tables: map[string]*table{}, rels: map[string]*table{}, byName: map[string][]*table{}}
	for _, rule := range rules {
		var t table
		var err error
		if t.schema, t.relname, err = SplitTable(rule.Table); err != nil {
			return nil, err
		}
		t.name = t.schema + "." + t.relname
		if r.tables[t.name] != nil {
			return nil, fmt.Errorf("extract: table %q has two rules", t.name)
		}
		if rule.ID == "" {
			return nil, fmt.Errorf("extract: table %q: rule names no id column", t.name)
		}
		if len(rule.Subjects) == 0 {
			return nil, fmt.Errorf("extract: table %q: rule names no subject", t.name)
		}
		t.id = rule.ID
		for _, s := range rule.Subjects {
			if s.Column == "" {
				return nil, fmt.Errorf("extract: table %q: subject with no column", t.name)
			}
			if s.Column == t.id {
				return nil, fmt.Errorf("extract: table %q: subject column %q is the id column", t.name, s.Column)
			}
			s.Path = append([]string(nil), s.Path...)
			t.subjects = append(t.subjects, s)
			ci := t.columnIndex(s.Column)
			if ci < 0 {
				ci = len(t.columns)
				t.columns = append(t.columns, s.Column)
			}
			t.subjCol = append(t.subjCol, ci)
		}
		t.self = []*table{&t}
		r.tables[t.name] = &t
		r.rels[t.name] = &t
		r.byName[t.relname] = append(r.byName[t.relname], &t)
		r.mentioned.add(t.relname)
	}
	r.sortByName()
	r.mentioned.add("") // "U&" alone, even with no table
	return r, nil
}

// resolve finds the configured tables a statement may write when it names
// the relation schema.relname, following the search path for unqualified
// names. PostgreSQL picks the first schema on the path that has a relation
// of that name, configured or not; Lethe does not see every relation, so
// it picks the first schema with one it knows of (over-attributing rather
// than missing a write). Temporary relations come first, as PostgreSQL
// looks in the session's own temporary schema before the path. "$user"
// stands for the current role's schema, which SET ROLE changes out of
// Lethe's sight: every schema with a relation of that name may be it.
func (r *Rules) resolve(schema, relname string, searchPath []string) []*table {
	if len(r.byName[relname]) == 0 {
		return nil
	}
	if schema != "" {
		return r.one(schema, relname)
	}
	if t := r.one("pg_temp", relname); t != nil {
		return t
	}
	if len(searchPath) == 0 {
		return r.one("public", relname)
	}
	for _, s := range searchPath {
		if s == "$user" {
			// Every relation of that name, which includes whatever a
			// later schema on the path would resolve it to.
			return r.byName[relname]
		}
		if t := r.rels[s+"."+relname]; t != nil {
			return t.self
		}
	}
	return nil
}

// sortByName puts each byName list in schema order, and lists the
// schemas of rels once (Schemas).
func (r *Rules) sortByName() {
	for _, ts := range r.byName {
		slices.SortFunc(ts, func(a, b *table) int { return strings.Compare(a.schema, b.schema) })
	}
	r.schemas = r.schemas[:0]
	for _, t := range r.rels {
		if !slices.Contains(r.schemas, t.schema) {
			r.schemas = append(r.schemas, t.schema)
		}
	}
}

func (r *Rules) one(schema, relname string) []*table {
	if t := r.rels[schema+"."+relname]; t != nil {
		return t.self
	}
	return nil
}

// CanonicalTable returns a rule's table name in the form tags carry
// ("schema.name", unquoted names folded to lower case, public by default).
func CanonicalTable(name string) (string, error) {
	schema, rel, err := SplitTable(name)
	if err != nil {
		return "", err
	}
	return schema + "." + rel, nil
}

// SplitTable splits a rule's table name, written as in SQL (quotes allowed),
// into its schema ("public" when omitted) and relation name.
func SplitTable(name string) (schema, rel string, err error) {
	parts, err := splitIdentifiers(name, '.')
	if err != nil {
		return "", "", fmt.Errorf("extract: rule table %q: %w", name, err)
	}
	switch len(parts) {
	case 1:
		return "public", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("extract: rule table %q: want schema.table", name)
}
