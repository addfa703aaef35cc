package extract

import (
	"slices"
	"strings"
)

// Server-side writers.
//
// A statement can make the server write a configured table without naming
// it: by calling a function or procedure that does (SELECT add_doc($1, $2),
// CALL p()), or by writing a relation whose triggers or rules do. Lethe
// cannot know the rows such writes touch, so it treats them like the other
// unattributable writes (OpUnattributed): refused in strict mode, recorded
// as an unattributed write of the table in permissive mode. Which functions
// and relations those are is the database's business: a connector reads
// its catalog (Rules.FindWriters turns what it read into Writers) and the
// proxy compiles them in with Rules.WithWriters.

// Writers are the ways a statement writes configured tables without
// naming them: server-side code paths, and relations whose writes are
// the tables' own (relations.go).
type Writers struct {
	Functions []WriterFunction
	Fired     []FiredRelation
	Relations []DerivedRelation
	// PathSetters are functions that may change the session's
	// search_path when called (pathsetters.go).
	PathSetters []PathSetter
	// Uncovered are relations no rule covers whose inserts and updates
	// are refused (coverage.mode: enforce; uncovered.go), in
	// SortUncovered's order. FindWriters leaves it empty: the caller
	// fills it from its coverage check.
	Uncovered []UncoveredRelation
	// ColumnOrders are the live columns, in attnum order, of the
	// configured tables and of Relations, by "schema.name": what an
	// INSERT without a column list writes (columnorder.go).
	ColumnOrders map[string][]string
}

// WriterFunction is a function or procedure that writes configured tables
// when it runs, itself or through what it calls.
type WriterFunction struct {
	Schema, Name string   // as stored in the catalog (unquoted names are lower case)
	Tables       []string // configured tables it writes, "schema.name"
}

func (f WriterFunction) String() string {
	return f.Schema + "." + f.Name + " writes " + strings.Join(f.Tables, ", ")
}

// FiredRelation is a relation with a trigger or rule that writes configured
// tables when the relation is written. A configured table can be one too
// (its trigger writes another configured table, or itself).
type FiredRelation struct {
	Schema, Name string // the relation whose writes fire it
	By           string // "trigger docs_audit", "rule log_insert": for messages
	// Events are the writes that fire it; 0 means any.
	Events Events
	Tables []string // configured tables it writes, "schema.name"
}

func (f FiredRelation) String() string {
	return f.Schema + "." + f.Name + " (" + f.By + ") writes " + strings.Join(f.Tables, ", ")
}

// Events is a set of kinds of write to a relation, as triggers and rules
// are declared for them.
type Events uint8

const (
	OnInsert Events = 1 << iota
	OnUpdate
	OnDelete
	OnTruncate
)

// Equal reports whether w and o list the same writers in the same order
// (FindWriters sorts them), so that a refresh that found nothing new
// need not replace the rules.
func (w Writers) Equal(o Writers) bool {
	return slices.EqualFunc(w.Functions, o.Functions, func(a, b WriterFunction) bool {
		return a.Schema == b.Schema && a.Name == b.Name && slices.Equal(a.Tables, b.Tables)
	}) && slices.EqualFunc(w.Fired, o.Fired, func(a, b FiredRelation) bool {
		return a.Schema == b.Schema && a.Name == b.Name && a.By == b.By && a.Events == b.Events && slices.Equal(a.Tables, b.Tables)
	}) && slices.EqualFunc(w.Relations, o.Relations, DerivedRelation.equal) && slices.Equal(w.PathSetters, o.PathSetters) && slices.Equal(w.Uncovered, o.Uncovered) &&
		equalColumnOrders(w.ColumnOrders, o.ColumnOrders)
}

// writerIndex is Writers compiled for the hot path.
type writerIndex struct {
	funcs map[string][]writerFunc // by function name
	fired map[string][]firedRel   // by relation name
	// calls holds the writer function names: only a text that contains
	// one is searched for function calls, which needs a walk of its tree.
	calls nameSet
}

type writerFunc struct {
	schema string
	tables []*table
}

type firedRel struct {
	schema, by string
	events     Events
	tables     []*table
}

// WithWriters returns rules that also see the writes w says the server
// makes: a statement calling a writer function, or writing a fired
// relation, yields an unattributed Analysis for each configured table
// written that way, and Mentions answers true for their names; a write to
// one of w's derived relations is analysed as a write to its table (or
// refused, when the relation says so); a write adding or changing rows of
// one of w's uncovered relations yields a KindUncovered Analysis; an
// INSERT without a column list follows w's column orders. r is not
// modified; the writers of r, if any, are replaced. Tables w names that r does not configure are
// ignored.
func (r *Rules) WithWriters(w Writers) *Rules {
	n := &Rules{tables: r.tables, rels: map[string]*table{}, byName: map[string][]*table{}}
	for _, t := range r.tables {
		n.rels[t.name] = t
		n.byName[t.relname] = append(n.byName[t.relname], t)
		n.mentioned.add(t.relname)
	}
	n.mentioned.add("")
	for _, d := range w.Relations {
		t := r.tables[d.Of]
		key := d.Schema + "." + d.Name
		if t == nil || (r.tables[key] != nil && key != d.Of) {
			continue // a configured table keeps its own rule
		}
		dt := derivedTable(t, d)
		keys := []string{key}
		if strings.HasPrefix(d.Schema, "pg_temp_") {
			// Some session's temporary relation: statements spell its
			// schema pg_temp, or nothing.
			keys = append(keys, "pg_temp."+d.Name)
		}
		for _, k := range keys {
			if old := n.rels[k]; old != nil {
				n.byName[d.Name] = slices.DeleteFunc(n.byName[d.Name], func(x *table) bool { return x == old })
			}
			n.rels[k] = dt
		}
		n.byName[d.Name] = append(n.byName[d.Name], dt)
		n.mentioned.add(d.Name)
	}
	n.sortByName()
	idx := &writerIndex{funcs: map[string][]writerFunc{}, fired: map[string][]firedRel{}}
	for _, f := range w.Functions {
		if ts := r.configured(f.Tables); len(ts) > 0 {
			idx.funcs[f.Name] = append(idx.funcs[f.Name], writerFunc{schema: f.Schema, tables: ts})
			idx.calls.add(f.Name)
			n.mentioned.add(f.Name)
		}
	}
	for _, f := range w.Fired {
		if ts := r.configured(f.Tables); len(ts) > 0 {
			idx.fired[f.Name] = append(idx.fired[f.Name], firedRel{schema: f.Schema, by: f.By, events: f.Events, tables: ts})
			n.mentioned.add(f.Name)
		}
	}
	if len(idx.funcs) > 0 || len(idx.fired) > 0 {
		n.writers = idx
	}
	n.orders = w.ColumnOrders
	n.pathSetters = newPathSetterIndex(w.PathSetters)
	if n.uncovered = newUncoveredIndex(w.Uncovered); n.uncovered != nil {
		for name := range n.uncovered.schemas {
			n.mentioned.add(name)
		}
	}
	return n
}

// configured returns the configured tables among names ("schema.name").
func (r *Rules) configured(names []string) []*table {
	var out []*table
	for _, name := range names {
		if t := r.tables[name]; t != nil && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func tableNames(ts []*table) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	slices.Sort(out)
	return out
}

// sort puts w in the order Equal expects.
func (w *Writers) sort() {
	slices.SortFunc(w.Functions, func(a, b WriterFunction) int {
		return strings.Compare(a.Schema+"\x00"+a.Name, b.Schema+"\x00"+b.Name)
	})
	slices.SortFunc(w.Fired, func(a, b FiredRelation) int {
		return strings.Compare(a.Schema+"\x00"+a.Name+"\x00"+a.By, b.Schema+"\x00"+b.Name+"\x00"+b.By)
	})
	slices.SortFunc(w.Relations, func(a, b DerivedRelation) int {
		return strings.Compare(a.Schema+"\x00"+a.Name, b.Schema+"\x00"+b.Name)
	})
}
