package main

import (
	"context"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
	"github.com/lethe-privacy/lethe/extract"
)

// checkTables reads the tables of store and judges them.
func checkTables(ctx context.Context, store *pgstore.Store, cfg *config.Config, p coverage.Policy) ([]coverage.Table, []coverage.Finding, error) {
	tables, err := store.CoverageTables(ctx, cfg.Compiled().CoverageSkip)
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
