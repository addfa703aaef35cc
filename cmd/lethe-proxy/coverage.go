package main

import (
	"context"
	"fmt"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/connector/pgvector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/ledger"
)

// coveragePolicy is what cfg says is covered, with each rule located in
// the file.
func coveragePolicy(cfg *config.Config) (coverage.Policy, error) {
	p := coverage.Policy{SubjectColumn: cfg.Coverage.LooksLikeSubject}
	for i, t := range cfg.Capture.Tables {
		name, err := extract.CanonicalTable(t.Table)
		if err != nil {
			return coverage.Policy{}, err
		}
		r := coverage.TableRule{Table: name, Where: cfg.Where(fmt.Sprintf("capture.tables[%d]", i)),
			Columns: []coverage.RuleColumn{{Name: t.ID, Key: "id"}}}
		for _, expr := range t.Subjects {
			s, err := extract.ParseSubject(expr)
			if err != nil {
				return coverage.Policy{}, fmt.Errorf("capture.tables %s: subject %q: %w", t.Table, expr, err)
			}
			r.Columns = append(r.Columns, coverage.RuleColumn{Name: s.Column, Key: "subjects"})
		}
		if t.RetainBy != "" {
			if s, err := extract.ParseSubject(t.RetainBy); err == nil {
				r.Columns = append(r.Columns, coverage.RuleColumn{Name: s.Column, Key: "retain_by"})
			}
		}
		p.Tables = append(p.Tables, r)
	}
	for i, ig := range cfg.Coverage.Ignore {
		c := coverage.Ignore{Index: ig.Index, Namespace: ig.Namespace, Reason: ig.Reason, Where: cfg.Where(fmt.Sprintf("coverage.ignore[%d]", i))}
		if ig.Table != "" {
			name, err := extract.CanonicalTable(ig.Table)
			if err != nil {
				return coverage.Policy{}, err
			}
			c.Table = name
		}
		p.Ignore = append(p.Ignore, c)
	}
	for i, ix := range cfg.Pinecone.Indexes {
		r := coverage.IndexRules{Index: ix.Name, Where: cfg.Where(fmt.Sprintf("pinecone.indexes[%d]", i))}
		for _, ns := range ix.Namespaces {
			r.Namespaces = append(r.Namespaces, ns.Namespace)
		}
		p.Indexes = append(p.Indexes, r)
	}
	return p, nil
}

// coverageSkip are the schemas the coverage check leaves out beyond
// PostgreSQL's own: the ledger's, when the ledger is a PostgreSQL
// database (in the checked database or not: a schema of that name
// elsewhere is the ledger's of another deployment).
func coverageSkip(cfg *config.Config) []string {
	if cfg.Capture.Ledger.Postgres != "" {
		return []string{ledger.DefaultPostgresSchema}
	}
	return nil
}

// checkTables reads the tables of store and judges them.
func checkTables(ctx context.Context, store *pgvector.Store, cfg *config.Config, p coverage.Policy) ([]coverage.Table, []coverage.Finding, error) {
	tables, err := store.CoverageTables(ctx, coverageSkip(cfg))
	if err != nil {
		return nil, nil, err
	}
	return tables, coverage.CheckTables(p, tables), nil
}

// uncoveredRelations are the relations enforce refuses writes to, in
// extract.SortUncovered's order.
func uncoveredRelations(findings []coverage.Finding, tables []coverage.Table) []extract.UncoveredRelation {
	byName := make(map[string]coverage.Table, len(tables))
	for _, t := range tables {
		byName[t.FullName()] = t
	}
	var out []extract.UncoveredRelation
	for rel, table := range coverage.Uncovered(findings, tables) {
		t := byName[rel]
		out = append(out, extract.UncoveredRelation{Schema: t.Schema, Name: t.Name, Table: table})
	}
	extract.SortUncovered(out)
	return out
}
