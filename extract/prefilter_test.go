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

// containsFold finds a needle where a byte-by-byte comparison at every
// offset finds it, whether the needle has a caseless byte ('_', '&', a
// digit) to anchor on or only letters.
func TestContainsFold_AgreesWithAComparisonAtEveryOffset(t *testing.T) {
	naive := func(s string, lower []byte) bool {
		for i := 0; i+len(lower) <= len(s); i++ {
			if hasPrefixFold(s[i:], lower) {
				return true
			}
		}
		return false
	}
	needles := []string{"search_path", "set_config", "pg_settings", "u&", "schema", "_", "&x", "a_b_c", "x1"}
	texts := []string{"", "_", "SET SEARCH_PATH TO x", "set search__path", "search_pat", "_search_path",
		"SELECT Set_Config('a', 'b', false)", `U&"x"`, "u &", "pg__settings pg_settings", "a_b_a_b_c",
		"set schema 'x'", "SCHEMA", "sche", "X1", "search_pathsearch_path", "é_search_path"}
	for _, n := range needles {
		for _, s := range texts {
			if got, want := containsFold(s, []byte(n)), naive(s, []byte(n)); got != want {
				t.Errorf("containsFold(%q, %q) = %v, want %v", s, n, got, want)
			}
		}
	}
}
