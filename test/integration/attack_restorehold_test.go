//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lethe-privacy/lethe/ledger"
)

// TestAttack_RestoreHold_NoWriteReachesAHeldTable: while a restore holds
// the configured table's writes (LT006), no spelling of a write gets a
// row into it or changes one: a statement prepared by protocol and a
// transaction begun before the hold (an SQL PREPARE of a write is
// refused in strict mode anyway), COPY, a view, a writer function, DO, MERGE, a multi-statement simple query, an UPDATE,
// and an UPDATE or INSERT hidden in a DELETE's WITH. Each is tried on a
// connection opened before the hold; the table is read directly after
// each, and the connection must stay usable.
func TestAttack_RestoreHold_NoWriteReachesAHeldTable(t *testing.T) {
	for _, mode := range []string{"strict", "permissive"} {
		t.Run(mode, func(t *testing.T) { attackRestoreHold(t, mode) })
	}
}

// attackRestoreHold is the attack in capture.mode mode: in permissive
// mode the writes strict mode refuses as unattributable (a function, DO,
// MERGE, a writable WITH) would be relayed and recorded, so only the hold
// stands between them and the table.
func attackRestoreHold(t *testing.T, mode string) {
	db := loadTestDB(t)
	const table = "attack_hold_docs"
	pgxTable(t, db, table, "id text PRIMARY KEY, user_id text, embedding vector(3)")
	direct := connect(t, db.URL(db.Addr(), ""))
	ctx := ctxT(t)
	for _, ddl := range []string{
		`CREATE OR REPLACE VIEW attack_hold_view AS SELECT id, user_id, embedding FROM attack_hold_docs`,
		`CREATE OR REPLACE FUNCTION attack_hold_fn(i text) RETURNS void LANGUAGE sql AS $$ INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES (i, 'mallory', '[1,2,3]') $$`,
		`INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ('kept', 'bob', '[1,2,3]')`,
	} {
		_, err := direct.Exec(ctx, ddl)
		require.NoError(t, err, ddl)
	}
	t.Cleanup(func() {
		c := connect(t, db.URL(db.Addr(), ""))
		c.Exec(context.Background(), `DROP VIEW IF EXISTS attack_hold_view; DROP FUNCTION IF EXISTS attack_hold_fn(text)`)
	})

	f := newForgetBinary(t, db, `    - {table: public.attack_hold_docs, id: id, subjects: [user_id]}
  recovery_interval: 1s
  mode: `+mode)
	f.start(t)
	app := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	// Made before the hold: a protocol-level prepared statement and an
	// open transaction.
	_, err := app.Prepare(ctx, "attack_hold_ins", `INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ($1, 'mallory', '[1,2,3]')`)
	require.NoError(t, err)
	// (An SQL PREPARE of a write is refused in strict mode, hold or not.)
	inTx := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	_, err = inTx.Exec(ctx, `BEGIN`)
	require.NoError(t, err)
	_, err = inTx.Exec(ctx, `SELECT 1`)
	require.NoError(t, err)

	// A restore waits for replay: the running proxy reads the mark at its
	// next check and holds the store.
	l, err := ledger.Open(ctx, ledger.Location{SQLite: filepath.Join(f.dir, "ledger.db")}, ledger.Options{})
	require.NoError(t, err)
	key := fmt.Sprintf("postgres://%s:%s/%s", db.Host, db.Port, db.DB)
	seen, ok, err := l.StoreSeen(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	seen.Restore = "attack: a restore the test declared"
	require.NoError(t, l.RecordStoreSeen(ctx, key, seen))
	require.NoError(t, l.Close())
	probe := connect(t, db.URL(f.proxyAddr, "sslmode=disable"))
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		_, err = probe.Exec(ctx, `INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ($1, 'probe', '[1,2,3]')`, fmt.Sprintf("probe-%d", i))
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "the hold began: %v", err)
	require.Equal(t, "LT006", pgErr.Code)
	_, err = direct.Exec(ctx, `DELETE FROM attack_hold_docs WHERE user_id = 'probe'`)
	require.NoError(t, err)

	state := func() string {
		rows, err := direct.Query(ctx, `SELECT id || ':' || coalesce(user_id, '') FROM attack_hold_docs ORDER BY id`)
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return strings.Join(got, ",")
	}
	const before = "kept:bob"
	require.Equal(t, before, state())

	attempts := []struct {
		name string
		conn *pgx.Conn
		run  func(conn *pgx.Conn) error
	}{
		{"extended protocol, parameters", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ($1, $2, '[1,2,3]')`, "h-ext", "mallory")
			return err
		}},
		{"statement prepared before the hold", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, "attack_hold_ins", "h-prepared")
			return err
		}},
		{"transaction begun before the hold", inTx, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ('h-tx', 'mallory', '[1,2,3]')`)
			if err == nil {
				_, err = c.Exec(ctx, `COMMIT`)
			} else {
				c.Exec(ctx, `ROLLBACK`)
			}
			return err
		}},
		{"multi-statement simple query", app, func(c *pgx.Conn) error {
			return c.PgConn().Exec(ctx, `SELECT 1; INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ('h-multi', 'mallory', '[1,2,3]'); SELECT 2`).Close()
		}},
		{"COPY FROM STDIN", app, func(c *pgx.Conn) error {
			_, err := c.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", "user_id"}, pgx.CopyFromRows([][]any{{"h-copy", "mallory"}}))
			return err
		}},
		{"COPY FROM STDIN, text, simple protocol", app, func(c *pgx.Conn) error {
			_, err := c.PgConn().CopyFrom(ctx, strings.NewReader("h-copytext\tmallory\n"), `COPY attack_hold_docs (id, user_id) FROM STDIN`)
			return err
		}},
		{"through a view", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `INSERT INTO attack_hold_view (id, user_id, embedding) VALUES ('h-view', 'mallory', '[1,2,3]')`)
			return err
		}},
		{"through a writer function", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `SELECT attack_hold_fn('h-fn')`)
			return err
		}},
		{"DO block", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `DO $$ BEGIN INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ('h-do', 'mallory', '[1,2,3]'); END $$`)
			return err
		}},
		{"MERGE", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `MERGE INTO attack_hold_docs d USING (VALUES ('h-merge', 'mallory')) v(id, u) ON d.id = v.id
				WHEN NOT MATCHED THEN INSERT (id, user_id, embedding) VALUES (v.id, v.u, '[1,2,3]')`)
			return err
		}},
		{"UPDATE of the subject column", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `UPDATE attack_hold_docs SET user_id = 'mallory' WHERE id = 'kept'`)
			return err
		}},
		{"UPDATE inside a DELETE's WITH", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `WITH u AS (UPDATE attack_hold_docs SET user_id = 'mallory' WHERE id = 'kept' RETURNING id)
				DELETE FROM attack_hold_docs WHERE id IN (SELECT id FROM u) AND false`)
			return err
		}},
		{"INSERT inside a DELETE's WITH", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `WITH i AS (INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ('h-cte', 'mallory', '[1,2,3]') RETURNING id)
				DELETE FROM attack_hold_docs WHERE id = 'nothing' AND EXISTS (SELECT 1 FROM i)`)
			return err
		}},
		{"INSERT ON CONFLICT DO UPDATE", app, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `INSERT INTO attack_hold_docs (id, user_id, embedding) VALUES ('kept', 'mallory', '[1,2,3]') ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id`)
			return err
		}},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			err := a.run(a.conn)
			assert.Error(t, err, "the write was relayed while the store is held")
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) {
				t.Logf("refused %s: %s", pgErr.Code, pgErr.Message)
			}
			assert.Equal(t, before, state(), "the held table changed")
			_, err = a.conn.Exec(ctx, `SELECT 1`)
			assert.NoError(t, err, "the connection stays usable")
		})
	}

	// Deletes pass by design, and a DELETE is what it says.
	_, err = app.Exec(ctx, `DELETE FROM attack_hold_docs WHERE id = 'kept'`)
	require.NoError(t, err, "a delete passes the hold")
	assert.Equal(t, "", state())
}
