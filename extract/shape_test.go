package extract

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// requireSameAsFull checks that the analysis by shape of sql is the full
// analysis of sql: the same analyses, the same tags.
func requireSameAsFull(t testing.TB, c *Shapes, sql string, paths [][]string) {
	t.Helper()
	want, wantErr := c.rules.AnalyzeUnder(sql, paths)
	got, err := c.AnalyzeUnder(sql, paths)
	if wantErr != nil {
		require.Error(t, err, "%q", sql)
		return
	}
	require.NoError(t, err, "%q", sql)
	require.Equal(t, want, got, "%q", sql)
	for i := range want {
		wantTags, wantErr := want[i].Tags(Params{})
		gotTags, err := got[i].Tags(Params{})
		require.Equal(t, wantErr, err, "%q", sql)
		require.Equal(t, wantTags, gotTags, "%q", sql)
	}
}

func TestShapes_AnInsertOfAKnownShapeGetsItsOwnValues(t *testing.T) {
	c := testRules(t).Shapes()
	vector := "[" + strings.Repeat("0.25,", 1535) + "0.5]"
	texts := []string{
		`INSERT INTO docs (id, embedding, user_id, cmetadata) VALUES ('a', '` + vector + `', 'ann', '{"user_id": "ann"}')`,
		`INSERT INTO docs (id, embedding, user_id, cmetadata) VALUES ('b', '[1,2]', 'bob', '{"user_id": "carol"}')`,
		`INSERT INTO docs (id, embedding, user_id, cmetadata) VALUES ('c', '', '', '{}')`,
	}
	for _, sql := range texts {
		requireSameAsFull(t, c, sql, nil)
	}
	require.Len(t, c.known, 1, "the three texts are one shape")
	require.True(t, c.known[shapeKey(mustShape(t, texts[0]), nil)].reusable)

	as, err := c.AnalyzeUnder(texts[1], nil)
	require.NoError(t, err)
	tags, err := as[0].Tags(Params{})
	require.NoError(t, err)
	require.Len(t, tags, 1)
	require.Equal(t, "b", tags[0].ID)
	require.ElementsMatch(t, []string{"bob", "carol"}, tags[0].Subjects)

	// Casts, several rows and an upsert keep the shape reusable.
	cast := `INSERT INTO vecs.docs (id, vec, metadata) VALUES ('d1', '[1]'::vector, '{"user_id": "u1"}'::jsonb), ('d2', '[2]', '{"user_id": "u2"}'::text::jsonb) ON CONFLICT (id) DO UPDATE SET metadata = EXCLUDED.metadata`
	requireSameAsFull(t, c, cast, nil)
	requireSameAsFull(t, c, strings.NewReplacer("u1", "v1", "u2", "v2").Replace(cast), nil)
	require.True(t, c.known[shapeKey(mustShape(t, cast), nil)].reusable)
}

func TestShapes_SearchPathsArePartOfTheShape(t *testing.T) {
	c := testRules(t).Shapes()
	sql := `INSERT INTO docs (id, metadata) VALUES ('a', '{"user_id": "ann"}')`
	requireSameAsFull(t, c, sql, [][]string{{"public"}})
	requireSameAsFull(t, c, sql, [][]string{{"vecs"}})
	requireSameAsFull(t, c, sql, [][]string{{"vecs"}, {"public"}})
	require.Len(t, c.known, 3)
}

// Where a literal's content decides what a statement does, texts of one
// shape differ: each is analysed in full.
func TestShapes_LiteralsThatDecideAreNeverReused(t *testing.T) {
	c := testRules(t).Shapes()
	pairs := [][2]string{
		// A DO body is a literal: the second one writes a configured table.
		{`DO 'BEGIN RAISE NOTICE ''x''; END'`, `DO 'BEGIN DELETE FROM mem0; END'`},
		{`do language plpgsql 'begin perform 1; end'`, `do language plpgsql 'begin update items set user_id = null; end'`},
		// A literal outside VALUES.
		{`INSERT INTO docs (id, user_id) VALUES ('a', 'ann') ON CONFLICT (id) DO UPDATE SET user_id = 'x'`,
			`INSERT INTO docs (id, user_id) VALUES ('b', 'bob') ON CONFLICT (id) DO UPDATE SET user_id = 'y'`},
		{`INSERT INTO docs (id, user_id) SELECT 'a', 'ann'`, `INSERT INTO docs (id, user_id) SELECT 'b', 'bob'`},
		{`INSERT INTO docs (id, user_id) VALUES ('a', set_config('search_path', 'vecs', true))`,
			`INSERT INTO docs (id, user_id) VALUES ('a', set_config('search_path', 'public', true))`},
		{`INSERT INTO docs (id, user_id) VALUES ('a', 'ann') RETURNING 'x'`, `INSERT INTO docs (id, user_id) VALUES ('b', 'bob') RETURNING 'y'`},
	}
	for _, p := range pairs {
		for _, sql := range p {
			requireSameAsFull(t, c, sql, nil)
		}
	}
	for key, known := range c.known {
		require.False(t, known.reusable, "shape %q", key)
	}
}

// Literals whose value is not their content stay in the shape as they are.
func TestShapes_OnlyPlainLiteralsAreTakenOut(t *testing.T) {
	for _, c := range []struct{ sql, shape string }{
		{`VALUES ('a', E'b', N'c', U&'d', B'1', X'f', date'2020-01-01', 'it''s', 'back\slash')`,
			`VALUES ('lethe_elided_0', E'b', N'c', U&'d', B'1', X'f', date'2020-01-01', 'it''s', 'back\slash')`},
		{`SELECT 'a'||'b'`, `SELECT 'lethe_elided_0'||'lethe_elided_1'`},
	} {
		require.Equal(t, c.shape, mustShape(t, c.sql), c.sql)
	}
	for _, sql := range []string{
		`SELECT 1`,                    // no literal
		`SELECT 'lethe_elided_0'`,     // the prefix itself
		"SELECT 'a'\n'b'",             // a continued literal
		`SELECT 'a' /* 'b' */`,        // a block comment
		`SELECT 'unterminated`,        // the server reports it
		`SELECT $tag$ 'x' $tag$, 'y'`, // fine: dollar quotes are stepped over
	} {
		_, _, ok := shapeOf(sql)
		require.Equal(t, strings.HasPrefix(sql, `SELECT $tag$`), ok, sql)
	}
}

func TestShapes_AreBounded(t *testing.T) {
	c := testRules(t).Shapes()
	for i := 0; i < maxShapes+10; i++ {
		sql := `INSERT INTO docs (id, user_id) VALUES ('a', 'ann')` + strings.Repeat(" ", i)
		requireSameAsFull(t, c, sql, nil)
	}
	require.LessOrEqual(t, len(c.known), maxShapes)
}

func mustShape(t testing.TB, sql string) string {
	t.Helper()
	shape, _, ok := shapeOf(sql)
	require.True(t, ok, sql)
	return shape
}

// FuzzShapes analyses a text, then the same text with every plain
// literal's content replaced, by shape and in full: the two must agree
// for both, whether the second reused the first's analysis or not.
func FuzzShapes(f *testing.F) {
	f.Add(`INSERT INTO docs (id, user_id, cmetadata) VALUES ('a', 'ann', '{"user_id": "x"}')`, `b`)
	f.Add(`DO 'BEGIN RAISE NOTICE ''x''; END'`, `BEGIN DELETE FROM mem0; END`)
	f.Add(`INSERT INTO vecs.docs (id, metadata) VALUES ('a', '{}'::jsonb), ('b', '{"user_id": 1}')`, `{"user_id": "u"}`)
	f.Add(`INSERT INTO docs (id, user_id) VALUES ('a', 'b') ON CONFLICT (id) DO UPDATE SET user_id = 'c'`, `d`)
	f.Add(`INSERT INTO messages (id, body) VALUES ('m', 'add_doc(1)')`, `x`)
	r := writerRules(f) // functions and triggers that write configured tables
	f.Fuzz(func(t *testing.T, sql, content string) {
		c := r.Shapes()
		paths := [][]string{{"vecs", "public"}}
		requireSameAsFull(t, c, sql, paths)
		shape, literals, ok := shapeOf(sql)
		if !ok {
			return
		}
		content = strings.NewReplacer(`'`, ``, `\`, ``).Replace(content)
		other := shape
		for i := len(literals) - 1; i >= 0; i-- { // lethe_elided_1 before lethe_elided_10
			other = strings.ReplaceAll(other, placeholderPrefix+strconv.Itoa(i), content)
		}
		requireSameAsFull(t, c, other, paths)
	})
}

// The tags of a Query live on (in the ledger's queue, in the proxy's
// memory of what it read) long after the Query: their values must not be
// slices of its text, which would keep the whole 15 KB text alive with
// each tag.
func TestShapes_TagsDoNotHoldTheText(t *testing.T) {
	c := testRules(t).Shapes()
	vector := "[" + strings.Repeat("0.25,", 1535) + "0.5]"
	for _, sql := range []string{
		`INSERT INTO docs (id, embedding, user_id) VALUES ('a', '` + vector + `', 'ann')`, // analysed by shape
		`INSERT INTO docs (id, embedding, user_id) VALUES ('b', '` + vector + `', 'bob')`, // the shape reused
		`INSERT INTO docs (id, user_id) VALUES ('` + vector + `', 'carol') RETURNING 'x'`, // elided, in full
	} {
		as, err := c.AnalyzeUnder(sql, nil)
		require.NoError(t, err)
		require.Len(t, as, 1)
		tags, err := as[0].Tags(Params{})
		require.NoError(t, err)
		require.Len(t, tags, 1)
		for _, s := range append([]string{tags[0].ID}, tags[0].Subjects...) {
			require.False(t, within(s, sql), "a %d-byte value is a slice of the statement's text", len(s))
		}
	}
}

// within reports whether s's bytes lie inside text's.
func within(s, text string) bool {
	if len(s) == 0 {
		return false
	}
	p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(text)))
	return p >= start && p < start+uintptr(len(text))
}
