package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// Schema version 1 kept pending entries as rows of intent_entries; version
// 2 keeps them on the intents row. These tests make a version-1 ledger
// holding a confirmed intent (1) and two pending ones (2, with three
// entries, and 3, with one), open it with this build and check that the
// pending intents are still listed, found, counted, confirmable and
// droppable.

// v1Rows is the version-1 data, as (intent, seq, table, record id, subject).
var v1Rows = []struct {
	intent, seq int
	table, id   string
	subject     string
}{
	{2, 0, "public.docs", "a", "alice"},
	{2, 1, "public.docs", "b", "bob"},
	{2, 2, "public.notes", "c", "alice"},
	{3, 0, "public.docs", "a", "alice"},
}

func checkUpgradedPending(t *testing.T, l Ledger) {
	ctx := context.Background()
	p, err := l.Pending(ctx)
	require.NoError(t, err)
	require.Len(t, p, 2)
	require.Equal(t, IntentID(2), p[0].ID)
	require.Equal(t, []Entry{entry("public.docs", "a", "alice"), entry("public.docs", "b", "bob"), entry("public.notes", "c", "alice")}, p[0].Entries)
	require.Equal(t, []Entry{entry("public.docs", "a", "alice")}, p[1].Entries)
	require.Equal(t, []key{
		{"public.docs", "a", StateConfirmed, 1},
		{"public.docs", "a", StatePending, 2},
		{"public.docs", "a", StatePending, 3},
		{"public.notes", "c", StatePending, 2},
	}, bySubject(t, l, "alice"))
	counts, err := l.Counts(ctx)
	require.NoError(t, err)
	require.Equal(t, []TableCount{
		{StorePostgres, "public.docs", StateConfirmed, 1},
		{StorePostgres, "public.docs", StatePending, 3},
		{StorePostgres, "public.notes", StatePending, 1},
	}, counts)

	require.NoError(t, l.Confirm(ctx, 2))
	require.NoError(t, l.Drop(ctx, 3))
	require.Empty(t, pendingIDs(t, l))
	require.Equal(t, []key{{"public.docs", "a", StateConfirmed, 2}, {"public.notes", "c", StateConfirmed, 2}}, bySubject(t, l, "alice"))
	require.Equal(t, []key{{"public.docs", "b", StateConfirmed, 2}}, bySubject(t, l, "bob"))
	next := intend(t, l, entry("public.docs", "z", "carol"))
	require.Greater(t, next, IntentID(3))
}

func TestSQLite_UpgradeKeepsPendingIntents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	require.NoError(t, err)
	_, err = db.Exec(sqliteMigrations[0]+`
		CREATE TABLE schema_version (version INTEGER NOT NULL);
		INSERT INTO schema_version VALUES (1);
		INSERT INTO intents (id, created_at, state) VALUES (1, 1000, 'confirmed'), (2, 2000, 'pending'), (3, 3000, 'pending');
		INSERT INTO entries VALUES ('postgres', 'public.docs', 'a', ?, 0, 'confirmed', 1, 1500);`,
		hashBytes("alice"))
	require.NoError(t, err)
	for _, r := range v1Rows {
		_, err := db.Exec(`INSERT INTO intent_entries VALUES (?, ?, 'postgres', ?, ?, ?, 0)`, r.intent, r.seq, r.table, r.id, hashBytes(r.subject))
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	var tables int
	require.NoError(t, l.readers.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'intent_entries'`).Scan(&tables))
	require.Zero(t, tables, "intent_entries is converted and dropped")
	checkUpgradedPending(t, l)
}

func TestPostgres_UpgradeKeepsPendingIntents(t *testing.T) {
	conn := testPGConnString(t)
	schema := freshPGSchema(t, conn)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, conn)
	require.NoError(t, err)
	defer c.Close(ctx)
	s := pgx.Identifier{schema}.Sanitize()
	_, err = c.Exec(ctx, `CREATE SCHEMA `+s+`; `+fmt.Sprintf(pgMigrations[0], s)+fmt.Sprintf(`
		CREATE TABLE %[1]s.schema_version (version integer NOT NULL);
		INSERT INTO %[1]s.schema_version VALUES (1);
		INSERT INTO %[1]s.intents (id, created_at, state) OVERRIDING SYSTEM VALUE
			VALUES (1, now(), 'confirmed'), (2, now(), 'pending'), (3, now(), 'pending');
		SELECT setval(pg_get_serial_sequence('%[1]s.intents', 'id'), 3);`, s))
	require.NoError(t, err)
	_, err = c.Exec(ctx, `INSERT INTO `+s+`.entries VALUES ('postgres', 'public.docs', 'a', $1, false, 'confirmed', 1, now())`, hashBytes("alice"))
	require.NoError(t, err)
	for _, r := range v1Rows {
		_, err := c.Exec(ctx, `INSERT INTO `+s+`.intent_entries VALUES ($1, $2, 'postgres', $3, $4, $5, false)`, r.intent, r.seq, r.table, r.id, hashBytes(r.subject))
		require.NoError(t, err)
	}

	l, err := OpenPostgres(ctx, conn, Options{Schema: schema})
	require.NoError(t, err)
	defer l.Close()
	var gone bool
	require.NoError(t, c.QueryRow(ctx, `SELECT to_regclass($1) IS NULL`, schema+".intent_entries").Scan(&gone))
	require.True(t, gone, "intent_entries is converted and dropped")
	checkUpgradedPending(t, l)
}

func TestEntriesBlobRoundTrip(t *testing.T) {
	for _, in := range [][]Entry{
		nil,
		{entry("public.docs", "1", "alice")},
		{entry("public.docs", "1", "alice"), entry("public.docs", "", "bob"), {Store: StorePinecone, Table: "idx/ns", Unattributed: true}, entry("public.docs", "2", "alice")},
	} {
		out, err := decodeEntries(encodeEntries(in))
		require.NoError(t, err)
		require.Equal(t, in, out)
	}
	b := encodeEntries([]Entry{entry("public.docs", "1", "alice")})
	for i := range len(b) - 1 {
		_, err := decodeEntries(b[:i+1])
		require.Error(t, err, "truncated at %d", i+1)
	}
}

func hashBytes(subject string) []byte {
	h := testHasher.Hash(subject)
	return h[:]
}
