package extract

import "slices"

// Catalog is what a connector read of a database's server-side code: its
// functions and procedures, triggers and rules, and its relations.
// FindWriters works out which of them write configured tables.
type Catalog struct {
	Routines  []Routine
	Triggers  []Trigger
	Rules     []RewriteRule
	Relations []Relation
}

// Routine is one function or procedure (pg_proc).
type Routine struct {
	Schema, Name string
	Language     string // pg_language.lanname: "sql", "plpgsql", "plpython3u"…
	Source       string // prosrc: the body as written ("" for BEGIN ATOMIC)
	// Definition is pg_get_functiondef: the whole CREATE FUNCTION, which
	// PL/pgSQL's parser needs and which holds a BEGIN ATOMIC body. It may
	// be empty for other languages.
	Definition string
}

// Trigger is one trigger (pg_trigger, not internal): writes to the
// relation Schema.Table run Function.
type Trigger struct {
	Schema, Table            string
	Name                     string
	Events                   Events // 0 means any
	FunctionSchema, Function string
}

// RewriteRule is one rule (pg_rewrite, other than a view's _RETURN).
type RewriteRule struct {
	Schema, Table, Name string
	Event               Events // 0 means any
	Definition          string // pg_get_ruledef: the whole CREATE RULE
}

// qualName is a function or relation name as a statement spells it;
// schema is "" when unqualified.
type qualName struct{ schema, name string }

// matches reports whether a name spelled as q may denote s.name: an
// unqualified name may be any schema's (over-attributing rather than
// missing a write).
func (q qualName) matches(schema, name string) bool {
	return q.name == name && (q.schema == "" || q.schema == schema)
}

// relWrite is a relation a body writes.
type relWrite struct {
	rel    qualName
	events Events
}

// effects is what a body (function, rule action) makes the server do.
type effects struct {
	writes []relWrite
	calls  []qualName
	// texts are read by the text rule (textnames.go): sources that could
	// not be parsed, other languages, dynamic SQL, DO blocks.
	texts []string
}

// FindWriters works out which of c's functions and procedures write
// configured tables (directly, by writing a relation whose trigger or rule
// does, or by calling a writer) and which relations fire triggers or rules
// that do, repeating until nothing new is found. Unqualified names in
// bodies match any schema. Writers come out sorted.
func (r *Rules) FindWriters(c Catalog) Writers { return r.WriterFinder().Find(c) }

// WriterFinder is FindWriters over successive reads of one database's
// catalog: a body read before is not parsed again. The proxy re-reads the
// catalog every minute, and parsing a PL/pgSQL function is costly.
// It keeps only the bodies of the latest read. Not safe for concurrent use.
type WriterFinder struct {
	configured *Rules
	routines   map[Routine]effects
	rules      map[string]effects
	rels       relationFinder
}

// WriterFinder returns a WriterFinder for r's tables.
func (r *Rules) WriterFinder() *WriterFinder { return &WriterFinder{configured: r} }

// Find is FindWriters, reusing what earlier calls parsed.
func (wf *WriterFinder) Find(c Catalog) Writers {
	seen := make(map[Routine]effects, len(c.Routines))
	routines := make([]effects, len(c.Routines))
	for i, rt := range c.Routines {
		e, ok := wf.routines[rt]
		if !ok {
			e = routineEffects(rt)
		}
		routines[i], seen[rt] = e, e
	}
	seenRules := make(map[string]effects, len(c.Rules))
	rules := make([]effects, len(c.Rules))
	for i, rr := range c.Rules {
		e, ok := wf.rules[rr.Definition]
		if !ok {
			e = ruleEffects(rr.Definition)
		}
		rules[i], seenRules[rr.Definition] = e, e
	}
	wf.routines, wf.rules = seen, seenRules
	derived := wf.rels.derive(wf.configured, c.Relations)
	w := wf.configured.findWriters(c, routines, rules, derived)
	w.Relations = derived
	w.ColumnOrders = wf.configured.columnOrders(c.Relations, derived)
	w.PathSetters = findPathSetters(c)
	return w
}

// findWriters runs the fixpoint over c, given the effects of its routines
// and rules.
func (r *Rules) findWriters(c Catalog, routines, rules []effects, derived []DerivedRelation) Writers {
	f := finder{configured: r, funcs: tableSets[qualName]{}, fired: tableSets[firedKey]{}}
	for _, d := range derived {
		if t := r.tables[d.Of]; t != nil {
			f.derived = append(f.derived, derivedName{qualName{d.Schema, d.Name}, t})
		}
	}
	for changed := true; changed; {
		changed = false
		for i, rt := range c.Routines {
			changed = f.funcs.grow(qualName{rt.Schema, rt.Name}, f.tables(routines[i])) || changed
		}
		for _, tg := range c.Triggers {
			k := firedKey{qualName{tg.Schema, tg.Table}, "trigger " + tg.Name, tg.Events}
			changed = f.fired.grow(k, f.funcs[qualName{tg.FunctionSchema, tg.Function}]) || changed
		}
		for i, rr := range c.Rules {
			k := firedKey{qualName{rr.Schema, rr.Table}, "rule " + rr.Name, rr.Event}
			changed = f.fired.grow(k, f.tables(rules[i])) || changed
		}
	}
	var w Writers
	for q, ts := range f.funcs {
		if len(ts) > 0 {
			w.Functions = append(w.Functions, WriterFunction{Schema: q.schema, Name: q.name, Tables: ts.names()})
		}
	}
	for k, ts := range f.fired {
		if len(ts) > 0 {
			w.Fired = append(w.Fired, FiredRelation{Schema: k.rel.schema, Name: k.rel.name, By: k.by, Events: k.events, Tables: ts.names()})
		}
	}
	w.sort()
	return w
}

// finder holds what FindWriters knows so far.
type finder struct {
	configured *Rules
	funcs      tableSets[qualName] // writer functions (overloads share a name)
	fired      tableSets[firedKey]
	// derived are the relations that write configured tables under
	// another name (views, partitions, children).
	derived []derivedName
}

type derivedName struct {
	rel  qualName
	rule *table
}

type firedKey struct {
	rel    qualName
	by     string
	events Events
}

// tables returns the configured tables a body with effects e writes,
// given the writers known so far.
func (f *finder) tables(e effects) tableSet {
	out := tableSet{}
	for _, w := range e.writes {
		out.addAll(f.configured.named(w.rel))
		for _, d := range f.derived {
			if w.rel.matches(d.rel.schema, d.rel.name) {
				out[d.rule] = true
			}
		}
		for k, ts := range f.fired {
			if w.rel.matches(k.rel.schema, k.rel.name) && (k.events == 0 || k.events&w.events != 0) {
				out.addAll(ts)
			}
		}
	}
	for _, c := range e.calls {
		for q, ts := range f.funcs {
			if c.matches(q.schema, q.name) {
				out.addAll(ts)
			}
		}
	}
	for _, text := range e.texts {
		writes := namesWrite(text)
		if writes {
			for _, t := range f.configured.tables {
				if namedIn(text, t.relname) {
					out[t] = true
				}
			}
			for _, d := range f.derived {
				if namedIn(text, d.rel.name) {
					out[d.rule] = true
				}
			}
			for k, ts := range f.fired {
				if namedIn(text, k.rel.name) {
					out.addAll(ts)
				}
			}
		}
		// A call needs no write verb: SELECT add_doc(…) writes.
		for q, ts := range f.funcs {
			if len(ts) > 0 && namedIn(text, q.name) {
				out.addAll(ts)
			}
		}
	}
	return out
}

// named returns the configured tables a relation name may denote.
func (r *Rules) named(q qualName) tableSet {
	if len(r.byName[q.name]) == 0 {
		return nil
	}
	out := tableSet{}
	for _, t := range r.tables {
		if q.matches(t.schema, t.relname) {
			out[t] = true
		}
	}
	return out
}

// tableSet is a set of configured tables.
type tableSet map[*table]bool

func (s tableSet) addAll(o tableSet) {
	for t := range o {
		s[t] = true
	}
}

func (s tableSet) names() []string {
	out := make([]string, 0, len(s))
	for t := range s {
		out = append(out, t.name)
	}
	slices.Sort(out)
	return out
}

// tableSets are the tables written through each function or fired
// relation found so far; they only grow.
type tableSets[K comparable] map[K]tableSet

// grow adds ts to m[k] and reports whether that added anything.
func (m tableSets[K]) grow(k K, ts tableSet) bool {
	cur := m[k]
	grew := false
	for t := range ts {
		if !cur[t] {
			if cur == nil {
				cur = tableSet{}
				m[k] = cur
			}
			cur[t], grew = true, true
		}
	}
	return grew
}
