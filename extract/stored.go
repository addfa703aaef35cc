package extract

import "slices"

// Stored is a configured table as a reader of stored rows sees it (the WAL
// follower): which columns to read, and the subjects the stored values
// name, by the same rule that tags a statement's values.
type Stored struct{ t *table }

// StoredTables returns every configured table, ordered by name.
func (r *Rules) StoredTables() []Stored {
	out := make([]Stored, 0, len(r.tables))
	for _, t := range r.sortedTables() {
		out = append(out, Stored{t})
	}
	return out
}

// Stored returns the configured table named name ("schema.name" as in
// Tag.Table).
func (r *Rules) Stored(name string) (Stored, bool) {
	t := r.tables[name]
	return Stored{t}, t != nil
}

// Name is the table's canonical "schema.name".
func (s Stored) Name() string { return s.t.name }

// Schema and Relation are the table's unquoted schema and name.
func (s Stored) Schema() string   { return s.t.schema }
func (s Stored) Relation() string { return s.t.relname }

// ID is the record id column.
func (s Stored) ID() string { return s.t.id }

// Columns are the distinct columns the subjects are read from; Subjects
// takes their values in this order.
func (s Stored) Columns() []string { return slices.Clone(s.t.columns) }

// Subjects appends the subjects a stored row names: vals[i] is the text
// form of Columns()[i] as the server outputs it, and present[i] is false
// where the value is NULL or unknown (which names no subject). Invalid
// JSON where a path reads is an error.
func (s Stored) Subjects(dst []string, vals []string, present []bool) ([]string, error) {
	return s.t.rowSubjects(dst, vals, present)
}
