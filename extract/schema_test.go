package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnalyze_ResolvesTableNamesLikePostgreSQL(t *testing.T) {
	r := testRules(t)
	cases := []struct {
		sql        string
		searchPath []string
		want       string // "" = not a configured table
	}{
		{`INSERT INTO docs (id) VALUES (1)`, nil, "public.docs"},
		{`INSERT INTO public.docs (id) VALUES (1)`, nil, "public.docs"},
		{`INSERT INTO "public"."docs" (id) VALUES (1)`, nil, "public.docs"},
		{`INSERT INTO PUBLIC.DOCS (id) VALUES (1)`, nil, "public.docs"},
		{`INSERT INTO "DOCS" (id) VALUES (1)`, nil, ""},
		{`INSERT INTO docs (id) VALUES (1)`, []string{"vecs", "public"}, "vecs.docs"},
		{`INSERT INTO docs (id) VALUES (1)`, []string{"app"}, ""},
		{`INSERT INTO vecs.docs (id) VALUES (1)`, []string{"public"}, "vecs.docs"},
		{`INSERT INTO "App"."Notes" (id) VALUES (1)`, nil, "App.Notes"},
		{`INSERT INTO App.Notes (id) VALUES (1)`, nil, ""},
		{`INSERT INTO "Notes" (id) VALUES (1)`, []string{"App"}, "App.Notes"},
		{`INSERT INTO mydb.public.docs (id) VALUES (1)`, nil, "public.docs"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			as, err := r.Analyze(c.sql, c.searchPath)
			require.NoError(t, err)
			if c.want == "" {
				assert.Empty(t, as)
				return
			}
			require.Len(t, as, 1)
			assert.Equal(t, c.want, as[0].Table)
		})
	}
}

// "$user" is the current role's schema; SET ROLE changes it without a
// word about search_path, so a schema named like some role may be it.
func TestAnalyze_UserSchemaMayBeAnyRolesSchema(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id) VALUES (1)`, []string{"$user", "public"})
	require.NoError(t, err)
	assert.Equal(t, []string{"public.docs", "vecs.docs"}, analysedTables(as))
	as, err = r.Analyze(`INSERT INTO docs (id) VALUES (1)`, []string{"public", "$user"})
	require.NoError(t, err)
	assert.Equal(t, []string{"public.docs"}, analysedTables(as), "public comes first and has docs")
}

func TestSearchPathSet_ReadsSetStatements(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
		ok   bool
	}{
		{`SET search_path TO vecs, public`, []string{"vecs", "public"}, true},
		{`SET search_path = "MySchema", public`, []string{"MySchema", "public"}, true},
		{`set SEARCH_PATH to Vecs`, []string{"vecs"}, true},
		{`SET LOCAL search_path TO app`, []string{"app"}, true},
		{`SET search_path TO DEFAULT`, []string{"$user", "public"}, true},
		{`RESET search_path`, []string{"$user", "public"}, true},
		{`RESET ALL`, []string{"$user", "public"}, true},
		{`SET search_path TO "$user", public`, []string{"$user", "public"}, true},
		{`SELECT set_config('search_path', 'Vecs, "App"', false)`, []string{"vecs", "App"}, true},
		{`SELECT pg_catalog.set_config('search_path', '', false)`, []string{}, true},
		{`SET search_path TO a; SET search_path TO b`, []string{"b"}, true},
		{`SET statement_timeout = 0`, nil, false},
		{`SELECT 1`, nil, false},
		{`not sql search_path`, nil, false},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			got, ok := SearchPathSet(c.sql)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestAnalyze_SetSearchPathAppliesToLaterStatements(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id) VALUES (1); SET search_path TO vecs; INSERT INTO docs (id) VALUES (2)`, nil)
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, "public.docs", as[0].Table)
	assert.Equal(t, "vecs.docs", as[1].Table)
}

func TestSearchPathSet_SkipsOtherStatementsCheaply(t *testing.T) {
	for _, sql := range []string{
		"INSERT INTO docs (id) VALUES ('reset search_path')",
		"UPDATE docs SET meta = '{\"search_path\": 1}'",
	} {
		_, ok := SearchPathSet(sql)
		assert.False(t, ok, sql)
	}
	for sql, want := range map[string][]string{
		"-- comment\n  SET search_path TO a, b":        {"a", "b"},
		"select set_config('search_path', 'c', false)": {"c"},
	} {
		got, ok := SearchPathSet(sql)
		assert.True(t, ok, sql)
		assert.Equal(t, want, got, sql)
	}
}
