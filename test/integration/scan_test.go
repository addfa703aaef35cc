//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/connector"
	"github.com/lethe-privacy/lethe/extract"
	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// scanRules compiles one rule per table for the scanner tests.
func scanRules(t *testing.T, rules ...extract.Rule) *extract.Rules {
	t.Helper()
	r, err := extract.NewRules(rules)
	require.NoError(t, err)
	return r
}

func subjectRule(t *testing.T, table, id string, exprs ...string) extract.Rule {
	t.Helper()
	r := extract.Rule{Table: table, ID: id}
	for _, e := range exprs {
		s, err := extract.ParseSubject(e)
		require.NoError(t, err)
		r.Subjects = append(r.Subjects, s)
	}
	return r
}

// The pgvector scanner reads every row, its partitions' included, in
// batches of at most 1,000, with the id and the subjects as the WAL
// follower reads them: uuid ids as text, a JSON array's elements, NULLs
// naming nobody, text that is no JSON under a path unreadable. A table
// that does not exist is ErrAbsent.
func TestScanner_ReadsEveryRowInBoundedBatches(t *testing.T) {
	db := loadTestDB(t)
	ctx := ctxT(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	exec := func(sql string) {
		t.Helper()
		_, err := direct.Exec(ctx, sql)
		require.NoError(t, err)
	}
	exec(`DROP TABLE IF EXISTS scan_parts, scan_uuid, scan_missing`)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE IF EXISTS scan_parts, scan_uuid`) })
	exec(`CREATE TABLE scan_parts (id bigint, who text, embedding vector(3)) PARTITION BY RANGE (id)`)
	exec(`CREATE TABLE scan_parts_a PARTITION OF scan_parts FOR VALUES FROM (0) TO (1500)`)
	exec(`CREATE TABLE scan_parts_b PARTITION OF scan_parts FOR VALUES FROM (1500) TO (10000)`)
	exec(`INSERT INTO scan_parts SELECT g, 'user-' || (g % 10), '[1,2,3]' FROM generate_series(0, 2499) g`)
	exec(`CREATE TABLE scan_uuid (id uuid, meta jsonb, note text)`)
	exec(`INSERT INTO scan_uuid VALUES
		('00000000-0000-0000-0000-000000000001', '{"who": ["ann", "ben"]}', '{"by": "cat"}'),
		('00000000-0000-0000-0000-000000000002', '{"who": null}', NULL),
		('00000000-0000-0000-0000-000000000003', '{}', 'not json'),
		(NULL, '{"who": "dan"}', NULL)`)

	rules := scanRules(t,
		subjectRule(t, "public.scan_parts", "id", "who"),
		subjectRule(t, "public.scan_uuid", "id", "meta->'who'", "note->>'by'"),
		subjectRule(t, "public.scan_missing", "id", "who"))
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	scan := func(table string) (map[string]connector.Record, []int, error) {
		st, ok := rules.Stored(table)
		require.True(t, ok)
		got := map[string]connector.Record{}
		var sizes []int
		err := store.Scanner(st).Scan(ctx, func(batch []connector.Record) error {
			sizes = append(sizes, len(batch))
			for _, r := range batch {
				got[fmt.Sprint(len(got))+"|"+r.ID] = r
			}
			return nil
		})
		return got, sizes, err
	}

	parts, sizes, err := scan("public.scan_parts")
	require.NoError(t, err)
	assert.Len(t, parts, 2500, "the partitions' rows, through the parent")
	assert.Equal(t, []int{1000, 1000, 500}, sizes)
	for _, r := range parts {
		require.Equal(t, "public.scan_parts", r.Table)
		require.Len(t, r.Subjects, 1)
	}

	rows, _, err := scan("public.scan_uuid")
	require.NoError(t, err)
	byID := map[string]connector.Record{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	require.Len(t, byID, 4)
	assert.ElementsMatch(t, []string{"ann", "ben", "cat"}, byID["00000000-0000-0000-0000-000000000001"].Subjects)
	assert.Empty(t, byID["00000000-0000-0000-0000-000000000002"].Subjects, "JSON null and SQL NULL name nobody")
	assert.False(t, byID["00000000-0000-0000-0000-000000000002"].Unreadable)
	assert.True(t, byID["00000000-0000-0000-0000-000000000003"].Unreadable, "a path into text that is no JSON")
	assert.Equal(t, []string{"dan"}, byID[""].Subjects, "a NULL id is read as none")

	_, _, err = scan("public.scan_missing")
	assert.True(t, errors.Is(err, connector.ErrAbsent), "%v", err)
}
