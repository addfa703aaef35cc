package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpdate_TagsNewSubjects(t *testing.T) {
	r := testRules(t)
	const docs = "public.docs"
	cases := []struct {
		name string
		sql  string
		p    Params
		want []Tag
	}{
		{"by id param", `UPDATE docs SET user_id = $2 WHERE id = $1`, textParams("a", "u2"),
			[]Tag{write(docs, "a", "u2")}},
		{"by id literal reversed", `UPDATE docs SET user_id = 'u2' WHERE 'a' = id`, Params{},
			[]Tag{write(docs, "a", "u2")}},
		{"json column", `UPDATE docs SET cmetadata = $1::jsonb WHERE id = $2`, textParams(`{"user_id":"u3"}`, "a"),
			[]Tag{write(docs, "a", "u3")}},
		{"id IN list", `UPDATE docs SET user_id = 'u' WHERE id IN ('a', $1, NULL)`, textParams("b"),
			[]Tag{write(docs, "a", "u"), write(docs, "b", "u")}},
		{"id = ANY text array param", `UPDATE docs SET user_id = 'u' WHERE id = ANY($1)`, textParams(`{a,"b c"}`),
			[]Tag{write(docs, "a", "u"), write(docs, "b c", "u")}},
		{"id = ANY ARRAY[]", `UPDATE docs SET user_id = 'u' WHERE id = ANY(ARRAY[$1, 'z'])`, textParams("y"),
			[]Tag{write(docs, "y", "u"), write(docs, "z", "u")}},
		{"id = ANY array literal", `UPDATE docs SET user_id = 'u' WHERE id = ANY('{p,q}'::text[])`, Params{},
			[]Tag{write(docs, "p", "u"), write(docs, "q", "u")}},
		{"AND with other predicates", `UPDATE docs d SET user_id = 'u' WHERE d.collection = 'c' AND d.id = 'a'`, Params{},
			[]Tag{write(docs, "a", "u")}},
		{"OR of ids", `UPDATE docs SET user_id = 'u' WHERE id = 'a' OR docs.id = 'b'`, Params{},
			[]Tag{write(docs, "a", "u"), write(docs, "b", "u")}},
		{"WHERE not on id", `UPDATE docs SET user_id = $1 WHERE user_id = $2`, textParams("new", "old"),
			[]Tag{write(docs, "", "new")}},
		{"OR with a non-id branch", `UPDATE docs SET user_id = 'u' WHERE id = 'a' OR body = 'x'`, Params{},
			[]Tag{write(docs, "", "u")}},
		{"no WHERE", `UPDATE docs SET user_id = 'u'`, Params{},
			[]Tag{write(docs, "", "u")}},
		{"set to NULL", `UPDATE docs SET user_id = NULL WHERE id = 'a'`, Params{},
			[]Tag{{Table: docs, Op: OpWrite, ID: "a"}}},
		{"not touching subjects", `UPDATE docs SET embedding = $1 WHERE id = $2`, textParams("[1,2]", "a"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, tagsOf(t, r, c.sql, c.p))
		})
	}
}

func TestUpdate_UnattributedShapes(t *testing.T) {
	r := testRules(t)
	cases := map[string]string{
		"jsonb merge":       `UPDATE docs SET cmetadata = cmetadata || $1 WHERE id = $2`,
		"jsonb_set":         `UPDATE docs SET cmetadata = jsonb_set(cmetadata, '{user_id}', $1) WHERE id = $2`,
		"multi assignment":  `UPDATE docs SET (user_id, body) = ($1, $2) WHERE id = 'a'`,
		"changes id":        `UPDATE docs SET id = $1 WHERE id = $2`,
		"subject from FROM": `UPDATE docs SET user_id = s.user_id FROM staging s WHERE docs.id = s.id`,
	}
	for name, sql := range cases {
		t.Run(name, func(t *testing.T) {
			tags := tagsOf(t, r, sql, textParams("a", "b"))
			require.Len(t, tags, 1)
			assert.Equal(t, OpUnattributed, tags[0].Op)
			assert.NotEmpty(t, tags[0].Reason)
		})
	}
}
