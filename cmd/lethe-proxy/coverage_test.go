package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/config"
)

// The policy names the columns rules read (a JSON path's column, the
// retain_by column), canonical table names and where each rule is.
func TestCoveragePolicy_FromConfig(t *testing.T) {
	cfg, err := config.Parse("lethe.yaml", []byte(`postgres: {upstream: "db:5432"}
capture:
  wal: off
  database: app
  tables:
    - {table: Docs, id: id, subjects: ["cmetadata->>'user_id'", owner], retain: 90d, retain_by: created_at}
coverage:
  ignore:
    - {table: '"App"."Help"', reason: public manuals}
`))
	require.NoError(t, err)
	p, err := coveragePolicy(cfg)
	require.NoError(t, err)
	require.Len(t, p.Tables, 1)
	assert.Equal(t, coverage.TableRule{Table: "public.docs", Where: "lethe.yaml:6", Columns: []coverage.RuleColumn{
		{Name: "id", Key: "id"}, {Name: "cmetadata", Key: "subjects"}, {Name: "owner", Key: "subjects"}, {Name: "created_at", Key: "retain_by"},
	}}, p.Tables[0])
	require.Len(t, p.Ignore, 1)
	assert.Equal(t, "App.Help", p.Ignore[0].Table)
	assert.Equal(t, "lethe.yaml:9", p.Ignore[0].Where)
	assert.True(t, p.SubjectColumn("Customer_ID"), "the default patterns, any case")
}
