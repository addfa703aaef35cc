package main

import (
	"context"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// checkTables reads the tables of store and judges them.
func checkTables(ctx context.Context, store *pgstore.Store, cfg *config.Config, p coverage.Policy) ([]coverage.Table, []coverage.Finding, error) {
	tables, err := store.CoverageTables(ctx, cfg.Compiled().CoverageSkip)
	if err != nil {
		return nil, nil, err
	}
	return tables, coverage.CheckTables(p, tables), nil
}
