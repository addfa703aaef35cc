package extract

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests reproduce the SQL text real vector-store clients send (see
// the shapes real vector-store clients send, from their sources).

// langchain-postgres PGVector.add_embeddings: SQLAlchemy's insert().values()
// with on_conflict_do_update, compiled for psycopg 3 (%(name)s → $n, with the
// column types SQLAlchemy adds as casts), jsonb cmetadata.
func TestClients_LangchainPostgresUpsert(t *testing.T) {
	r := testRules(t)
	sql := `INSERT INTO langchain_pg_embedding (id, collection_id, embedding, document, cmetadata) VALUES ` +
		`($1::VARCHAR, $2::UUID, $3, $4::VARCHAR, $5::JSONB), ($6::VARCHAR, $7::UUID, $8, $9::VARCHAR, $10::JSONB) ` +
		`ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding, document = excluded.document, cmetadata = excluded.cmetadata`
	coll := "5b1d9a3c-6a0e-4b59-9d45-1f2a3b4c5d6e"
	p := textParams(
		"doc-1", coll, "[0.1,0.2]", "hello", `{"user_id": "alice", "source": "a.txt"}`,
		"doc-2", coll, "[0.3,0.4]", "world", `{"source": "b.txt"}`,
	)
	p.Types = []uint32{1043, 2950, 0, 1043, 3802, 1043, 2950, 0, 1043, 3802}
	const tbl = "public.langchain_pg_embedding"
	assert.Equal(t, []Tag{write(tbl, "doc-1", "alice"), {Table: tbl, Op: OpWrite, ID: "doc-2"}}, tagsOf(t, r, sql, p))
}

// LangChain.js PGVectorStore.addVectors: node-postgres, 500-row chunks of
// $n text parameters, no id column (the database generates it).
func TestClients_LangchainJSMultiRowInsert(t *testing.T) {
	r, err := NewRules([]Rule{{Table: "langchain_pg_embedding", ID: "id", Subjects: []Subject{{Column: "metadata", Path: []string{"user_id"}}}}})
	require.NoError(t, err)
	const rows = 500
	var sb strings.Builder
	sb.WriteString(`INSERT INTO "langchain_pg_embedding" (content, metadata, embedding) VALUES `)
	var vals []string
	for i := 0; i < rows; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "($%d, $%d, $%d)", 3*i+1, 3*i+2, 3*i+3)
		meta, _ := json.Marshal(map[string]any{"user_id": fmt.Sprintf("user-%d", i%7), "loc": map[string]int{"line": i}})
		vals = append(vals, fmt.Sprintf("chunk %d", i), string(meta), "[0.1,0.2,0.3]")
	}
	tags := tagsOf(t, r, sb.String(), textParams(vals...))
	require.Len(t, tags, rows)
	for i, tg := range tags {
		assert.Equal(t, write("public.langchain_pg_embedding", "", fmt.Sprintf("user-%d", i%7)), tg)
	}
}

// mem0's pgvector store: cursor.executemany("INSERT INTO mem0 (id, vector,
// payload) VALUES (%s, %s, %s)", …) with psycopg 3, which sends $1..$3 per
// execution (pipeline mode) and Json payloads typed json.
func TestClients_Mem0ExecuteMany(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO mem0 (id, vector, payload) VALUES ($1, $2, $3)`, []string{"public"})
	require.NoError(t, err)
	require.Len(t, as, 1)
	for i, user := range []string{"alice", "bob"} {
		p := textParams(fmt.Sprintf("9c1e0a4e-0000-4000-8000-00000000000%d", i), "[0.5,0.5]",
			fmt.Sprintf(`{"data": "likes tea", "user_id": %q, "agent_id": "agent-1", "hash": "x"}`, user))
		p.Types = []uint32{0, 0, 114}
		tags, err := as[0].Tags(p)
		require.NoError(t, err)
		assert.Equal(t, []Tag{write("public.mem0", fmt.Sprintf("9c1e0a4e-0000-4000-8000-00000000000%d", i), user)}, tags)
	}
}

// Supabase vecs: psycopg 2 through SQLAlchemy, so literals inline in a
// simple-protocol query, upserting with ON CONFLICT … excluded.
func TestClients_SupabaseVecsInlineUpsert(t *testing.T) {
	r := testRules(t)
	sql := `INSERT INTO vecs.docs (id, vec, metadata) VALUES ('a', '[1,2,3]', '{"user_id": "u1"}'::jsonb), ` +
		`('b', '[4,5,6]', '{"user_id": "u2", "year": 2024}'::jsonb) ON CONFLICT (id) DO UPDATE SET vec = EXCLUDED.vec, metadata = EXCLUDED.metadata`
	assert.Equal(t, []Tag{write("vecs.docs", "a", "u1"), write("vecs.docs", "b", "u2")}, tagsOf(t, r, sql, Params{}))

	as, err := r.Analyze(`DELETE FROM vecs.docs WHERE vecs.docs.id IN ('a', 'b') RETURNING vecs.docs.id`, nil)
	require.NoError(t, err)
	require.Len(t, as, 1)
	tags, err := as[0].Tags(Params{})
	require.NoError(t, err)
	assert.Equal(t, []Tag{{Table: "vecs.docs", Op: OpDelete, ID: "a"}, {Table: "vecs.docs", Op: OpDelete, ID: "b"}}, tags)
}

// LlamaIndex PGVectorStore: data_<name>(id bigserial, text, metadata_ json,
// node_id varchar, embedding vector); the bigserial id is not in the list.
func TestClients_LlamaIndexInsert(t *testing.T) {
	sql := `INSERT INTO public.data_docs (text, metadata_, node_id, embedding) VALUES ` +
		`($1::VARCHAR, $2::JSON, $3::VARCHAR, $4), ($5::VARCHAR, $6::JSON, $7::VARCHAR, $8)`
	p := textParams(
		"hello", `{"user_id": "u9", "_node_type": "TextNode", "doc_id": "d1"}`, "node-1", "[0.1]",
		"bye", `{"user_id": "u8"}`, "node-2", "[0.2]")
	assert.Equal(t, []Tag{write("public.data_docs", "", "u9"), write("public.data_docs", "", "u8")}, tagsOf(t, testRules(t), sql, p))

	// With node_id configured as the record id, the ids are known.
	r, err := NewRules([]Rule{{Table: "data_docs", ID: "node_id", Subjects: []Subject{{Column: "metadata_", Path: []string{"user_id"}}}}})
	require.NoError(t, err)
	assert.Equal(t, []Tag{write("public.data_docs", "node-1", "u9"), write("public.data_docs", "node-2", "u8")}, tagsOf(t, r, sql, p))
}

// langchain-postgres' newer PGVectorStore: one upsert per row into a table
// with langchain_id uuid and langchain_metadata json.
func TestClients_LangchainPGVectorStoreUpsert(t *testing.T) {
	r, err := NewRules([]Rule{{Table: "public.my_vs", ID: "langchain_id", Subjects: []Subject{{Column: "langchain_metadata", Path: []string{"user_id"}}}}})
	require.NoError(t, err)
	sql := `INSERT INTO "public"."my_vs"("langchain_id", "content", "embedding", "langchain_metadata") VALUES ($1, $2, $3, $4) ` +
		`ON CONFLICT ("langchain_id") DO UPDATE SET "content" = EXCLUDED."content", "embedding" = EXCLUDED."embedding", "langchain_metadata" = EXCLUDED."langchain_metadata";`
	p := Params{Values: [][]byte{uuidBytes, []byte("c"), []byte("[1]"), []byte(`{"user_id":"u"}`)}, Formats: []int16{1, 0, 0, 0}, Types: []uint32{2950}}
	assert.Equal(t, []Tag{write("public.my_vs", uuidText, "u")}, tagsOf(t, r, sql, p))
}
