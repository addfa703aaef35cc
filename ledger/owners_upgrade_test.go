package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// Schema version 4 adds owners. A version-3 ledger holding a confirmed
// intent (1) and pending ones (2, 3) is upgraded: the pending intents have
// no owner and are orphans, Pending still lists them, and recovery can
// resolve them.

func checkOwnerlessOrphans(t *testing.T, l Ledger, want ...IntentID) {
	ctx := context.Background()
	require.Equal(t, []IntentID{2, 3}, pendingIDs(t, l))
	orphans, err := l.PendingOrphans(ctx)
	require.NoError(t, err)
	var ids []IntentID
	for _, in := range orphans {
		ids = append(ids, in.ID)
	}
	require.Equal(t, want, ids)
	require.Equal(t, []Entry{entry("public.docs", "a", "alice"), entry("public.docs", "b", "bob")}, orphans[0].Entries)

	own := intend(t, l, entry("public.docs", "z", "carol"))
	require.Greater(t, own, IntentID(3))
	require.NotContains(t, orphanIDs(t, l), own)
	for _, id := range want {
		require.NoError(t, l.Confirm(ctx, id))
	}
	require.Equal(t, []key{{"public.docs", "a", StateConfirmed, 2}}, bySubject(t, l, "alice"))
}

func TestSQLite_UpgradeToOwnersMakesPendingIntentsOrphans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	require.NoError(t, migrateSQLiteTo(db, 3))
	_, err = db.Exec(`INSERT INTO intents (id, created_at, state, entries) VALUES (1, 1000, 'confirmed', NULL), (2, 2000, 'pending', ?), (3, ?, 'pending', ?)`,
		encodeEntries([]Entry{entry("public.docs", "a", "alice"), entry("public.docs", "b", "bob")}),
		time.Now().UnixMicro(), encodeEntries([]Entry{entry("public.notes", "c", "dave")}))
	require.NoError(t, err)
	require.NoError(t, db.Close())

	l, err := OpenSQLite(path, Options{})
	require.NoError(t, err)
	defer l.Close()
	// A SQLite ledger serves one proxy, upgraded when it restarts: every
	// intent from before is its previous run's.
	checkOwnerlessOrphans(t, l, 2, 3)
}

func TestPostgres_UpgradeToOwnersMakesPendingIntentsOrphans(t *testing.T) {
	conn := testPGConnString(t)
	schema := freshPGSchema(t, conn)
	s := pgx.Identifier{schema}.Sanitize()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, conn)
	require.NoError(t, err)
	defer pool.Close()
	old := &Postgres{pool: pool, schema: s}
	require.NoError(t, old.migrateTo(ctx, schema, 3))
	// Intent 2 was left by a crash long ago; intent 3 is in flight on a
	// proxy of the old build at the moment of the upgrade.
	_, err = pool.Exec(ctx, fmt.Sprintf(`
		INSERT INTO %[1]s.intents (id, created_at, state, e_store, e_tbl, e_record_id, e_subject, e_unattributed) OVERRIDING SYSTEM VALUE VALUES
			(1, now() - interval '2 hours', 'confirmed', NULL, NULL, NULL, NULL, NULL),
			(2, now() - interval '1 hour', 'pending', '{postgres,postgres}', '{public.docs,public.docs}', '{a,b}', ARRAY[$1::bytea, $2::bytea], '{f,f}'),
			(3, now(), 'pending', '{postgres}', '{public.notes}', '{c}', ARRAY[$3::bytea], '{f}')`, s),
		hashBytes("alice"), hashBytes("bob"), hashBytes("dave"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%[1]s.intents', 'id'), 3)`, s))
	require.NoError(t, err)

	l, err := OpenPostgres(ctx, conn, Options{Schema: schema, LeaseDuration: 2 * time.Second, RenewInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	defer l.Close()

	// A proxy of the old build is refused new intents (it fails closed),
	// but can still resolve the ones it has in flight.
	_, err = pool.Exec(ctx, `INSERT INTO `+s+`.intents (created_at, state) VALUES (now(), 'pending')`)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%v", err)
	require.Equal(t, "intents_owned", pgErr.ConstraintName)

	// Owner-less intents are orphans once older than a lease, which lets
	// the old build finish the transactions it had in flight.
	require.Equal(t, []IntentID{2}, orphanIDs(t, l))
	require.Eventually(t, func() bool { return len(orphanIDs(t, l)) == 2 }, 10*time.Second, 50*time.Millisecond)
	checkOwnerlessOrphans(t, l, 2, 3)
}
