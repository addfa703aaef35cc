package pcextract

import (
	"testing"

	"github.com/lethe-privacy/lethe/extract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUpsertRecordsREST(t *testing.T) {
	cases := []struct {
		name string
		any  bool
		ns   string
		body string
		want []extract.Tag
	}{
		{"_id and id, blank lines, CRLF", false, "",
			"{\"_id\":\"a\",\"chunk_text\":\"hi\",\"user_id\":\"alice\"}\r\n\n{\"id\":\"b\",\"user_id\":42}\n",
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}},
				{Table: "docs/__default__", Op: extract.OpWrite, ID: "b", Subjects: []string{"42"}}}},
		{"no final newline", false, "__default__",
			`{"_id":"a","user_id":"alice"}`,
			[]extract.Tag{{Table: "docs/__default__", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"list subject, two fields, record without subject", false, "team",
			"{\"_id\":\"a\",\"owner\":\"olga\",\"members\":[\"x\",\"y\"]}\n{\"_id\":\"b\",\"text\":\"t\"}",
			[]extract.Tag{{Table: "docs/team", Op: extract.OpWrite, ID: "a", Subjects: []string{"olga", "x", "y"}},
				{Table: "docs/team", Op: extract.OpWrite, ID: "b"}}},
		{"uncovered namespace", false, "other", `{"_id":"a","user_id":"alice"}`, nil},
		{"* covers", true, "other", `{"_id":"a","user_id":"alice"}`,
			[]extract.Tag{{Table: "docs/other", Op: extract.OpWrite, ID: "a", Subjects: []string{"alice"}}}},
		{"empty body", false, "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := pcRules(t)
			if c.any {
				r = pcRulesAny(t)
			}
			tags, err := r.UpsertRecordsREST(c.ns, []byte(c.body))
			require.NoError(t, err)
			assert.Equal(t, c.want, tags)
		})
	}
}

func TestUpsertRecordsREST_MalformedLinesAreErrorsWithoutValues(t *testing.T) {
	const secret = "s3cret-subject"
	cases := []struct {
		name, body, says string
	}{
		{"bad JSON", "{\"_id\":\"a\"}\n{\"_id\":\"s3cret-subject\"", "line 2 is not valid JSON"},
		{"not an object", "[\"s3cret-subject\"]", "line 1 is not a JSON object"},
		{"no id", "{\"_id\":\"a\"}\n\n{\"user_id\":\"s3cret-subject\"}", "line 3 has no"},
		{"id not a string", "{\"_id\":[\"s3cret-subject\"]}", "line 1 has no"},
		{"both _id and id", "{\"_id\":\"a\",\"id\":\"s3cret-subject\"}", "line 1 has both"},
		{"_id twice", "{\"_id\":\"a\",\"_id\":\"s3cret-subject\"}", `line 1: "_id" appears more than once`},
		{"subject field twice", "{\"_id\":\"a\",\"user_id\":\"s3cret-subject\",\"user_id\":\"b\"}", `line 1: subject field "user_id"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tags, err := pcRules(t).UpsertRecordsREST("", []byte(c.body))
			require.Error(t, err)
			assert.Nil(t, tags)
			assert.Contains(t, err.Error(), c.says)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}
