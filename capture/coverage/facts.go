package coverage

import "slices"

// Table is one table or partitioned table of the database, as its catalog
// describes it. No row is ever read to build one.
type Table struct {
	Schema, Name string
	Columns      []Column
	// Parents are the tables it is a partition or an inheritance child
	// of, "schema.name": a rule for an ancestor covers it.
	Parents []string
}

// FullName is the table's "schema.name", as rules spell it.
func (t Table) FullName() string { return t.Schema + "." + t.Name }

// Column is one live column of a table.
type Column struct {
	Name string
	// Type is the column's type name (pg_type.typname): "vector",
	// "halfvec", "sparsevec", "text", "jsonb"…
	Type string
	// PrimaryKey: the column is the table's one-column primary key. It
	// only helps word the suggested rule.
	PrimaryKey bool
}

// VectorTypes are pgvector's column types: a table with one of them
// holds embeddings and needs a rule.
var VectorTypes = []string{"vector", "halfvec", "sparsevec"}

// IsVector reports whether the column holds embeddings.
func (c Column) IsVector() bool { return slices.Contains(VectorTypes, c.Type) }

func (t Table) column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}
