package extract

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writerRules is testRules with server-side writers, as a catalog loader
// would find them.
func writerRules(t testing.TB) *Rules {
	t.Helper()
	return testRules(t).WithWriters(Writers{
		Functions: []WriterFunction{
			{Schema: "public", Name: "add_doc", Tables: []string{"public.docs"}},
			{Schema: "app", Name: "store_memory", Tables: []string{"public.mem0"}},
			{Schema: "public", Name: "Odd_Name", Tables: []string{"public.items"}},
			{Schema: "public", Name: "ghost", Tables: []string{"public.not_configured"}},
		},
		Fired: []FiredRelation{
			{Schema: "public", Name: "messages", By: "trigger embed_message", Events: OnInsert | OnUpdate, Tables: []string{"public.docs"}},
			{Schema: "public", Name: "docs", By: "trigger copy_to_items", Events: OnInsert, Tables: []string{"public.items"}},
			{Schema: "public", Name: "staging", By: "rule push", Tables: []string{"public.docs", "public.mem0"}},
		},
	})
}

// unattributedTables analyzes sql and returns the tables of its
// unattributed analyses, sorted, checking each has a reason.
func unattributedTables(t *testing.T, r *Rules, sql string) []string {
	t.Helper()
	as, err := r.Analyze(sql, nil)
	require.NoError(t, err, sql)
	var out []string
	for _, a := range as {
		if a.Kind == KindUnattributed {
			assert.NotEmpty(t, a.Reason)
			out = append(out, a.Table)
		}
	}
	sort.Strings(out)
	return out
}

func TestAnalyze_CallsOfWriterFunctionsAreUnattributed(t *testing.T) {
	r := writerRules(t)
	docs := []string{"public.docs"}
	cases := []struct {
		sql  string
		want []string
	}{
		{`SELECT add_doc($1, $2)`, docs},
		{`SELECT public.add_doc('a', 'u')`, docs},
		{`select ADD_DOC('a', 'u')`, docs},
		{`SELECT * FROM add_doc('a', 'u')`, docs},
		{`CALL app.store_memory($1)`, []string{"public.mem0"}},
		{`CALL store_memory($1)`, []string{"public.mem0"}},
		{`INSERT INTO other (id, x) VALUES (1, add_doc('a', 'u'))`, docs},
		{`UPDATE other SET x = add_doc(id, 'u') WHERE id = 1`, docs},
		{`DELETE FROM other WHERE add_doc(id, 'u') IS NOT NULL`, docs},
		{`WITH x AS (SELECT add_doc('a', 'u')) SELECT * FROM x`, docs},
		{`SELECT 1 FROM other WHERE id IN (SELECT add_doc(id, 'u') FROM other2)`, docs},
		{`EXPLAIN ANALYZE SELECT add_doc('a', 'u')`, docs},
		{`PREPARE p (text, text) AS SELECT add_doc($1, $2)`, docs},
		{`SELECT add_doc('a', 'u'), add_doc('b', 'u'), store_memory('m')`, []string{"public.docs", "public.mem0"}},
		{`SELECT "Odd_Name"(1)`, []string{"public.items"}},
		// Not calls of a writer.
		{`SELECT other.add_doc('a', 'u')`, nil},
		{`SELECT odd_name(1)`, nil}, // folds to lower case: another function
		{`SELECT add_doc FROM other`, nil},
		{`SELECT 'add_doc(1)'`, nil},
		{`EXPLAIN SELECT add_doc('a', 'u')`, nil},
		{`CREATE VIEW v AS SELECT add_doc('a', 'u')`, nil},
		{`CREATE FUNCTION f() RETURNS void LANGUAGE sql BEGIN ATOMIC SELECT add_doc('a', 'u'); END`, nil},
		{`CREATE TABLE t (id text, x text DEFAULT add_doc('a', 'u'))`, nil},
		{`SELECT ghost()`, nil}, // writes no configured table
	}
	for _, c := range cases {
		assert.Equal(t, c.want, unattributedTables(t, r, c.sql), c.sql)
	}
}

func TestAnalyze_WritesToFiredRelationsAreUnattributed(t *testing.T) {
	r := writerRules(t)
	docs := []string{"public.docs"}
	both := []string{"public.docs", "public.mem0"}
	cases := []struct {
		sql  string
		want []string
	}{
		{`INSERT INTO messages (id, body) VALUES (1, 'hi')`, docs},
		{`INSERT INTO public.messages (id, body) VALUES ($1, $2)`, docs},
		{`UPDATE messages SET body = 'x' WHERE id = 1`, docs},
		{`COPY messages (id, body) FROM STDIN`, docs},
		{`MERGE INTO messages m USING s ON m.id = s.id WHEN MATCHED THEN DELETE`, docs},
		{`WITH w AS (INSERT INTO messages (id) VALUES (1) RETURNING id) SELECT * FROM w`, docs},
		{`EXPLAIN ANALYZE UPDATE messages SET body = 'x'`, docs},
		{`DELETE FROM staging`, both},
		{`TRUNCATE staging`, both}, // a rule's Events 0: any write
		// Not writes that fire.
		{`DELETE FROM messages WHERE id = 1`, nil}, // its trigger fires on INSERT and UPDATE
		{`TRUNCATE messages`, nil},
		{`SELECT * FROM messages`, nil},
		{`COPY messages TO STDOUT`, nil},
		{`INSERT INTO other.messages (id) VALUES (1)`, nil},
		{`EXPLAIN INSERT INTO messages (id) VALUES (1)`, nil},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, unattributedTables(t, r, c.sql), c.sql)
	}
}

func TestAnalyze_ConfiguredTableWhoseTriggerWritesAnotherKeepsItsOwnTags(t *testing.T) {
	r := writerRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id, user_id) VALUES ('a', 'u')`, nil)
	require.NoError(t, err)
	require.Len(t, as, 2)
	assert.Equal(t, KindInsert, as[0].Kind)
	assert.Equal(t, "public.docs", as[0].Table)
	assert.Equal(t, KindUnattributed, as[1].Kind)
	assert.Equal(t, "public.items", as[1].Table)
	assert.Contains(t, as[1].Reason, "trigger copy_to_items")
}

func TestAnalyze_ReasonsNameTheFunctionOrTrigger(t *testing.T) {
	r := writerRules(t)
	as, err := r.Analyze(`SELECT add_doc($1, $2)`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	assert.Equal(t, "calls public.add_doc, which writes public.docs inside the server: writes made by functions, procedures, triggers and rules cannot be attributed", as[0].Reason)
	tags, err := as[0].Tags(textParams("a", "u"))
	require.NoError(t, err)
	assert.Equal(t, []Tag{{Table: "public.docs", Op: OpUnattributed, Reason: as[0].Reason}}, tags)

	as, err = r.Analyze(`INSERT INTO messages (id) VALUES (1)`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	assert.Contains(t, as[0].Reason, "public.messages, whose trigger embed_message writes public.docs")
}

func TestAnalyze_DOBlocksNamingConfiguredTables(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
	}{
		{`DO $$ BEGIN INSERT INTO docs (id, user_id) VALUES ('a', 'u'); END $$`, []string{"public.docs", "vecs.docs"}},
		{`DO $$ BEGIN DELETE FROM public.mem0; END $$`, []string{"public.mem0"}},
		{`do language plpgsql 'begin update "App"."Notes" set owner = null; end'`, []string{"App.Notes"}},
		{`DO $x$ BEGIN EXECUTE 'TRUNCATE ' || 'items'; END $x$`, []string{"public.items"}},
		{`DO $$ BEGIN INSERT INTO my_docs_archive VALUES (1); END $$`, nil},
		{`DO $$ BEGIN RAISE NOTICE 'hello'; END $$`, nil},
	}
	r := testRules(t)
	for _, c := range cases {
		assert.Equal(t, c.want, unattributedTables(t, r, c.sql), c.sql)
	}
	as, err := testRules(t).Analyze(`DO $$ BEGIN DELETE FROM mem0; END $$`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	assert.Equal(t, "DO block naming public.mem0: writes made inside the server cannot be attributed", as[0].Reason)
}

func TestAnalyze_DOBlocksNamingWritersOrFiredRelations(t *testing.T) {
	r := writerRules(t)
	assert.Equal(t, []string{"public.docs"}, unattributedTables(t, r, `DO $$ BEGIN PERFORM add_doc('a', 'u'); END $$`))
	// docs itself fires a trigger that writes items.
	assert.Equal(t, []string{"public.docs", "public.items", "vecs.docs"}, unattributedTables(t, r, `DO $$ BEGIN INSERT INTO docs VALUES (1); END $$`))
	assert.Equal(t, []string{"public.docs"}, unattributedTables(t, r, `DO $$ BEGIN INSERT INTO messages VALUES (1); END $$`))
	assert.Equal(t, []string{"public.docs", "public.mem0"}, unattributedTables(t, r, `DO $$ BEGIN PERFORM add_doc('a', 'u'); CALL store_memory('m'); END $$`))
}

func TestWithWriters_LeavesTheOriginalRulesAlone(t *testing.T) {
	base := testRules(t)
	r := writerRules(t)
	assert.False(t, base.Mentions(`SELECT add_doc($1, $2)`))
	assert.True(t, r.Mentions(`SELECT add_doc($1, $2)`))
	as, err := base.Analyze(`INSERT INTO messages (id) VALUES (1)`, nil)
	require.NoError(t, err)
	assert.Empty(t, as)
	// Replacing the writers drops the old ones.
	none := r.WithWriters(Writers{})
	assert.False(t, none.Mentions(`SELECT add_doc($1, $2)`))
	assert.True(t, none.Mentions(`INSERT INTO docs VALUES (1)`))
}

func TestAnalyze_WritersChangeNothingForOtherStatements(t *testing.T) {
	r := writerRules(t)
	for _, sql := range []string{
		`SELECT * FROM docs WHERE user_id = $1`,
		`INSERT INTO other (id, user_id) VALUES ('a', 'u')`,
		`UPDATE other SET user_id = 'u'`,
		`SELECT match_documents($1::vector, 0.5, 10)`,
		`CREATE TRIGGER t AFTER INSERT ON other FOR EACH ROW EXECUTE FUNCTION add_doc()`,
		`CREATE RULE r AS ON INSERT TO other DO ALSO SELECT add_doc(new.id, 'u')`,
	} {
		as, err := r.Analyze(sql, nil)
		require.NoError(t, err, sql)
		assert.Empty(t, as, sql)
	}
	tags := tagsOf(t, r, `UPDATE docs SET user_id = $1 WHERE id = $2`, textParams("u", "a"))
	assert.Equal(t, []Tag{write("public.docs", "a", "u")}, tags)
}

func TestMentions_FindsWriterNames(t *testing.T) {
	r := writerRules(t)
	for sql, want := range map[string]bool{
		"SELECT add_doc($1, $2)":               true,
		"CALL APP.STORE_MEMORY($1)":            true,
		"INSERT INTO Messages (id) VALUES (1)": true,
		"DELETE FROM staging":                  true,
		"SELECT match_documents($1, 5)":        false,
	} {
		assert.Equal(t, want, r.Mentions(sql), sql)
	}
	sql := "INSERT INTO some_other_table (id, body) VALUES ($1, $2) ON CONFLICT DO NOTHING"
	assert.Zero(t, testing.AllocsPerRun(100, func() { r.Mentions(sql) }))
}

func TestNamedIn_WholeIdentifiersIgnoringCase(t *testing.T) {
	for _, c := range []struct {
		text, name string
		want       bool
	}{
		{"insert into docs values", "docs", true},
		{`insert into "public"."DOCS"`, "docs", true},
		{"insert into public.docs(id)", "docs", true},
		{"docs", "docs", true},
		{"my_docs", "docs", false},
		{"docs2", "docs", false},
		{"$docs", "docs", false},
		{"dócs docs", "docs", true},
		{"", "docs", false},
	} {
		assert.Equal(t, c.want, namedIn(c.text, c.name), "%q in %q", c.name, c.text)
	}
}

func TestMentions_NonASCIINamesMatchAsWritten(t *testing.T) {
	r, err := NewRules([]Rule{{Table: `public."Ärger"`, ID: "id", Subjects: []Subject{{Column: "owner"}}}})
	require.NoError(t, err)
	assert.True(t, r.Mentions(`INSERT INTO "Ärger" (id, owner) VALUES (1, 'a')`))
	assert.True(t, namedIn(`DO $$ BEGIN DELETE FROM "Ärger"; END $$`, "Ärger"))
}
