package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func uncoveredRules(t *testing.T) *Rules {
	u := []UncoveredRelation{
		{Schema: "public", Name: "notes", Table: "public.notes"},
		{Schema: "app", Name: "docs", Table: "app.docs"},
		{Schema: "public", Name: "events", Table: "public.events"},
		{Schema: "public", Name: "events_2026", Table: "public.events"},
	}
	SortUncovered(u)
	return testRules(t).WithWriters(Writers{Uncovered: u})
}

func TestUncoveredWrites_InsertsAndUpdatesAreUncovered(t *testing.T) {
	r := uncoveredRules(t)
	tests := []struct {
		sql   string
		path  []string
		table string
	}{
		{`INSERT INTO notes (id, body) VALUES (1, 'x')`, nil, "public.notes"},
		{`insert into public.NOTES values (1)`, nil, "public.notes"},
		{`UPDATE notes SET body = 'y'`, nil, "public.notes"},
		{`INSERT INTO notes VALUES (1) ON CONFLICT DO NOTHING`, nil, "public.notes"},
		{`MERGE INTO notes n USING src s ON n.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id)`, nil, "public.notes"},
		{`COPY notes FROM STDIN`, nil, "public.notes"},
		{`WITH w AS (INSERT INTO notes VALUES (1) RETURNING id) SELECT * FROM w`, nil, "public.notes"},
		{`EXPLAIN ANALYZE INSERT INTO notes VALUES (1)`, nil, "public.notes"},
		{`INSERT INTO docs VALUES (1)`, []string{"app", "public"}, "app.docs"},
		{`INSERT INTO events_2026 VALUES (1)`, nil, "public.events"},
	}
	for _, tc := range tests {
		require.True(t, r.Mentions(tc.sql), tc.sql)
		as, err := r.Analyze(tc.sql, tc.path)
		require.NoError(t, err, tc.sql)
		// A configured table of the same name further down the path may
		// be analysed too (Lethe does not know every relation); the
		// uncovered write is refused all the same.
		var uncovered []*Analysis
		for _, a := range as {
			if a.Kind == KindUncovered {
				uncovered = append(uncovered, a)
			}
		}
		require.Len(t, uncovered, 1, tc.sql)
		assert.Equal(t, tc.table, uncovered[0].Table, tc.sql)
		tags, err := uncovered[0].Tags(Params{})
		assert.NoError(t, err)
		assert.Empty(t, tags, tc.sql)
	}
}

func TestUncoveredWrites_ReadsDeletesAndOtherTablesPass(t *testing.T) {
	r := uncoveredRules(t)
	tests := []struct {
		sql  string
		path []string
	}{
		{`SELECT * FROM notes`, nil},
		{`COPY notes TO STDOUT`, nil},
		{`DELETE FROM notes WHERE id = 1`, nil},
		{`TRUNCATE notes`, nil},
		{`EXPLAIN INSERT INTO notes VALUES (1)`, nil},
		{`INSERT INTO other.notes VALUES (1)`, nil},
		// public.docs is configured and comes first on the path.
		{`INSERT INTO docs (id, user_id) VALUES ('a', 'b')`, []string{"public", "app"}},
		{`INSERT INTO docs (id, user_id) VALUES ('a', 'b')`, nil},
		// A name only "$user" could resolve is passed over.
		{`INSERT INTO docs VALUES (1)`, []string{"$user"}},
	}
	for _, tc := range tests {
		as, err := r.Analyze(tc.sql, tc.path)
		require.NoError(t, err, tc.sql)
		for _, a := range as {
			assert.NotEqual(t, KindUncovered, a.Kind, tc.sql)
		}
	}
}

func TestWithWriters_UncoveredChangeIsAChange(t *testing.T) {
	a := Writers{Uncovered: []UncoveredRelation{{Schema: "public", Name: "notes", Table: "public.notes"}}}
	assert.False(t, Writers{}.Equal(a))
	assert.True(t, a.Equal(Writers{Uncovered: []UncoveredRelation{{Schema: "public", Name: "notes", Table: "public.notes"}}}))
	// Without uncovered relations, nothing more is mentioned.
	assert.False(t, testRules(t).WithWriters(Writers{}).Mentions(`INSERT INTO memos VALUES (1)`))
	assert.True(t, testRules(t).WithWriters(Writers{Uncovered: []UncoveredRelation{{Schema: "public", Name: "memos", Table: "public.memos"}}}).Mentions(`INSERT INTO memos VALUES (1)`))
}
