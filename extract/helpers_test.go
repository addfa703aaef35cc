package extract

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// testRules is a rule set covering the shapes real clients use.
func testRules(t testing.TB) *Rules {
	t.Helper()
	sub := func(e string) Subject {
		s, err := ParseSubject(e)
		require.NoError(t, err)
		return s
	}
	r, err := NewRules([]Rule{
		{Table: "public.docs", ID: "id", Subjects: []Subject{sub("user_id"), sub("cmetadata->>'user_id'")}},
		{Table: "public.langchain_pg_embedding", ID: "id", Subjects: []Subject{sub("cmetadata->>'user_id'")}},
		{Table: "mem0", ID: "id", Subjects: []Subject{sub("payload->>'user_id'")}},
		{Table: "vecs.docs", ID: "id", Subjects: []Subject{sub("metadata->>'user_id'")}},
		{Table: "public.data_docs", ID: "id", Subjects: []Subject{sub("metadata_->>'user_id'")}},
		{Table: "public.conversations", ID: "id", Subjects: []Subject{sub("payload->'participants'")}},
		{Table: "public.items", ID: "id", Subjects: []Subject{sub("user_id")}},
		{Table: `"App"."Notes"`, ID: "id", Subjects: []Subject{sub("owner")}},
	})
	require.NoError(t, err)
	return r
}

// textParams binds values as text parameters; "\x00NULL" stands for NULL.
func textParams(vals ...string) Params {
	p := Params{Values: make([][]byte, len(vals))}
	for i, v := range vals {
		if v != "\x00NULL" {
			p.Values[i] = []byte(v)
		}
	}
	return p
}

// tagsOf analyzes sql, requires exactly one Analysis and returns its tags.
func tagsOf(t *testing.T, r *Rules, sql string, p Params) []Tag {
	t.Helper()
	as, err := r.Analyze(sql, nil)
	require.NoError(t, err)
	require.Len(t, as, 1, "analyses of %q", sql)
	tags, err := as[0].Tags(p)
	require.NoError(t, err)
	return tags
}

func write(table, id string, subjects ...string) Tag {
	return Tag{Table: table, Op: OpWrite, ID: id, Subjects: subjects}
}
