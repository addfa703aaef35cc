package extract

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Relations that write configured tables under another name.
//
// PostgreSQL writes a configured table when a statement writes a view over
// it (an auto-updatable view, PostgreSQL's "simple view"), one of its
// partitions or one of its inheritance children: the rows end up in the
// configured table, or are read through it. FindWriters works out these
// relations from the catalog (pg_class, pg_inherits, views' definitions
// and dependencies) and WithWriters makes Analyze resolve their names to
// the configured table: a write to one is tagged as a write to the table,
// its id and subject columns found by name (partitions and children share
// the table's column names) or through the view's column list. What cannot
// be mapped is refused like any unattributable write.

// Relation is one table, partitioned table, foreign table or view
// (pg_class) as a connector read it.
type Relation struct {
	OID          uint32
	Schema, Name string
	Kind         byte     // pg_class.relkind: 'r', 'p', 'f' or 'v'
	Columns      []string // live columns in attnum order
	Parents      []uint32 // pg_inherits.inhparent: the tables it is a partition or child of
	Partition    bool     // relispartition
	// For a view: its SELECT (pg_get_viewdef), the relations it reads
	// (pg_depend of its _RETURN rule), and whether PostgreSQL writes
	// through it without triggers (pg_relation_is_updatable, without
	// triggers, allows any of INSERT, UPDATE, DELETE).
	ViewDefinition string
	ViewBases      []uint32
	ViewUpdatable  bool
}

// DerivedRelation is a relation whose writes are writes of a configured
// table: a view over it, a partition, an inheritance child (at any depth),
// or the table itself under a name capture.tables does not give it.
type DerivedRelation struct {
	Schema, Name string // as stored in the catalog
	Of           string // the configured table, "schema.name"
	How          string // "view", "partition", "inheritance child", "renamed table": for messages
	// Columns maps the configured table's id and subject columns to this
	// relation's columns that write them; a column absent from the map
	// cannot be written through this relation.
	Columns map[string]string
	// Refuse, when set, says why a write to this relation cannot be
	// attributed (a view whose columns Lethe cannot map, a renamed table,
	// a configured column that no longer exists).
	Refuse string
}

func (d DerivedRelation) String() string {
	s := d.Schema + "." + d.Name + " (" + d.How + " of " + d.Of + ")"
	if d.Refuse != "" {
		s += ": refused"
	}
	return s
}

func (d DerivedRelation) equal(o DerivedRelation) bool {
	return d.Schema == o.Schema && d.Name == o.Name && d.Of == o.Of && d.How == o.How &&
		d.Refuse == o.Refuse && maps.Equal(d.Columns, o.Columns)
}

// relationFinder remembers, across reads of one database's catalog, which
// relation (by OID) each configured table was: a table renamed since is
// recognised under its new name.
type relationFinder struct {
	configured map[uint32]*table
}

// derive works out the relations of c that write configured tables.
func (rf *relationFinder) derive(r *Rules, c []Relation) []DerivedRelation {
	byOID := make(map[uint32]*Relation, len(c))
	for i := range c {
		byOID[c[i].OID] = &c[i]
	}
	known := map[uint32]*table{}
	for oid, t := range rf.configured {
		if byOID[oid] != nil {
			known[oid] = t
		}
	}
	// root is what each relation found so far writes.
	root := map[uint32]*DerivedRelation{}
	var out []DerivedRelation
	for i := range c {
		rel := &c[i]
		t := r.tables[rel.Schema+"."+rel.Name]
		if t == nil {
			continue
		}
		known[rel.OID] = t
		d := &DerivedRelation{Schema: rel.Schema, Name: rel.Name, Of: t.name, How: "table", Columns: identity(t)}
		if missing := missingColumns(t, rel.Columns); len(missing) > 0 {
			d.Refuse = fmt.Sprintf("%s has no column %s, which capture.tables names (renamed or dropped?): update capture.tables", t.name, strings.Join(missing, ", "))
			out = append(out, *d)
		}
		root[rel.OID] = d
	}
	for oid, t := range known {
		rel := byOID[oid]
		if root[oid] != nil || r.tables[rel.Schema+"."+rel.Name] != nil {
			continue
		}
		d := DerivedRelation{Schema: rel.Schema, Name: rel.Name, Of: t.name, How: "renamed table", Columns: identity(t),
			Refuse: fmt.Sprintf("%s.%s is the configured table %s under a new name: name it in capture.tables", quoteIdent(rel.Schema), quoteIdent(rel.Name), t.name)}
		out = append(out, d)
		root[oid] = &out[len(out)-1]
	}
	rf.configured = known
	// Partitions of partitions, views over views: repeat until nothing new.
	for changed := true; changed; {
		changed = false
		for i := range c {
			rel := &c[i]
			if root[rel.OID] != nil {
				continue
			}
			var d *DerivedRelation
			if rel.Kind == 'v' {
				d = deriveView(rel, byOID, root)
			} else {
				d = deriveChild(rel, root)
			}
			if d != nil {
				out = append(out, *d)
				root[rel.OID] = d
				changed = true
			}
		}
	}
	slices.SortFunc(out, func(a, b DerivedRelation) int {
		return strings.Compare(a.Schema+"\x00"+a.Name, b.Schema+"\x00"+b.Name)
	})
	return out
}

// deriveChild: a partition or inheritance child of a relation that writes
// a configured table shares its column names.
func deriveChild(rel *Relation, root map[uint32]*DerivedRelation) *DerivedRelation {
	for _, p := range rel.Parents {
		parent := root[p]
		if parent == nil || parent.How == "view" {
			continue
		}
		how := "inheritance child"
		if rel.Partition {
			how = "partition"
		}
		d := &DerivedRelation{Schema: rel.Schema, Name: rel.Name, Of: parent.Of, How: how, Columns: map[string]string{}, Refuse: parent.Refuse}
		for col, parentCol := range parent.Columns {
			if slices.Contains(rel.Columns, parentCol) {
				d.Columns[col] = parentCol
			}
		}
		return d
	}
	return nil
}

// deriveView: a view over a relation that writes a configured table. A
// view PostgreSQL cannot write through without triggers is left to the
// writers (an INSTEAD OF trigger or rule that writes a configured table is
// one); a writable one is mapped through its column list when it is a
// simple view, and refused otherwise.
func deriveView(rel *Relation, byOID map[uint32]*Relation, root map[uint32]*DerivedRelation) *DerivedRelation {
	var bases []uint32
	for _, b := range rel.ViewBases {
		if root[b] != nil {
			bases = append(bases, b)
		}
	}
	if len(bases) == 0 || !rel.ViewUpdatable {
		return nil
	}
	base := root[bases[0]]
	d := &DerivedRelation{Schema: rel.Schema, Name: rel.Name, Of: base.Of, How: "view", Columns: map[string]string{}}
	from, cols, ok := simpleView(rel.ViewDefinition, rel.Columns)
	var fromRel *Relation
	for _, b := range rel.ViewBases {
		if r := byOID[b]; r != nil && from.matches(r.Schema, r.Name) {
			if fromRel != nil {
				ok = false // two relations of that name: which one?
			}
			fromRel = r
		}
	}
	if !ok || fromRel == nil || root[fromRel.OID] == nil {
		d.Refuse = fmt.Sprintf("writes through view %s.%s, which reads %s in a way Lethe cannot map to its columns (only a view over one relation with plain columns can be)", quoteIdent(rel.Schema), quoteIdent(rel.Name), base.Of)
		return d
	}
	base = root[fromRel.OID]
	d.Of, d.Refuse = base.Of, base.Refuse
	for col, baseCol := range base.Columns {
		for viewCol, src := range cols {
			if src == baseCol && (d.Columns[col] == "" || viewCol < d.Columns[col]) {
				d.Columns[col] = viewCol // two view columns of one base column: either writes it
			}
		}
	}
	return d
}

// simpleView reads a view's SELECT: the one relation it reads, and for
// each view column that is a plain column of it, that column. ok is false
// for anything but SELECT columns FROM one relation [WHERE …].
func simpleView(def string, viewColumns []string) (from qualName, cols map[string]string, ok bool) {
	res, err := pg.Parse(def)
	if err != nil || len(res.Stmts) != 1 {
		return from, nil, false
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg.SetOperation_SETOP_NONE || sel.WithClause != nil || len(sel.FromClause) != 1 ||
		len(sel.DistinctClause) > 0 || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.WindowClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.ValuesLists) > 0 {
		return from, nil, false
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil {
		return from, nil, false
	}
	from = qualName{rv.Schemaname, rv.Relname}
	cols = map[string]string{}
	for i, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			return from, nil, false
		}
		ref := rt.Val.GetColumnRef()
		if ref == nil || len(ref.Fields) == 0 {
			continue // an expression: not writable through the view
		}
		src := ref.Fields[len(ref.Fields)-1].GetString_()
		if src == nil {
			return from, nil, false // * is expanded in a stored view; anything else is unexpected
		}
		name := rt.Name
		if len(viewColumns) == len(sel.TargetList) {
			name = viewColumns[i] // the catalog's name is the one statements use
		} else if name == "" {
			name = src.Sval
		}
		cols[name] = src.Sval
	}
	return from, cols, true
}

// identity maps a configured table's id and subject columns to themselves.
func identity(t *table) map[string]string {
	m := map[string]string{t.id: t.id}
	for _, c := range t.columns {
		m[c] = c
	}
	return m
}

// missingColumns lists the id and subject columns of t that have is
// missing, quoted.
func missingColumns(t *table, have []string) []string {
	var out []string
	for _, c := range append([]string{t.id}, t.columns...) {
		if !slices.Contains(have, c) {
			out = append(out, quoteIdent(c))
		}
	}
	return out
}

// derivedTable is t as written through d: the same configured table (tags
// name t), reached under d's name, its columns renamed as d maps them. A
// column d does not expose gets a name no statement can spell.
func derivedTable(t *table, d DerivedRelation) *table {
	n := *t
	n.self = []*table{&n}
	n.schema, n.relname = d.Schema, d.Name
	n.refuse = d.Refuse
	rename := func(c string) string {
		if m, ok := d.Columns[c]; ok {
			return m
		}
		return "\x00" + c // NUL is in no identifier
	}
	n.id = rename(t.id)
	n.columns = make([]string, len(t.columns))
	for i, c := range t.columns {
		n.columns[i] = rename(c)
	}
	n.subjects = make([]Subject, len(t.subjects))
	for i, s := range t.subjects {
		n.subjects[i] = Subject{Column: rename(s.Column), Path: s.Path}
	}
	return &n
}
