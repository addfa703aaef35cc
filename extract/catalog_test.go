package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// plpgsql wraps a PL/pgSQL body in the CREATE FUNCTION that
// pg_get_functiondef would print.
func plpgsql(name, returns, body string) Routine {
	return Routine{
		Schema: "public", Name: name, Language: "plpgsql", Source: body,
		Definition: "CREATE OR REPLACE FUNCTION public." + name + "()\n RETURNS " + returns + "\n LANGUAGE plpgsql\nAS $function$" + body + "$function$\n",
	}
}

func sqlRoutine(schema, name, body string) Routine {
	return Routine{Schema: schema, Name: name, Language: "sql", Source: body}
}

// Supabase's match_documents in its two published forms: a similarity
// search reads a configured table and must not count as a writer.
var (
	matchDocumentsSQL = sqlRoutine("public", "match_documents", `
  select docs.id, docs.content, 1 - (docs.embedding <=> query_embedding) as similarity
  from docs
  where 1 - (docs.embedding <=> query_embedding) > match_threshold
  order by (docs.embedding <=> query_embedding) asc
  limit least(match_count, 200);`)
	matchDocumentsPlpgsql = Routine{
		Schema: "public", Name: "match_documents_lc", Language: "plpgsql",
		Source: `
#variable_conflict use_column
begin
  return query
  select id, content, metadata, 1 - (docs.embedding <=> query_embedding) as similarity
  from docs
  where metadata @> filter
  order by docs.embedding <=> query_embedding
  limit match_count;
end;
`,
		Definition: `CREATE OR REPLACE FUNCTION public.match_documents_lc(query_embedding vector, match_count integer DEFAULT NULL::integer, filter jsonb DEFAULT '{}'::jsonb)
 RETURNS TABLE(id bigint, content text, metadata jsonb, similarity double precision)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
begin
  return query
  select id, content, metadata, 1 - (docs.embedding <=> query_embedding) as similarity
  from docs
  where metadata @> filter
  order by docs.embedding <=> query_embedding
  limit match_count;
end;
$function$
`,
	}
)

func TestFindWriters_ReadsEachLanguage(t *testing.T) {
	r := testRules(t)
	w := r.FindWriters(Catalog{Routines: []Routine{
		sqlRoutine("public", "add_doc", `INSERT INTO docs (id, user_id) VALUES ($1, $2)`),
		sqlRoutine("public", "two_statements", `SELECT 1; DELETE FROM vecs.docs WHERE id = $1`),
		{Schema: "public", Name: "atomic_add", Language: "sql", Source: "",
			Definition: "CREATE OR REPLACE FUNCTION public.atomic_add(a text)\n RETURNS void\n LANGUAGE sql\nBEGIN ATOMIC\n INSERT INTO public.items (id, user_id) VALUES (atomic_add.a, atomic_add.a);\nEND\n"},
		plpgsql("pl_insert", "integer", `
DECLARE v integer;
BEGIN
  INSERT INTO mem0 (id, payload) VALUES ('m', '{}') RETURNING 1 INTO v;
  RETURN v;
END`),
		plpgsql("pl_dynamic", "void", `
BEGIN
  EXECUTE format('UPDATE %I SET body = $1', 'data_docs') USING 'x';
END`),
		plpgsql("pl_dynamic_read", "bigint", `
DECLARE n bigint;
BEGIN
  EXECUTE 'SELECT count(*) FROM conversations' INTO n;
  RETURN n;
END`),
		{Schema: "public", Name: "pl_broken", Language: "plpgsql", Source: "BEGIN DELETE FROM langchain_pg_embedding; END",
			Definition: "this is not a function definition"},
		{Schema: "public", Name: "py_write", Language: "plpython3u", Source: `plpy.execute("insert into docs (id) values ('a')")`},
		{Schema: "public", Name: "py_read", Language: "plpython3u", Source: `return plpy.execute("select * from docs")`},
		matchDocumentsSQL,
		matchDocumentsPlpgsql,
		sqlRoutine("public", "reads_only", `SELECT count(*) FROM docs WHERE user_id = $1`),
		sqlRoutine("public", "other_table", `INSERT INTO other (id) VALUES ($1)`),
	}})
	assert.Equal(t, []WriterFunction{
		{Schema: "public", Name: "add_doc", Tables: []string{"public.docs", "vecs.docs"}},
		{Schema: "public", Name: "atomic_add", Tables: []string{"public.items"}},
		{Schema: "public", Name: "pl_broken", Tables: []string{"public.langchain_pg_embedding"}},
		{Schema: "public", Name: "pl_dynamic", Tables: []string{"public.data_docs"}},
		{Schema: "public", Name: "pl_insert", Tables: []string{"public.mem0"}},
		{Schema: "public", Name: "py_write", Tables: []string{"public.docs", "vecs.docs"}},
		{Schema: "public", Name: "two_statements", Tables: []string{"vecs.docs"}},
	}, w.Functions)
	assert.Empty(t, w.Fired)
}

func TestFindWriters_FollowsCallsTriggersAndRules(t *testing.T) {
	r := testRules(t)
	w := r.FindWriters(Catalog{
		Routines: []Routine{
			sqlRoutine("app", "add_doc", `INSERT INTO public.docs (id, user_id) VALUES ($1, $2)`),
			// Calls a writer, through PERFORM, an assignment and CALL.
			plpgsql("via_perform", "void", `BEGIN PERFORM app.add_doc('a', 'u'); END`),
			plpgsql("via_assign", "text", `DECLARE v text; BEGIN v := add_doc('a', 'u'); RETURN v; END`),
			plpgsql("via_call", "void", `BEGIN CALL via_perform(); END`),
			sqlRoutine("public", "wrong_schema", `SELECT other.add_doc('a', 'u')`),
			// A trigger function that writes another table.
			plpgsql("embed_message", "trigger", `
BEGIN
  INSERT INTO public.docs (id, user_id) VALUES (NEW.id, NEW.author);
  RETURN NEW;
END`),
			// A trigger function that only fills in NEW: not a writer.
			plpgsql("touch", "trigger", `BEGIN NEW.updated_at := now(); RETURN NEW; END`),
			// Writes a relation whose trigger writes a configured table.
			sqlRoutine("public", "log_message", `INSERT INTO messages (id, author) VALUES ($1, $2)`),
			sqlRoutine("public", "delete_message", `DELETE FROM messages WHERE id = $1`),
			plpgsql("copy_to_items", "trigger", `BEGIN INSERT INTO items (id, user_id) VALUES (NEW.id, NEW.user_id); RETURN NEW; END`),
		},
		Triggers: []Trigger{
			{Schema: "public", Table: "messages", Name: "embed", Events: OnInsert, FunctionSchema: "public", Function: "embed_message"},
			{Schema: "public", Table: "docs", Name: "touch_docs", Events: OnInsert | OnUpdate, FunctionSchema: "public", Function: "touch"},
			{Schema: "public", Table: "docs", Name: "to_items", Events: OnInsert, FunctionSchema: "public", Function: "copy_to_items"},
		},
		Rules: []RewriteRule{
			{Schema: "public", Table: "staging", Name: "push", Event: OnInsert,
				Definition: "CREATE RULE push AS\n    ON INSERT TO public.staging DO  INSERT INTO mem0 (id, payload)\n  VALUES (new.id, new.payload);"},
			{Schema: "public", Table: "archive", Name: "restore", Event: OnDelete,
				Definition: "CREATE RULE restore AS\n    ON DELETE TO public.archive DO  SELECT app.add_doc(old.id, old.user_id) AS add_doc;"},
			{Schema: "public", Table: "other", Name: "quiet", Event: OnInsert,
				Definition: "CREATE RULE quiet AS\n    ON INSERT TO public.other DO INSTEAD NOTHING;"},
		},
	})
	// docs' own trigger writes items, so whatever writes docs writes items too.
	docsItems := []string{"public.docs", "public.items"}
	assert.Equal(t, []WriterFunction{
		{Schema: "app", Name: "add_doc", Tables: docsItems},
		{Schema: "public", Name: "copy_to_items", Tables: []string{"public.items"}},
		{Schema: "public", Name: "embed_message", Tables: docsItems},
		{Schema: "public", Name: "log_message", Tables: docsItems},
		{Schema: "public", Name: "via_assign", Tables: docsItems},
		{Schema: "public", Name: "via_call", Tables: docsItems},
		{Schema: "public", Name: "via_perform", Tables: docsItems},
	}, w.Functions)
	assert.Equal(t, []FiredRelation{
		{Schema: "public", Name: "archive", By: "rule restore", Events: OnDelete, Tables: docsItems},
		{Schema: "public", Name: "docs", By: "trigger to_items", Events: OnInsert, Tables: []string{"public.items"}},
		{Schema: "public", Name: "messages", By: "trigger embed", Events: OnInsert, Tables: docsItems},
		{Schema: "public", Name: "staging", By: "rule push", Events: OnInsert, Tables: []string{"public.mem0"}},
	}, w.Fired)

	// And the proxy's rules built from them refuse what they should.
	rw := r.WithWriters(w)
	as, err := rw.Analyze(`SELECT via_call()`, nil)
	assert.NoError(t, err)
	assert.Len(t, as, 2)
	as, err = rw.Analyze(`DELETE FROM messages WHERE id = 1`, nil)
	assert.NoError(t, err)
	assert.Empty(t, as, "the trigger on messages fires on INSERT only")
}

func TestWriters_Equal(t *testing.T) {
	a := Writers{Functions: []WriterFunction{{Schema: "public", Name: "f", Tables: []string{"public.docs"}}}}
	b := Writers{Functions: []WriterFunction{{Schema: "public", Name: "f", Tables: []string{"public.docs"}}}}
	assert.True(t, a.Equal(b))
	b.Functions[0].Tables = []string{"public.items"}
	assert.False(t, a.Equal(b))
	assert.True(t, Writers{}.Equal(Writers{Functions: []WriterFunction{}}))
}

// TestWriterFinder_FollowsChangesBetweenReads: a WriterFinder reuses what it
// parsed, yet a body that changed, appeared or went away between two reads
// of the catalog is seen as it is now.
func TestWriterFinder_FollowsChangesBetweenReads(t *testing.T) {
	r := testRules(t)
	f := r.WriterFinder()
	reader := plpgsql("add_doc", "void", `BEGIN PERFORM count(*) FROM public.docs; END`)
	first := Catalog{Routines: []Routine{reader, sqlRoutine("app", "stays", `INSERT INTO public.docs (id, user_id) VALUES ($1, $2)`)}}
	w := f.Find(first)
	assert.Equal(t, []WriterFunction{{Schema: "app", Name: "stays", Tables: []string{"public.docs"}}}, w.Functions)
	assert.Equal(t, w, f.Find(first), "the same catalog, the same writers")

	writer := plpgsql("add_doc", "void", `BEGIN INSERT INTO public.docs (id, user_id) VALUES ('a', 'u'); END`)
	w = f.Find(Catalog{Routines: []Routine{writer}})
	assert.Equal(t, []WriterFunction{{Schema: "public", Name: "add_doc", Tables: []string{"public.docs"}}}, w.Functions,
		"the changed body is read again; the dropped function is gone")
	assert.Equal(t, r.FindWriters(Catalog{Routines: []Routine{writer}}), w)
}
