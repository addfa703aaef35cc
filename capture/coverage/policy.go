package coverage

import "github.com/lethe-privacy/lethe/extract"

// Policy is what the configuration says is covered.
type Policy struct {
	// Tables are the capture rules (capture.tables).
	Tables []TableRule
	// Ignore are the tables and namespaces deliberately not captured
	// (coverage.ignore).
	Ignore []Ignore
	// SubjectColumn reports whether a column's name suggests it names a
	// person (coverage.subject_columns); nil flags none.
	SubjectColumn func(column string) bool
	// Indexes are the configured Pinecone indexes and their namespace
	// rules.
	Indexes []IndexRules
}

// TableRule is one capture rule of a table.
type TableRule struct {
	Table string // "schema.name", canonical (extract.CanonicalTable)
	// Where locates the rule in the configuration ("lethe.yaml:14"), for
	// findings about it.
	Where string
	// Columns are the columns the rule reads: the id, the columns of the
	// subject expressions, the column of retain_by.
	Columns []RuleColumn
}

// RuleColumn is a column a rule reads, and which of its keys reads it.
type RuleColumn struct {
	Name string
	Key  string // "id", "subjects", "retain_by": for messages
}

// Ignore exempts a table, or a namespace of an index, from coverage.
type Ignore struct {
	Table     string `json:"table,omitempty"` // "schema.name", canonical
	Index     string `json:"index,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Reason    string `json:"reason"`
	Where     string `json:"where"`
}

// IndexRules are one Pinecone index's namespace rules.
type IndexRules struct {
	Index string
	Where string
	// Namespaces are the namespaces with a rule, "*" for every other.
	Namespaces []string
}

// ignoredTable returns the ignore of table, if any.
func (p Policy) ignoredTable(table string) (Ignore, bool) {
	for _, ig := range p.Ignore {
		if ig.Table != "" && ig.Table == table {
			return ig, true
		}
	}
	return Ignore{}, false
}

// ignoredNamespace returns the ignore of a namespace of index, if any.
func (p Policy) ignoredNamespace(index, ns string) (Ignore, bool) {
	ns = extract.CanonicalNamespace(ns)
	for _, ig := range p.Ignore {
		if ig.Table == "" && ig.Index == index && extract.CanonicalNamespace(ig.Namespace) == ns {
			return ig, true
		}
	}
	return Ignore{}, false
}

func (p Policy) rule(table string) (TableRule, bool) {
	for _, r := range p.Tables {
		if r.Table == table {
			return r, true
		}
	}
	return TableRule{}, false
}

func (p Policy) subjectColumn(name string) bool {
	return p.SubjectColumn != nil && p.SubjectColumn(name)
}
