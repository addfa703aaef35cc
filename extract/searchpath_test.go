package extract

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifySearchPath(t *testing.T) {
	tests := []struct {
		sql  string
		want SearchPathChange
		ok   bool
	}{
		{`SET search_path TO vecs, public`, SearchPathChange{Path: []string{"vecs", "public"}}, true},
		{`SET SESSION search_path = app`, SearchPathChange{Path: []string{"app"}}, true},
		{`SET LOCAL search_path TO app`, SearchPathChange{Path: []string{"app"}, Local: true}, true},
		{`SET "Search_Path" TO app`, SearchPathChange{Path: []string{"app"}}, true},
		{`SET search_path TO DEFAULT`, SearchPathChange{Reset: true}, true},
		{`SET LOCAL search_path TO DEFAULT`, SearchPathChange{Reset: true, Local: true}, true},
		{`RESET search_path`, SearchPathChange{Reset: true}, true},
		{`RESET ALL`, SearchPathChange{Reset: true}, true},
		{`DISCARD ALL`, SearchPathChange{Reset: true}, true},
		{`DISCARD PLANS`, SearchPathChange{}, false},
		{`RESET statement_timeout`, SearchPathChange{}, false},
		{`SELECT set_config('search_path', 'Vecs, "App"', false)`, SearchPathChange{Path: []string{"vecs", "App"}}, true},
		{`SELECT set_config('search_path', 'app', true)`, SearchPathChange{Path: []string{"app"}, Local: true}, true},
		{`SELECT set_config('SEARCH_PATH', 'app', 't')`, SearchPathChange{Path: []string{"app"}, Local: true}, true},
		{`SELECT pg_catalog.set_config('search_path', '', false)`, SearchPathChange{Path: []string{}}, true},
		{`SELECT set_config('search_path', $1, false)`, SearchPathChange{Unknown: true}, true},
		{`SELECT set_config('search_path', 'app', $1)`, SearchPathChange{Unknown: true}, true},
		{`SELECT set_config('search_path', 'a,,b', false)`, SearchPathChange{Unknown: true}, true},
		{`SELECT set_config('search_path', s, false) FROM settings`, SearchPathChange{Unknown: true}, true},
		{`SELECT set_config('search_path', 'app', false) WHERE false`, SearchPathChange{Unknown: true}, true},
		{`SELECT CASE WHEN x THEN set_config('search_path', 'app', false) END`, SearchPathChange{Unknown: true}, true},
		{`SELECT set_config('search_path', 'a', false), set_config('search_path', 'b', true)`, SearchPathChange{Unknown: true}, true},
		{`SELECT current_setting('search_path')`, SearchPathChange{}, false},
		{`SELECT set_config('application_name', 'x', false), current_setting('search_path')`, SearchPathChange{}, false},
		{`SELECT 1 UNION SELECT length(set_config('search_path', 'a', false))`, SearchPathChange{Unknown: true}, true},
		{`SELECT set_config('application_name', 'x', false); SELECT (SELECT set_config('search_path', 'a', false))`, SearchPathChange{Unknown: true}, true},
		{`SHOW search_path`, SearchPathChange{}, false},
		{`SET search_path TO a; SET LOCAL search_path TO b`, SearchPathChange{Unknown: true}, true},
		{`SET search_path TO a; SET search_path TO b`, SearchPathChange{Path: []string{"b"}}, true},
		{`SET search_path TO`, SearchPathChange{}, false}, // a syntax error: nothing runs
		// Changes spelled other ways, or hidden where only the server sees
		// what they do.
		{`SET SCHEMA 'vecs'`, SearchPathChange{Path: []string{"vecs"}}, true},
		{`SET LOCAL SCHEMA 'vecs'`, SearchPathChange{Path: []string{"vecs"}, Local: true}, true},
		{`SET U&"search\005fpath" TO vecs`, SearchPathChange{Path: []string{"vecs"}}, true},
		{`SELECT set_config(E'search\_path', 'vecs', false)`, SearchPathChange{Path: []string{"vecs"}}, true},
		{`WITH s AS (SELECT set_config('search_path', 'vecs', false)) SELECT * FROM s`, SearchPathChange{Unknown: true}, true},
		{`VALUES (set_config('search_path', 'vecs', false))`, SearchPathChange{Unknown: true}, true},
		{`INSERT INTO log (v) SELECT set_config('search_path', 'vecs', false)`, SearchPathChange{Unknown: true}, true},
		{`UPDATE pg_settings SET setting = 'vecs' WHERE name = 'search_path'`, SearchPathChange{Unknown: true}, true},
		{`update PG_CATALOG.PG_SETTINGS set setting = 'vecs' where name = E'search\_path'`, SearchPathChange{Unknown: true}, true},
		{`DO $$ BEGIN SET search_path = vecs; END $$`, SearchPathChange{Unknown: true}, true},
		{`DO $$ BEGIN PERFORM 1; END $$`, SearchPathChange{}, false},
		{`SELECT 1; SET SCHEMA 'vecs'`, SearchPathChange{Path: []string{"vecs"}}, true},
	}
	for _, tc := range tests {
		got, ok := ClassifySearchPath(tc.sql)
		assert.Equal(t, tc.ok, ok, tc.sql)
		assert.Equal(t, tc.want, got, tc.sql)
	}
}

func TestClassifySearchPath_OtherStatementsDoNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		ClassifySearchPath("SELECT aid FROM pgbench_accounts WHERE aid = $1")
		ClassifySearchPath("INSERT INTO docs (id) VALUES ('search_path')")
		ClassifySearchPath("SET statement_timeout = 0")
	})
	assert.Zero(t, allocs)
}

func TestParseSearchPath(t *testing.T) {
	got, err := ParseSearchPath(` "$user", Public, "My Schema" `)
	require.NoError(t, err)
	assert.Equal(t, []string{"$user", "public", "My Schema"}, got)
	got, err = ParseSearchPath("")
	require.NoError(t, err)
	assert.Equal(t, []string{}, got)
	_, err = ParseSearchPath(`"open`)
	assert.Error(t, err)
}

func TestRules_Schemas(t *testing.T) {
	got := testRules(t).Schemas()
	sort.Strings(got)
	assert.Equal(t, []string{"App", "public", "vecs"}, got)
}

func TestAnalyzeUnder_ReturnsEveryCandidatesWritesOnce(t *testing.T) {
	r := testRules(t)
	tables := func(as []*Analysis) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Table)
		}
		return out
	}
	tests := []struct {
		name  string
		sql   string
		paths [][]string
		want  []string
	}{
		{"one path is Analyze", `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')`,
			[][]string{{"vecs"}}, []string{"vecs.docs"}},
		{"a table per candidate", `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')`,
			[][]string{{"vecs"}, {"public"}, {"other"}}, []string{"vecs.docs", "public.docs"}},
		{"the same write once", `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')`,
			[][]string{{"public"}, {"other", "public"}, {"public", "other"}}, []string{"public.docs"}},
		{"a text writing the same rows twice keeps both",
			`INSERT INTO docs (id, user_id) VALUES ('a', 'ann'); INSERT INTO public.docs (id, user_id) VALUES ('a', 'ann')`,
			[][]string{{"public"}, {"other"}}, []string{"public.docs", "public.docs"}},
		{"different rows of one table are different writes",
			`INSERT INTO docs (id, user_id) VALUES ('x', 'ann'); INSERT INTO public.docs (id, user_id) VALUES ('y', 'bob')`,
			[][]string{{"vecs"}, {"public"}}, []string{"vecs.docs", "public.docs", "public.docs"}},
		{"no candidate resolves it", `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')`,
			[][]string{{"other"}, {"app"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			as, err := r.AnalyzeUnder(tc.sql, tc.paths)
			require.NoError(t, err)
			assert.Equal(t, tc.want, tables(as))
		})
	}
	// Which rows: the one that only the second path resolves to public.docs
	// must not be mistaken for the qualified one.
	as, err := r.AnalyzeUnder(`INSERT INTO docs (id, user_id) VALUES ('x', 'ann'); INSERT INTO public.docs (id, user_id) VALUES ('y', 'bob')`,
		[][]string{{"vecs"}, {"public"}})
	require.NoError(t, err)
	var ids []string
	for _, a := range as {
		tags, err := a.Tags(Params{})
		require.NoError(t, err)
		for _, tg := range tags {
			ids = append(ids, tg.Table+"/"+tg.ID)
		}
	}
	assert.ElementsMatch(t, []string{"vecs.docs/x", "public.docs/y", "public.docs/x"}, ids)

	_, err = r.AnalyzeUnder(`INSERT INTO docs (`, [][]string{{"a"}, {"b"}})
	assert.Error(t, err)
}

// BenchmarkSearchPathSet measures what reading search_path changes costs
// the statements capture classifies: the 100-row INSERT text (about
// 1.6 kB), a SELECT, and a SET that takes a parse.
func BenchmarkSearchPathSet(b *testing.B) {
	insert, _ := benchInsert()
	for name, sql := range map[string]string{
		"insert": insert,
		"select": "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
		"set":    "SET search_path TO vecs, public",
		// What the filter for changes hidden in other statements costs
		// a megabyte-sized statement.
		"inline-vectors": inlineVectorInsert(500, 384),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				SearchPathSet(sql)
			}
		})
	}
}
