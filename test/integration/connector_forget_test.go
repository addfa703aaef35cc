//go:build integration

package integration

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/proxy/pgwire/pgstore"
)

// TestConnector_ForgetMatchesEverySubjectShape deletes one subject from a
// table that keeps subjects in a text column, a JSONB path (scalar and
// array) and a JSON path, and checks that exactly that subject's rows go:
// also the row with a generated id the ledger never saw, and the row the
// ledger tagged whose subject was stripped; not the row the ledger tagged
// that now belongs to someone else.
func TestConnector_ForgetMatchesEverySubjectShape(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	const tbl = `"for""get; schema"."docs; DROP TABLE x --"`
	_, err := direct.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS "for""get; schema"`)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP SCHEMA "for""get; schema" CASCADE`) })
	_, err = direct.Exec(ctx, `CREATE TABLE `+tbl+` (
		id bigserial PRIMARY KEY, owner varchar(64), meta jsonb, extra json, embedding vector(3))`)
	require.NoError(t, err)
	subject := `al'ice"); DROP TABLE y; --`
	_, err = direct.Exec(ctx, `INSERT INTO `+tbl+` (id, owner, meta, extra, embedding) VALUES
		(1, $1, NULL, NULL, '[1,2,3]'),                                    -- column
		(2, NULL, jsonb_build_object('user', jsonb_build_object('id', $1::text)), NULL, '[1,2,3]'), -- jsonb scalar path
		(3, NULL, jsonb_build_object('user', jsonb_build_object('id', jsonb_build_array('bob', $1::text))), NULL, '[1,2,3]'), -- array
		(4, NULL, NULL, json_build_object('who', $1::text), '[1,2,3]'),    -- json (not jsonb)
		(5, 'bob', NULL, NULL, '[1,2,3]'),                                 -- someone else
		(6, NULL, NULL, NULL, '[1,2,3]'),                                  -- tagged by the ledger, subject stripped
		(7, 'carol', NULL, NULL, '[1,2,3]'),                               -- tagged by the ledger, now carol's
		(8, NULL, '{"user":{"id":"al''ice"}}', NULL, '[1,2,3]'),           -- a prefix of the subject
		(9, NULL, '{"user":{"id":[7, 42, true]}}', NULL, '[1,2,3]')        -- numbers and booleans in an array`, subject)
	require.NoError(t, err)

	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	table := pgstore.Table{Schema: `for"get; schema`, Name: `docs; DROP TABLE x --`, ID: "id", Subjects: []pgstore.Subject{
		{Column: "owner"}, {Column: "meta", Path: []string{"user", "id"}}, {Column: "extra", Path: []string{"who"}},
	}}
	m, err := store.MatchFor(ctx, table)
	require.NoError(t, err)
	ledgerIDs := []string{"1", "6", "7", "' OR 1=1 --"}
	for subj, want := range map[string][]string{"42": {"9"}, "true": {"9"}, "4": {}, "7": {"9"}} {
		got, err := store.Matching(ctx, m, subj, nil)
		require.NoError(t, err)
		require.Equal(t, want, got, "subject %s", subj)
	}

	matching, err := store.Matching(ctx, m, subject, ledgerIDs)
	require.NoError(t, err)
	sort.Strings(matching)
	require.Equal(t, []string{"1", "2", "3", "4", "6"}, matching)

	var journaled []string
	deleted, err := store.Delete(ctx, m, subject, ledgerIDs, 2, func(ids []string) error { // batches of 2: three rounds
		journaled = append(journaled, ids...)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(deleted)
	require.Equal(t, matching, deleted)
	sort.Strings(journaled)
	require.Equal(t, matching, journaled, "every id is handed to beforeCommit")
	residual, err := store.Residual(ctx, m, subject, ledgerIDs)
	require.NoError(t, err)
	require.Zero(t, residual)
	require.NoError(t, store.Vacuum(ctx, table))

	var left []string
	rows, err := direct.Query(ctx, `SELECT id::text FROM `+tbl+` ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	require.Equal(t, []string{"5", "7", "8", "9"}, left, "other subjects' rows stay")
}

func TestConnector_MatchForExplainsBadRules(t *testing.T) {
	db := loadTestDB(t)
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	_, err := direct.Exec(ctx, `CREATE TABLE IF NOT EXISTS public.forget_rules_t (id text PRIMARY KEY, owner text)`)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Exec(context.Background(), `DROP TABLE public.forget_rules_t`) })
	store, err := pgstore.Open(ctx, db.DSN(db.Addr(), "sslmode=disable"))
	require.NoError(t, err)
	defer store.Close()
	for name, tc := range map[string]struct {
		table pgstore.Table
		want  string
	}{
		"missing table":      {pgstore.Table{Schema: "public", Name: "nope", ID: "id", Subjects: []pgstore.Subject{{Column: "owner"}}}, "does not exist"},
		"missing id column":  {pgstore.Table{Schema: "public", Name: "forget_rules_t", ID: "uid", Subjects: []pgstore.Subject{{Column: "owner"}}}, `no id column "uid"`},
		"missing subject":    {pgstore.Table{Schema: "public", Name: "forget_rules_t", ID: "id", Subjects: []pgstore.Subject{{Column: "user_id"}}}, `no subject column "user_id"`},
		"path into non-json": {pgstore.Table{Schema: "public", Name: "forget_rules_t", ID: "id", Subjects: []pgstore.Subject{{Column: "owner", Path: []string{"id"}}}}, "not json/jsonb"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := store.MatchFor(ctx, tc.table)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
