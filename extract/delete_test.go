package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDelete_TagsIDs(t *testing.T) {
	r := testRules(t)
	del := func(id string) Tag { return Tag{Table: "public.docs", Op: OpDelete, ID: id} }
	cases := []struct {
		name string
		sql  string
		p    Params
		want []Tag
	}{
		{"id = param", `DELETE FROM docs WHERE id = $1`, textParams("a"), []Tag{del("a")}},
		{"id IN", `DELETE FROM docs WHERE id IN ('a', 'b') RETURNING id`, Params{}, []Tag{del("a"), del("b")}},
		{"id = ANY text array", `DELETE FROM docs WHERE id = ANY($1::text[])`, textParams(`{"a","b"}`), []Tag{del("a"), del("b")}},
		{"id = ANY empty array", `DELETE FROM docs WHERE id = ANY($1)`, textParams(`{}`), []Tag{}},
		{"by subject", `DELETE FROM docs WHERE user_id = $1`, textParams("u"), nil},
		{"everything", `DELETE FROM docs`, Params{}, nil},
		{"by subquery", `DELETE FROM docs WHERE id IN (SELECT id FROM old)`, Params{}, nil},
		{"NOT IN", `DELETE FROM docs WHERE id NOT IN ('a')`, Params{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, tagsOf(t, r, c.sql, c.p))
		})
	}
}
