package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJSONSubjects_FollowsPaths(t *testing.T) {
	cases := []struct {
		doc  string
		path []string
		want []string
	}{
		{`{"user_id": "u1"}`, []string{"user_id"}, []string{"u1"}},
		{` { "a" : 1 , "user_id" : "u1" } `, []string{"user_id"}, []string{"u1"}},
		{`{"user_id": 42}`, []string{"user_id"}, []string{"42"}},
		{`{"user_id": -1.5e3}`, []string{"user_id"}, []string{"-1.5e3"}},
		{`{"user_id": true}`, []string{"user_id"}, []string{"true"}},
		{`{"user_id": null}`, []string{"user_id"}, nil},
		{`{"user_id": {"id": "x"}}`, []string{"user_id"}, nil},
		{`{"other": "x"}`, []string{"user_id"}, nil},
		{`["user_id"]`, []string{"user_id"}, nil},
		{`"user_id"`, []string{"user_id"}, nil},
		{`{"user": {"id": "deep", "x": [1, {"id": "no"}]}}`, []string{"user", "id"}, []string{"deep"}},
		{`{"p": ["a", 2, null, {"x": 1}, ["n"], false]}`, []string{"p"}, []string{"a", "2", "false"}},
		{`{"p": []}`, []string{"p"}, nil},
		{`{"user_id": "first", "user_id": "last"}`, []string{"user_id"}, []string{"last"}},
		{`{"us\u0065r_id": "esc\"aped \u00e9"}`, []string{"user_id"}, []string{`esc"aped é`}},
		{`{"a": "}\"{", "user_id": "u"}`, []string{"user_id"}, []string{"u"}},
		{`{"a": {"b": "]"}, "user_id": "u"}`, []string{"user_id"}, []string{"u"}},
	}
	for _, c := range cases {
		got, err := jsonSubjects(c.doc, c.path, nil)
		assert.NoError(t, err, c.doc)
		assert.Equal(t, c.want, got, c.doc)
	}
}

func TestJSONSubjects_RejectsInvalidJSON(t *testing.T) {
	for _, doc := range []string{``, `{`, `{"a": }`, `{"a": 1} x`, `{'a': 1}`} {
		_, err := jsonSubjects(doc, []string{"a"}, nil)
		assert.Error(t, err, doc)
	}
}
