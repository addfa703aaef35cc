package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// analyzeBothWays returns the tags of sql through Analyze (which elides)
// and through a full parse of the original text.
func analyzeBothWays(t testing.TB, r *Rules, sql string) (fast, full [][]Tag, fastErr, fullErr error) {
	collect := func(as []*Analysis, err error) ([][]Tag, error) {
		if err != nil {
			return nil, err
		}
		var out [][]Tag
		for _, a := range as {
			tags, err := a.Tags(Params{})
			if err != nil {
				return nil, err
			}
			out = append(out, tags)
		}
		return out, nil
	}
	fast, fastErr = collect(r.Analyze(sql, nil))
	full, fullErr = collect(r.analyze(sql, nil))
	return fast, full, fastErr, fullErr
}

func vectorLiteral(dims, seed int) string {
	parts := make([]string, dims)
	for i := range parts {
		parts[i] = fmt.Sprintf("%.6f", float64((i*seed)%1000)/1000-0.5)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestElide_InlineVectorsAreTaggedAsByAFullParse(t *testing.T) {
	r := testRules(t)
	var rows []string
	for i := range 100 {
		rows = append(rows, fmt.Sprintf(`('id-%d', '%s', '{"user_id": "u%d", "note": "it''s \"quoted\" $x$"}'::jsonb)`, i, vectorLiteral(1536, i+1), i%7))
	}
	sql := "/* no */ INSERT INTO vecs.docs (id, vec, metadata) VALUES " + strings.Join(rows, ", ") +
		" ON CONFLICT (id) DO UPDATE SET vec = EXCLUDED.vec, metadata = EXCLUDED.metadata"
	// With a block comment the scan declines and the full parse is used.
	_, _, ok := elide(sql)
	assert.False(t, ok)
	sql = strings.TrimPrefix(sql, "/* no */ ")
	short, elided, ok := elide(sql)
	require.True(t, ok)
	assert.Len(t, elided, 100, "every vector literal is elided")
	assert.Less(t, len(short), len(sql)/10)
	fast, full, fastErr, fullErr := analyzeBothWays(t, r, sql)
	require.NoError(t, fullErr)
	require.NoError(t, fastErr)
	assert.Equal(t, full, fast)
	require.Len(t, fast, 1)
	assert.Equal(t, write("vecs.docs", "id-3", "u3"), fast[0][3])
}

func TestElide_KeepsEverythingARuleMightRead(t *testing.T) {
	defer func(a, b int) { elideMinText, elideMinLiteral = a, b }(elideMinText, elideMinLiteral)
	elideMinText, elideMinLiteral = 0, 4
	r := testRules(t)
	for _, sql := range []string{
		// A long numeric id and a numeric-array subject column are restored.
		`INSERT INTO items (id, user_id) VALUES ('1234567890', '[1,2,3,4,5]')`,
		// Quotes, E-strings with escapes and dollar quotes around look-alikes.
		`INSERT INTO items (id, user_id) VALUES (E'a\'[1,2,3,4]', $q$'[5,6,7,8]'$q$)`,
		`INSERT INTO "items" (id, user_id) VALUES ('x''[1,2,3,4]', 'bob') -- '[9,9,9,9]'` + "\n",
		`UPDATE items SET user_id = 'ann' WHERE id = '12345678'`,
		`DELETE FROM items WHERE id IN ('11111111', '22222222')`,
		`INSERT INTO items (id, user_id) VALUES ('lethe_elided_0', '1')`,
	} {
		fast, full, fastErr, fullErr := analyzeBothWays(t, r, sql)
		assert.Equal(t, fullErr, fastErr, sql)
		assert.Equal(t, full, fast, sql)
	}
}

func FuzzElide(f *testing.F) {
	for _, s := range []string{
		`INSERT INTO items (id, user_id) VALUES ('1', '[1,2,3,4,5,6]')`,
		`INSERT INTO docs (id, user_id, cmetadata) VALUES ($$[1,2]$$, E'\\'[3,4,5,6]', '{"user_id":"x"}')`,
		`INSERT INTO items (id, user_id) VALUES ('[1,2,3,4]', 'a'), ("x", '[5,6,7,8]')`,
	} {
		f.Add(s)
	}
	r := testRules(f)
	f.Fuzz(func(t *testing.T, sql string) {
		defer func(a, b int) { elideMinText, elideMinLiteral = a, b }(elideMinText, elideMinLiteral)
		elideMinText, elideMinLiteral = 0, 4
		fast, full, fastErr, fullErr := analyzeBothWays(t, r, sql)
		if fullErr != nil {
			return // the server rejects it too; Analyze may still answer from the short text
		}
		if fastErr != nil {
			t.Fatalf("full parse succeeded but Analyze failed: %v", fastErr)
		}
		if fmt.Sprint(fast) != fmt.Sprint(full) {
			t.Fatalf("tags differ:\nfast %v\nfull %v", fast, full)
		}
	})
}
