package pgstore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// How each kind of retain_by column is read as a time; the text forms are
// checked against a real server by the integration suite (sweep_test.go).
func TestAgeSQL_ReadsEachColumnTypeAsATimeOrRefusesIt(t *testing.T) {
	for _, tc := range []struct {
		by   Subject
		typ  string
		want string // a part of the expression; "" when refused
		err  string
	}{
		{by: Subject{Column: "created_at"}, typ: "timestamptz", want: `"created_at"`},
		{by: Subject{Column: "created_at"}, typ: "timestamp", want: `("created_at" AT TIME ZONE 'UTC')`},
		{by: Subject{Column: "day"}, typ: "date", want: `("day"::timestamp AT TIME ZONE 'UTC')`},
		{by: Subject{Column: "ts"}, typ: "int8", want: `to_timestamp("ts"::float8)`},
		{by: Subject{Column: "ts"}, typ: "text", want: `"ts"::text ~ '^-?[0-9]{1,11}`},
		{by: Subject{Column: "cmetadata", Path: []string{"meta", "created_at"}}, typ: "jsonb", want: `("cmetadata"->'meta'->>'created_at')::timestamptz`},
		{by: Subject{Column: "created_at", Path: []string{"x"}}, typ: "text", err: "has a JSON path but column \"created_at\" is text"},
		{by: Subject{Column: "embedding"}, typ: "vector", err: "column \"embedding\" is vector; want timestamptz"},
	} {
		got, err := ageSQL(tc.by, tc.typ)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.typ)
			continue
		}
		require.NoError(t, err, tc.typ)
		assert.True(t, strings.Contains(got, tc.want), "%s %s: %s", tc.by, tc.typ, got)
	}
}
