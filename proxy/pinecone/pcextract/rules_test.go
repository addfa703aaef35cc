package pcextract

import (
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewPineconeRules_RejectsBadRules(t *testing.T) {
	cases := []struct {
		name  string
		index string
		ns    map[string][]string
	}{
		{"no index", "", map[string][]string{"": {"user_id"}}},
		{"empty field name", "docs", map[string][]string{"": {"user_id", ""}}},
		{"no fields", "docs", map[string][]string{"team": nil}},
		{"empty field name under *", "docs", map[string][]string{"*": {""}}},
		{"default namespace twice", "docs", map[string][]string{"": {"a"}, "__default__": {"b"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewRules(c.index, c.ns)
			assert.Error(t, err)
		})
	}
}

func TestPineconeRules_Covers(t *testing.T) {
	r := pcRules(t)
	assert.True(t, r.Covers(""))
	assert.True(t, r.Covers("__default__"))
	assert.True(t, r.Covers("team"))
	assert.False(t, r.Covers("other"))
	assert.True(t, pcRulesAny(t).Covers("other"))
	assert.Equal(t, "docs", r.Index())
}

func TestPineconeRules_DefaultNamespaceRuleByItsCanonicalName(t *testing.T) {
	r, err := NewRules("docs", map[string][]string{"__default__": {"user_id"}})
	require.NoError(t, err)
	tags, err := r.UpsertREST([]byte(`{"vectors":[{"id":"a","values":[1],"metadata":{"user_id":"u"}}]}`))
	require.NoError(t, err)
	assert.Equal(t, []extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"u"}}}, tags)
}

func TestPineconeRules_BulkImportIsUnattributed(t *testing.T) {
	tags := pcRules(t).BulkImport()
	require.Len(t, tags, 1)
	assert.Equal(t, "docs/*", tags[0].Table)
	assert.Equal(t, extract.OpUnattributed, tags[0].Op)
	assert.NotEmpty(t, tags[0].Reason)
}
