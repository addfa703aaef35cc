package config

import (
	"fmt"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
	"github.com/lethe-privacy/lethe/proxy/pinecone/pcextract"
)

// Compiled is the file's rules in the forms the proxy and the commands
// use, made once by Load, LoadOffline and Parse after validation: each
// subject expression is parsed there and nowhere else.
type Compiled struct {
	// Tables are capture.tables' rules; empty rules without any.
	Tables *extract.Rules
	// Pinecone are the rules of every index with namespace rules, in the
	// file's order.
	Pinecone []*pcextract.Rules
	// IDColumns maps each configured table, in the canonical form tags
	// carry, to its id column.
	IDColumns map[string]string
	// Coverage is what the file says is covered (capture.tables,
	// coverage.ignore, pinecone.indexes), each rule located in the file.
	Coverage coverage.Policy
	// CoverageSkip are the schemas the coverage check leaves out beyond
	// PostgreSQL's own: the ledger's, when the ledger is a PostgreSQL
	// database (in the checked database or not: a schema of that name
	// elsewhere is the ledger's of another deployment).
	CoverageSkip []string
}

// Compiled returns the rules compiled when the file was loaded.
func (c *Config) Compiled() *Compiled { return c.compiled }

// HasRules reports whether the file has capture rules of any store:
// capture.tables or namespace rules of a Pinecone index.
func (c *Config) HasRules() bool {
	return len(c.Capture.Tables) > 0 || len(c.compiled.Pinecone) > 0
}

// parsedTable is one capture.tables rule with its expressions parsed,
// kept by validateCapture for compile.
type parsedTable struct {
	rule     extract.Rule
	retainBy *extract.Subject // nil without retain_by
}

// compile builds c.compiled from the validated file and the rules
// validateCapture parsed. Its errors are those of rules that validate
// alone cannot see (a subject column that is the id column, a table name
// that is not one), located in the file.
func (c *Config) compile() error {
	out := &Compiled{IDColumns: map[string]string{}, Coverage: coverage.Policy{SubjectColumn: c.Coverage.LooksLikeSubject}}
	rules := make([]extract.Rule, 0, len(c.parsed))
	for i, t := range c.parsed {
		where := fmt.Sprintf("capture.tables[%d]", i)
		name, err := extract.CanonicalTable(t.rule.Table)
		if err != nil {
			return c.atIndex("capture.tables", i, "%s: %v", where, err)
		}
		out.IDColumns[name] = t.rule.ID
		r := coverage.TableRule{Table: name, Where: c.Where(where), Columns: []coverage.RuleColumn{{Name: t.rule.ID, Key: "id"}}}
		for _, s := range t.rule.Subjects {
			r.Columns = append(r.Columns, coverage.RuleColumn{Name: s.Column, Key: "subjects"})
		}
		if t.retainBy != nil {
			r.Columns = append(r.Columns, coverage.RuleColumn{Name: t.retainBy.Column, Key: "retain_by"})
		}
		out.Coverage.Tables = append(out.Coverage.Tables, r)
		rules = append(rules, t.rule)
	}
	var err error
	if out.Tables, err = extract.NewRules(rules); err != nil {
		return c.at("capture.tables", "%v", err)
	}
	for i, ig := range c.Coverage.Ignore {
		where := fmt.Sprintf("coverage.ignore[%d]", i)
		r := coverage.Ignore{Index: ig.Index, Namespace: ig.Namespace, Reason: ig.Reason, Where: c.Where(where)}
		if ig.Table != "" {
			if r.Table, err = extract.CanonicalTable(ig.Table); err != nil {
				return c.atIndex("coverage.ignore", i, "%s: %v", where, err)
			}
		}
		out.Coverage.Ignore = append(out.Coverage.Ignore, r)
	}
	for i, ix := range c.Pinecone.Indexes {
		where := fmt.Sprintf("pinecone.indexes[%d]", i)
		r := coverage.IndexRules{Index: ix.Name, Where: c.Where(where)}
		byNamespace := map[string][]string{}
		for _, ns := range ix.Namespaces {
			r.Namespaces = append(r.Namespaces, ns.Namespace)
			byNamespace[ns.Namespace] = ns.Subjects
		}
		out.Coverage.Indexes = append(out.Coverage.Indexes, r)
		if len(ix.Namespaces) == 0 {
			continue
		}
		pr, err := pcextract.NewRules(ix.Name, byNamespace)
		if err != nil {
			return c.atIndex("pinecone.indexes", i, "%s: %v", where, err)
		}
		out.Pinecone = append(out.Pinecone, pr)
	}
	if c.Capture.Ledger.Postgres != "" {
		out.CoverageSkip = []string{ledger.DefaultPostgresSchema}
	}
	c.compiled = out
	return nil
}
