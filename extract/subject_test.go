package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSubject_AcceptsColumnsAndJSONPaths(t *testing.T) {
	cases := []struct {
		expr string
		want Subject
	}{
		{"user_id", Subject{Column: "user_id"}},
		{"User_ID", Subject{Column: "user_id"}},
		{`"User_ID"`, Subject{Column: "User_ID"}},
		{"cmetadata->>'user_id'", Subject{Column: "cmetadata", Path: []string{"user_id"}}},
		{"payload->'participants'", Subject{Column: "payload", Path: []string{"participants"}}},
		{"metadata_->'user'->>'id'", Subject{Column: "metadata_", Path: []string{"user", "id"}}},
		{"m -> 'it''s'", Subject{Column: "m", Path: []string{"it's"}}},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := ParseSubject(c.expr)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestParseSubject_RejectsOtherExpressions(t *testing.T) {
	for _, expr := range []string{"", "a, b", "lower(user_id)", "m->0", "m#>>'{a}'", "t.user_id", "1", "m->>'a' FROM x", "m->>$1"} {
		t.Run(expr, func(t *testing.T) {
			_, err := ParseSubject(expr)
			assert.Error(t, err)
		})
	}
}

func TestSubject_StringRoundTrips(t *testing.T) {
	for _, expr := range []string{"user_id", `"User"->'a'->>'b'`, "m->>'it''s'"} {
		s, err := ParseSubject(expr)
		require.NoError(t, err)
		again, err := ParseSubject(s.String())
		require.NoError(t, err)
		assert.Equal(t, s, again)
	}
}

func TestNewRules_RejectsBadRules(t *testing.T) {
	s := Subject{Column: "user_id"}
	cases := map[string][]Rule{
		"no id":         {{Table: "docs", Subjects: []Subject{s}}},
		"no subject":    {{Table: "docs", ID: "id"}},
		"duplicate":     {{Table: "docs", ID: "id", Subjects: []Subject{s}}, {Table: "public.docs", ID: "id", Subjects: []Subject{s}}},
		"three parts":   {{Table: "a.b.c", ID: "id", Subjects: []Subject{s}}},
		"subject is id": {{Table: "docs", ID: "user_id", Subjects: []Subject{s}}},
		"bad quoting":   {{Table: `"docs`, ID: "id", Subjects: []Subject{s}}},
	}
	for name, rules := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewRules(rules)
			assert.Error(t, err)
		})
	}
}
