package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/capture/coverage"
	"github.com/lethe-privacy/lethe/ledger"
)

// The policy names the columns rules read (a JSON path's column, the
// retain_by column), canonical table names and where each rule is.
func TestCompile_CoveragePolicy(t *testing.T) {
	cfg, err := Parse("lethe.yaml", []byte(`postgres: {upstream: "db:5432"}
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
	p := cfg.Compiled().Coverage
	require.Len(t, p.Tables, 1)
	assert.Equal(t, coverage.TableRule{Table: "public.docs", Where: "lethe.yaml:6", Columns: []coverage.RuleColumn{
		{Name: "id", Key: "id"}, {Name: "cmetadata", Key: "subjects"}, {Name: "owner", Key: "subjects"}, {Name: "created_at", Key: "retain_by"},
	}}, p.Tables[0])
	require.Len(t, p.Ignore, 1)
	assert.Equal(t, "App.Help", p.Ignore[0].Table)
	assert.Equal(t, "lethe.yaml:9", p.Ignore[0].Where)
	assert.True(t, p.SubjectColumn("Customer_ID"), "the default patterns, any case")
	assert.Empty(t, cfg.Compiled().CoverageSkip, "an SQLite ledger has no schema to skip")
}

// What the commands ask for is compiled at load: the tables' rules, their
// id columns by canonical name, the Pinecone rules of indexes with
// namespace rules only, and the ledger's schema for the coverage check.
func TestCompile_RulesForTheCommands(t *testing.T) {
	cfg, err := Parse("lethe.yaml", []byte(`postgres: {upstream: "db:5432"}
pinecone:
  indexes:
    - {name: docs, host: "https://docs.example", namespaces: [{namespace: "*", subjects: [user_id]}]}
    - {name: bare, host: "https://bare.example"}
capture:
  wal: off
  database: app
  ledger: {postgres: "dbname=ledger"}
  tables:
    - {table: Docs, id: doc_id, subjects: [owner]}
`))
	require.NoError(t, err)
	c := cfg.Compiled()
	assert.Equal(t, map[string]string{"public.docs": "doc_id"}, c.IDColumns)
	require.Len(t, c.Pinecone, 1)
	assert.Equal(t, "docs", c.Pinecone[0].Index())
	assert.Len(t, c.Coverage.Indexes, 2)
	assert.Equal(t, []string{ledger.DefaultPostgresSchema}, c.CoverageSkip)
	assert.True(t, cfg.HasRules())
}

// A rule that validates key by key but cannot be compiled (its subject is
// its id column) is refused when the file is loaded, with the place to
// change, not when the proxy starts capture.
func TestParse_RuleThatDoesNotCompileIsRefusedAtLoad(t *testing.T) {
	_, err := Parse("lethe.yaml", []byte(`postgres: {upstream: "db:5432"}
capture:
  wal: off
  database: app
  tables:
    - {table: docs, id: owner, subjects: [owner]}
`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lethe: invalid config")
	assert.Contains(t, err.Error(), `lethe.yaml:5: capture.tables: extract: table "public.docs": subject column "owner" is the id column`)
}
