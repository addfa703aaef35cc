package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInsert_TagsEachValuesRow(t *testing.T) {
	r := testRules(t)
	const docs = "public.docs"
	cases := []struct {
		name string
		sql  string
		p    Params
		want []Tag
	}{
		{"inline string literals", `INSERT INTO docs (id, user_id) VALUES ('d1', 'alice')`, Params{},
			[]Tag{write(docs, "d1", "alice")}},
		{"number literals", `INSERT INTO docs (id, user_id) VALUES (7, 42)`, Params{},
			[]Tag{write(docs, "7", "42")}},
		{"multi-row", `INSERT INTO docs (id, user_id) VALUES ('a', 'u1'), ('b', 'u2')`, Params{},
			[]Tag{write(docs, "a", "u1"), write(docs, "b", "u2")}},
		{"column order follows the list", `INSERT INTO docs (user_id, body, id) VALUES ('u1', 'x', 'a')`, Params{},
			[]Tag{write(docs, "a", "u1")}},
		{"jsonb literal", `INSERT INTO docs (id, cmetadata) VALUES ('a', '{"user_id": "u1", "x": [1]}'::jsonb)`, Params{},
			[]Tag{write(docs, "a", "u1")}},
		{"uuid literal id", `INSERT INTO docs (id, user_id) VALUES ('0f8fad5b-d9cb-469f-a165-70867728950e'::uuid, 'u')`, Params{},
			[]Tag{write(docs, "0f8fad5b-d9cb-469f-a165-70867728950e", "u")}},
		{"E string", `INSERT INTO docs (id, user_id) VALUES (E'a\'b', E'\x41l\tice')`, Params{},
			[]Tag{write(docs, "a'b", "Al\tice")}},
		{"NULL subject", `INSERT INTO docs (id, user_id) VALUES ('a', NULL)`, Params{},
			[]Tag{{Table: docs, Op: OpWrite, ID: "a"}}},
		{"params", `INSERT INTO docs (id, user_id, cmetadata) VALUES ($1, $2, $3), ($4, $5, $6)`,
			textParams("a", "u1", `{"user_id":"u2"}`, "b", "\x00NULL", `{"other":1}`),
			[]Tag{write(docs, "a", "u1", "u2"), {Table: docs, Op: OpWrite, ID: "b"}}},
		{"missing id column is database-generated", `INSERT INTO docs (user_id) VALUES ($1)`, textParams("u1"),
			[]Tag{write(docs, "", "u1")}},
		{"id from a function is database-generated", `INSERT INTO docs (id, user_id) VALUES (gen_random_uuid(), 'u1')`, Params{},
			[]Tag{write(docs, "", "u1")}},
		{"DEFAULT id", `INSERT INTO docs (id, user_id) VALUES (DEFAULT, 'u1')`, Params{},
			[]Tag{write(docs, "", "u1")}},
		{"DEFAULT VALUES", `INSERT INTO docs DEFAULT VALUES`, Params{},
			[]Tag{{Table: docs, Op: OpWrite}}},
		{"row with no subject still tagged", `INSERT INTO docs (id, body) VALUES ('a', 'x')`, Params{},
			[]Tag{{Table: docs, Op: OpWrite, ID: "a"}}},
		{"JSON number subject", `INSERT INTO docs (id, cmetadata) VALUES ('a', '{"user_id": 12345678901234567890}')`, Params{},
			[]Tag{write(docs, "a", "12345678901234567890")}},
		{"JSON null subject", `INSERT INTO docs (id, cmetadata) VALUES ('a', '{"user_id": null}')`, Params{},
			[]Tag{{Table: docs, Op: OpWrite, ID: "a"}}},
		{"JSON array subject", `INSERT INTO conversations (id, payload) VALUES ('c', $1)`, textParams(`{"participants":["alice","bob",3]}`),
			[]Tag{write("public.conversations", "c", "alice", "bob", "3")}},
		{"RETURNING does not matter", `INSERT INTO docs (id, user_id) VALUES ('a', 'u') RETURNING id`, Params{},
			[]Tag{write(docs, "a", "u")}},
		{"ON CONFLICT DO NOTHING tags as insert", `INSERT INTO docs (id, user_id) VALUES ('a', 'u') ON CONFLICT DO NOTHING`, Params{},
			[]Tag{write(docs, "a", "u")}},
		{"ON CONFLICT DO UPDATE from EXCLUDED tags the new values",
			`INSERT INTO docs (id, user_id, cmetadata) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, cmetadata = excluded.cmetadata, body = 'x'`,
			textParams("a", "new", `{"user_id":"new2"}`),
			[]Tag{write(docs, "a", "new", "new2")}},
		{"ON CONFLICT DO UPDATE of other columns", `INSERT INTO docs (id, user_id) VALUES ('a', 'u') ON CONFLICT (id) DO UPDATE SET body = now()`, Params{},
			[]Tag{write(docs, "a", "u")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, tagsOf(t, r, c.sql, c.p))
		})
	}
}

func TestInsert_UnattributedShapes(t *testing.T) {
	r := testRules(t)
	cases := map[string]string{
		"ON CONFLICT sets subject from something else": `INSERT INTO docs (id, cmetadata) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET cmetadata = docs.cmetadata || EXCLUDED.cmetadata`,
		"ON CONFLICT sets subject from other column":   `INSERT INTO docs (id, user_id) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.body`,
		"ON CONFLICT changes id":                       `INSERT INTO docs (id, user_id) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET id = 'x'`,
		"INSERT SELECT":                                `INSERT INTO docs (id, user_id) SELECT id, user_id FROM staging`,
		"INSERT VALUES with CTE":                       `INSERT INTO docs (id, user_id) WITH v AS (SELECT 1) VALUES ('a', 'b')`,
		"no column list":                               `INSERT INTO docs VALUES ('a', 'u')`,
		"subject from expression":                      `INSERT INTO docs (id, cmetadata) VALUES ('a', jsonb_build_object('user_id', $1))`,
		"subject field assignment":                     `INSERT INTO docs (id, user_id[1]) VALUES ('a', 'u')`,
		"UNION":                                        `INSERT INTO docs (id, user_id) VALUES ('a','b') UNION VALUES ('c','d')`,
	}
	for name, sql := range cases {
		t.Run(name, func(t *testing.T) {
			tags := tagsOf(t, r, sql, textParams("a", "b"))
			require.Len(t, tags, 1)
			assert.Equal(t, OpUnattributed, tags[0].Op)
			assert.Equal(t, "public.docs", tags[0].Table)
			assert.NotEmpty(t, tags[0].Reason)
		})
	}
}

func TestInsert_BadSubjectJSONIsAnError(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id, cmetadata) VALUES ($1, $2)`, nil)
	require.NoError(t, err)
	_, err = as[0].Tags(textParams("a", `{"user_id": `))
	assert.Error(t, err)
}

func TestInsert_MissingParamIsAnError(t *testing.T) {
	r := testRules(t)
	as, err := r.Analyze(`INSERT INTO docs (id, user_id) VALUES ($1, $2)`, nil)
	require.NoError(t, err)
	_, err = as[0].Tags(textParams("a"))
	assert.ErrorIs(t, err, ErrParamMissing)
}
