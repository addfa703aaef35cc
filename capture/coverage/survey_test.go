package coverage

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPolicy_RulesAndIgnoredByStore(t *testing.T) {
	p := Policy{
		Tables:  []TableRule{{Table: "public.docs", Where: "lethe.yaml:4"}},
		Indexes: []IndexRules{{Index: "memories", Where: "lethe.yaml:9", Namespaces: []string{"", "*"}}},
		Ignore: []Ignore{
			{Table: "public.embeddings_cache", Reason: "model cache, no person", Where: "lethe.yaml:14"},
			{Index: "memories", Namespace: "", Reason: "fixtures", Where: "lethe.yaml:16"},
		},
	}
	assert.Equal(t, []Rule{{Table: "public.docs", Where: "lethe.yaml:4"}}, p.Rules(StorePostgres))
	assert.Equal(t, []Rule{
		{Index: "memories", Namespace: "__default__", Where: "lethe.yaml:9"},
		{Index: "memories", Namespace: "*", Where: "lethe.yaml:9"},
	}, p.Rules(StorePinecone))
	assert.Equal(t, []Ignore{p.Ignore[0]}, p.Ignored(StorePostgres))
	assert.Equal(t, []Ignore{{Index: "memories", Namespace: "__default__", Reason: "fixtures", Where: "lethe.yaml:16"}}, p.Ignored(StorePinecone))
	// A store without rules lists none as [], not null, for JSON readers.
	assert.Equal(t, []Rule{}, Policy{}.Rules(StorePostgres))
	assert.Equal(t, []Ignore{}, Policy{}.Ignored("other"))
}

func TestStoreSurvey_JSONFlattensTheReport(t *testing.T) {
	s := StoreSurvey{Store: StorePostgres, Report: Report{TablesChecked: 2, Findings: []Finding{{Code: CodeUncoveredTable, Table: "public.notes"}}},
		Ignored: []Ignore{{Table: "public.cache", Reason: "no person", Where: "lethe.yaml:3"}}}
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	assert.EqualValues(t, 2, got["tables_checked"])
	assert.Len(t, got["findings"], 1)
	assert.Equal(t, map[string]any{"table": "public.cache", "reason": "no person", "where": "lethe.yaml:3"}, got["ignored"].([]any)[0])
}
