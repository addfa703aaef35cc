package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMentions_FindsConfiguredNamesCaseInsensitively(t *testing.T) {
	r := testRules(t)
	cases := map[string]bool{
		"INSERT INTO docs VALUES (1)":             true,
		`insert into "public"."DOCS" values (1)`:  true,
		"UPDATE Langchain_PG_Embedding SET x = 1": true,
		"SELECT 1":                            false,
		"INSERT INTO other (id) VALUES (1)":   false,
		`INSERT INTO U&"d\0063cs" VALUES (1)`: true, // Unicode escapes could hide a name
		"":                                    false,
	}
	for sql, want := range cases {
		assert.Equal(t, want, r.Mentions(sql), sql)
	}
}

func TestMentions_DoesNotAllocate(t *testing.T) {
	r := testRules(t)
	sql := "INSERT INTO some_other_table (id, body) VALUES ($1, $2) ON CONFLICT DO NOTHING"
	allocs := testing.AllocsPerRun(100, func() { r.Mentions(sql) })
	assert.Zero(t, allocs)
}

func TestMentions_FalseMeansAnalyzeFindsNothing(t *testing.T) {
	r := testRules(t)
	for _, sql := range []string{"SELECT 1", "INSERT INTO other (id) VALUES (1)", "CREATE TABLE x (id int)"} {
		assert.False(t, r.Mentions(sql))
		as, err := r.Analyze(sql, nil)
		assert.NoError(t, err)
		assert.Empty(t, as)
	}
}
